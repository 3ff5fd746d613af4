package nodestatus

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	argov1 "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/typed/workflow/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
)

// These tests use Argo's fake clientset only because they inject API
// errors (a conflict, a missing TaskSet) that a real API server cannot be
// made to return on demand; the writer against a real one is tested in
// cmd/sparkplug's integration tests.

var taskSets = schema.GroupResource{Group: "argoproj.io", Resource: "workflowtasksets"}

// writerEnv is a Writer of TaskSet wf in namespace ns (workflow uid u1)
// on a fake clientset, whose cached view is a stale copy the test sets.
type writerEnv struct {
	w       *Writer
	argo    *wffake.Clientset
	view    *wfv1.WorkflowTaskSet
	mu      sync.Mutex
	patches []string // the bodies of the status patches sent
	written []string // the nodes the writer said it wrote
}

// newWriterEnv starts the env with stored, the TaskSet the API server
// holds, and view, the cache's older copy of it. fail answers the n-th
// status patch (from 1) with an error, or nil to let it through.
func newWriterEnv(t *testing.T, stored, view *wfv1.WorkflowTaskSet, fail func(n int) error) *writerEnv {
	t.Helper()
	e := &writerEnv{argo: wffake.NewSimpleClientset(stored), view: view}
	e.argo.PrependReactor("patch", "workflowtasksets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		if p.GetSubresource() != "status" {
			t.Errorf("a patch of the TaskSet itself, not its status: %s", p.GetPatch())
			return true, nil, apierrors.NewBadRequest("not the status")
		}
		e.mu.Lock()
		e.patches = append(e.patches, string(p.GetPatch()))
		n := len(e.patches)
		e.mu.Unlock()
		if err := fail(n); err != nil {
			return true, nil, err
		}
		return false, nil, nil
	})
	opts := DefaultOptions()
	opts.Now = func() time.Time { return t0 }
	wf := workflow(map[string]wfv1.NodePhase{"n1": wfv1.NodeRunning, "n2": wfv1.NodeRunning})
	e.w = New(e.argo.ArgoprojV1alpha1().WorkflowTaskSets("ns"), "wf", "u1",
		func() *wfv1.WorkflowTaskSet { return e.view }, func() *wfv1.Workflow { return wf },
		opts, slog.New(slog.NewTextHandler(io.Discard, nil)),
		func(node string, _ wfv1.NodeResult) { e.written = append(e.written, node) })
	return e
}

// calls are the writes and reads of the TaskSet sent, as "verb[/subresource]".
func (e *writerEnv) calls() []string {
	var out []string
	for _, a := range e.argo.Actions() {
		if a.GetResource().Resource != "workflowtasksets" || (a.GetVerb() != "patch" && a.GetVerb() != "get") {
			continue
		}
		c := a.GetVerb()
		if s := a.GetSubresource(); s != "" {
			c += "/" + s
		}
		out = append(out, c)
	}
	return out
}

