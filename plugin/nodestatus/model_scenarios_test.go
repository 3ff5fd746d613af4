package nodestatus_test

// The model's runs (model_test.go): a bounded search, the named
// interleavings, and the proof that its checker catches one run reported
// on two nodes.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
)

// Bounded search: many seeds, a few hundred random steps each with
// faults (agent and sidecar restarts, the controller down, failed
// Workflow updates, lost write responses, a re-created TaskSet), then
// the faults stop and everything must complete.
func TestModelSearch(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 50
	}
	for seed := range int64(seeds) {
		m := newModel(t, seed, 4, false)
		m.c4 = seed%2 == 1
		for range 300 {
			m.step(true)
		}
		m.settle(60)
		m.complete()
	}
}

// The interleavings the design names, replayed step by step.
func TestModelScenarios(t *testing.T) {
	// finishTwin runs the first twin to its final result in Argo.
	finishTwin := func(m *model, id string) {
		m.reconcile(id)
		p := m.pods[podName(id, m.incarnation(), 1)]
		m.drive(p)
		m.drive(p)
		m.reconcile(id)
		m.writer.Flush(context.Background())
	}
	t.Run("stale re-ask after an agent restart while a finished twin is listed", func(t *testing.T) {
		m := newModel(t, 1, 2, false)
		a, b := m.nodes[0], m.nodes[1]
		m.reconcile(b)
		finishTwin(m, a) // a's entry is final and still listed (the controller has not operated)
		m.asked = map[string]bool{}
		m.agentAsk(a) // the restarted agent asks about the finished twin
		m.agentAsk(b)
		m.operate(false, false)
		m.settle(30)
		m.complete()
	})
	t.Run("controller down while twins finish", func(t *testing.T) {
		m := newModel(t, 2, 3, false)
		m.ctrlUp = false
		for _, id := range m.nodes {
			m.reconcile(id)
		}
		for _, p := range m.sortedPods() {
			m.drive(p)
			m.drive(p)
		}
		for _, id := range m.nodes {
			m.tsView = m.ts.object()
			m.reconcile(id)
			m.writer.Flush(context.Background())
		}
		m.settle(30)
		m.complete()
	})
	t.Run("lost write response", func(t *testing.T) {
		m := newModel(t, 3, 2, false)
		a := m.nodes[0]
		m.reconcile(a)
		p := m.pods[podName(a, m.incarnation(), 1)]
		m.drive(p)
		m.drive(p)
		m.reconcile(a)
		m.loseNext = true
		m.writer.Flush(context.Background()) // lands, the sidecar does not know
		m.writer.Flush(context.Background()) // stale view: conflict, read, nothing left to write
		if r := m.ts.status[a]; r.Phase != wfv1.NodeSucceeded {
			t.Fatalf("entry %+v", r)
		}
		m.settle(30)
		m.complete()
	})
	t.Run("TaskSet re-created", func(t *testing.T) {
		m := newModel(t, 4, 2, false)
		finishTwin(m, m.nodes[0])
		m.operate(false, false)
		m.recreate()
		m.settle(30)
		m.complete()
	})
	t.Run("entry removed between the status and the task patches, Update fails", func(t *testing.T) {
		m := newModel(t, 5, 2, false)
		a := m.nodes[0]
		finishTwin(m, a)
		m.operate(true, true) // the entry goes, the task patch and the Workflow update fail: a is open again
		m.tsView = m.ts.object()
		m.reconcile(a)
		m.writer.Flush(context.Background()) // held: a's final entry just vanished
		if _, ok := m.ts.status[a]; ok {
			t.Fatalf("the writer wrote %s again at once, inside the hold", a)
		}
		m.now = m.now.Add(11 * time.Second)
		m.wfView = m.wf.object()
		m.writer.Flush(context.Background()) // past the hold, Argo still shows a open: write again
		m.settle(30)
		m.complete()
	})
	t.Run("argo retry starts a new run under the same id", func(t *testing.T) {
		m := newModel(t, 6, 2, false)
		m.fail[m.nodes[1]] = true
		m.settle(40)
		if n := m.wf.nodes[m.nodes[1]]; n.Phase != wfv1.NodeFailed {
			t.Fatalf("node %s %s, want Failed before the retry", m.nodes[1], n.Phase)
		}
		first := appIn(m.wf.nodes[m.nodes[1]].Outputs)
		m.now = m.now.Add(time.Minute)
		m.retry()
		m.sidecarStart()
		m.settle(40)
		m.complete()
		if again := appIn(m.wf.nodes[m.nodes[1]].Outputs); again == first {
			t.Fatalf("the retried node shows its first run %s again", first)
		}
	})
}

// The checker catches what it is there for: a sidecar that answers the
// agent by template, as inference did, gets one run reported on two
// identical nodes in the very interleaving the node-identity issue
// describes (a restarted agent re-asks about a finished twin).
func TestModelCatchesAnswersByTemplate(t *testing.T) {
	caught := make(chan string, 1)
	ft := &fatalRecorder{TB: t, caught: caught}
	func() {
		defer func() { _ = recover() }()
		m := newModel(ft, 1, 2, true)
		a, b := m.nodes[0], m.nodes[1]
		m.reconcile(a)
		m.reconcile(b)
		p := m.pods[podName(a, m.incarnation(), 1)]
		m.drive(p)
		m.drive(p)
		m.agentAsk(a)
		m.agentAsk(b) // b gets a's run
		m.check()
	}()
	select {
	case msg := <-caught:
		if !strings.Contains(msg, "both report application") && !strings.Contains(msg, "a run of another node") {
			t.Fatalf("caught %q, want one run on two nodes", msg)
		}
	default:
		t.Fatal("the model did not catch one run reported on two nodes")
	}
}

// fatalRecorder turns Fatalf into a recorded message and a panic the
// test recovers from.
type fatalRecorder struct {
	testing.TB
	caught chan string
}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	select {
	case f.caught <- fmt.Sprintf(format, args...):
	default:
	}
	panic("caught")
}

func (f *fatalRecorder) Helper() {}