// stored is the TaskSet the API server holds now.
func (e *writerEnv) stored(t *testing.T) *wfv1.WorkflowTaskSet {
	t.Helper()
	ts, err := e.argo.ArgoprojV1alpha1().WorkflowTaskSets("ns").Get(context.Background(), "wf", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// patched decodes a status patch: its resourceVersion and the nodes it
// writes.
func patched(t *testing.T, body string) (string, []string) {
	t.Helper()
	var p struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Status struct {
			Nodes map[string]json.RawMessage `json:"nodes"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for id := range p.Status.Nodes {
		nodes = append(nodes, id)
	}
	slices.Sort(nodes)
	return p.Metadata.ResourceVersion, nodes
}

// A patch decided on a stale view meets a conflict: the writer reads the
// TaskSet, picks again on what it holds now (here: Argo wrote n2's final
// entry since the view) and patches once more, guarded by the fresh
// resourceVersion, without n2.
func TestFlushDecidesAgainAfterAConflict(t *testing.T) {
	running := result(wfv1.NodeRunning, "RUNNING 1/1 executors")
	stored := taskSet([]string{"n1", "n2"}, map[string]wfv1.NodeResult{"n2": result(wfv1.NodeFailed, "Argo's own")})
	stored.ResourceVersion = "8"
	view := taskSet([]string{"n1", "n2"}, nil) // resourceVersion 7
	e := newWriterEnv(t, stored, view, func(n int) error {
		if n == 1 {
			return apierrors.NewConflict(taskSets, "wf", errorString("the object has been modified"))
		}
		return nil
	})
	e.w.Set("n1", inc0, running)
	e.w.Set("n2", inc0, running)

	if !e.w.Flush(context.Background()) {
		t.Fatal("Flush did not patch")
	}
	if got, want := strings.Join(e.calls(), ", "), "patch/status, get, patch/status"; got != want {
		t.Fatalf("calls %s, want %s", got, want)
	}
	if rv, nodes := patched(t, e.patches[0]); rv != "7" || strings.Join(nodes, ",") != "n1,n2" {
		t.Errorf("first patch at resourceVersion %s of %v, want 7 of n1,n2", rv, nodes)
	}
	if rv, nodes := patched(t, e.patches[1]); rv != "8" || strings.Join(nodes, ",") != "n1" {
		t.Errorf("second patch at resourceVersion %s of %v, want 8 of n1 alone", rv, nodes)
	}
	if _, ok := e.w.Wanted("n2"); ok {
		t.Error("n2, closed by a final entry, is still wanted")
	}
	if _, ok := e.w.Wanted("n1"); !ok {
		t.Error("n1 is no longer wanted")
	}
	if strings.Join(e.written, ",") != "n1" {
		t.Errorf("written %v, want n1 once", e.written)
	}
	got := e.stored(t).Status.Nodes
	if got["n1"].Phase != wfv1.NodeRunning || got["n2"].Phase != wfv1.NodeFailed || got["n2"].Message != "Argo's own" {
		t.Errorf("stored entries %+v; want n1 Running and Argo's n2 untouched", got)
	}
}

// A conflict on every try ends the batch after Options.Tries patches; the
// results stay wanted for the next.
func TestFlushGivesUpAfterItsTries(t *testing.T) {
	stored := taskSet([]string{"n1"}, nil)
	e := newWriterEnv(t, stored, taskSet([]string{"n1"}, nil), func(int) error {
		return apierrors.NewConflict(taskSets, "wf", errorString("the object has been modified"))
	})
	e.w.Set("n1", inc0, result(wfv1.NodeRunning, "RUNNING 1/1 executors"))
	if e.w.Flush(context.Background()) {
		t.Fatal("Flush says it patched")
	}
	if n := len(e.patches); n != DefaultOptions().Tries {
		t.Errorf("%d patches, want %d", n, DefaultOptions().Tries)
	}
	if _, ok := e.w.Wanted("n1"); !ok {
		t.Error("n1 is no longer wanted")
	}
}

// A TaskSet that is gone (Argo re-creates it) leaves the results wanted:
// the next batch writes them.
func TestFlushKeepsTheWantAfterNotFound(t *testing.T) {
	stored := taskSet([]string{"n1"}, nil)
	e := newWriterEnv(t, stored, taskSet([]string{"n1"}, nil), func(n int) error {
		if n == 1 {
			return apierrors.NewNotFound(taskSets, "wf")
		}
		return nil
	})
	running := result(wfv1.NodeRunning, "RUNNING 1/1 executors")
	e.w.Set("n1", inc0, running)
	if e.w.Flush(context.Background()) {
		t.Fatal("Flush says it patched a missing TaskSet")
	}
	if got, ok := e.w.Wanted("n1"); !ok || !Same(got, running) {
		t.Fatalf("wanted %+v %v after NotFound, want the result still", got, ok)
	}
	if len(e.patches) != 1 || len(e.written) != 0 {
		t.Fatalf("%d patches, %v written; want one patch and nothing written", len(e.patches), e.written)
	}
	if !e.w.Flush(context.Background()) {
		t.Fatal("the next Flush did not patch")
	}
	if got := e.stored(t).Status.Nodes["n1"]; !Same(got, running) {
		t.Errorf("stored %+v, want %+v", got, running)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

// inc0 is the incarnation of the tests' Workflow, which never started.
var inc0 = Incarnation(workflow(nil))

// A result derived before `argo retry` (another incarnation than the
// Workflow's) is never written, and a result of the current one is.
func TestFlushWritesOnlyTheCurrentIncarnation(t *testing.T) {
	e := newWriterEnv(t, taskSet([]string{"n1", "n2"}, nil), taskSet([]string{"n1", "n2"}, nil), func(int) error { return nil })
	e.w.Set("n1", "2026-01-01T00:00:00Z", result(wfv1.NodeFailed, "FAILED: the run before the retry"))
	e.w.Set("n2", inc0, result(wfv1.NodeRunning, "RUNNING"))
	if !e.w.Flush(context.Background()) {
		t.Fatal("Flush did not patch")
	}
	if len(e.written) != 1 || e.written[0] != "n2" {
		t.Fatalf("wrote %v, want only n2 (n1's result is of another incarnation)", e.written)
	}
	if _, ok := e.w.Wanted("n1"); ok {
		t.Error("the old incarnation's result is still wanted")
	}
}

// hangingTaskSets leaves every patch hanging until its context ends, as
// an API server or a network that never answers.
type hangingTaskSets struct {
	argov1.WorkflowTaskSetInterface
}

func (hangingTaskSets) Patch(ctx context.Context, _ string, _ types.PatchType, _ []byte, _ metav1.PatchOptions, _ ...string) (*wfv1.WorkflowTaskSet, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A patch left hanging is given up after Options.Timeout, the result
// still wanted for the next flush: one request must not hold up every
// later result of the workflow.
func TestFlushGivesUpAHangingPatch(t *testing.T) {
	view := taskSet([]string{"n1"}, nil)
	wf := workflow(map[string]wfv1.NodePhase{"n1": wfv1.NodeRunning})
	opts := DefaultOptions()
	opts.Timeout = 50 * time.Millisecond
	w := New(hangingTaskSets{}, "wf", "u1", func() *wfv1.WorkflowTaskSet { return view }, func() *wfv1.Workflow { return wf },
		opts, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	w.Set("n1", inc0, result(wfv1.NodeRunning, "RUNNING"))
	done := make(chan bool, 1)
	go func() { done <- w.Flush(context.Background()) }()
	select {
	case patched := <-done:
		if patched {
			t.Fatal("Flush reports a patch that never answered")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Flush still waits on a hanging patch")
	}
	if _, ok := w.Wanted("n1"); !ok {
		t.Error("the result is no longer wanted after a patch that never answered")
	}
}

// SawFinal remembers a final result the writer wrote, in its incarnation
// only; a result that is not final is not remembered.
func TestSawFinalIsOfTheIncarnation(t *testing.T) {
	e := newWriterEnv(t, taskSet([]string{"n1", "n2"}, nil), taskSet([]string{"n1", "n2"}, nil), func(int) error { return nil })
	e.w.Set("n1", inc0, result(wfv1.NodeFailed, "FAILED: Kueue can never admit Workload wl-1"))
	e.w.Set("n2", inc0, result(wfv1.NodePending, "QUEUED"))
	if e.w.SawFinal("n1", inc0) {
		t.Fatal("SawFinal before anything was written")
	}
	if !e.w.Flush(context.Background()) {
		t.Fatal("Flush did not patch")
	}
	if !e.w.SawFinal("n1", inc0) {
		t.Error("the final result written is not remembered")
	}
	if e.w.SawFinal("n2", inc0) {
		t.Error("a Pending result is remembered as final")
	}
	if e.w.SawFinal("n1", "2026-01-01T00:00:00Z") {
		t.Error("the final result is remembered for another incarnation (after argo retry)")
	}
}
