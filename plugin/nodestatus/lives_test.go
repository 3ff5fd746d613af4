package nodestatus_test

// How many writes of the TaskSet a node's life costs (life_test.go): a
// normal life three, the record of its driver (the first result naming
// the driver's uid, written at once however interim its state), Running
// and its final result, or two when the driver runs by the first write; a
// state a person wants to see (PENDING_RERUN, a wait longer than the
// interim hold) one more each; progress at most once per progress
// interval.

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/nodestatus"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

const (
	lifeBody    = `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","executor":{"instances":2}}`
	archiveBody = `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","executor":{"instances":2},` +
		`"sparkplug":{"archiveLogs":true}}`
	rerunBody = `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","executor":{"instances":2},` +
		`"restartPolicy":{"type":"OnFailure","onFailureRetries":1,"onFailureRetryInterval":5}}`
)

// start is a typical start of attempt 1, which the first pass launches
// at 0 s: bound at 1 s, its image pulled from 2 s, its driver running at
// 4 s, its executors asked for at 5 s and running at 7 s.
func start(e *lifeEnv) map[int]func() {
	return map[int]func(){
		1: func() { e.scheduled("") },
		2: func() { e.scheduled("ContainerCreating") },
		4: func() { e.running() },
		5: func() { e.executors(2, corev1.PodPending) },
		7: func() { e.executors(2, corev1.PodRunning) },
	}
}

// phases are the phases of the writes, in order.
func phases(ws []write) []wfv1.NodePhase {
	var out []wfv1.NodePhase
	for _, w := range ws {
		out = append(out, w.res.Phase)
	}
	return out
}

// uidOf is the driver uid a write records (output driver-uid; "": none).
func uidOf(w write) string {
	if w.res.Outputs != nil {
		for _, p := range w.res.Outputs.Parameters {
			if p.Name == spark.OutputDriverUID && p.Value != nil {
				return p.Value.String()
			}
		}
	}
	return ""
}

// checkRecordRunningFinal: the writes are attempt 1's driver's record (a
// Pending SUBMITTED naming its uid, written by 2 s: the pass after the
// launch, within the write gap), the first RUNNING message, and the final
// result, its message containing final.
func checkRecordRunningFinal(t *testing.T, e *lifeEnv, phase wfv1.NodePhase, final string) {
	t.Helper()
	t.Logf("%d writes:%s", len(e.writes), e.trace())
	if len(e.writes) != 3 {
		t.Fatalf("a normal life cost %d writes, want 3 (the driver's record, Running, final):%s", len(e.writes), e.trace())
	}
	rec := e.writes[0]
	if rec.res.Phase != wfv1.NodePending || !strings.HasPrefix(rec.res.Message, "SUBMITTED") || uidOf(rec) != "driver-uid-1" || rec.at > 2 {
		t.Errorf("the first write %s (uid %q), want Pending SUBMITTED recording driver-uid-1 at once, by 2s", rec, uidOf(rec))
	}
	if e.writes[1].res.Phase != wfv1.NodeRunning || !strings.HasPrefix(e.writes[1].res.Message, "RUNNING") ||
		e.writes[2].res.Phase != phase || !strings.Contains(e.writes[2].res.Message, final) {
		t.Fatalf("writes %v, want the record, Running RUNNING... then %s %q:%s", phases(e.writes), phase, final, e.trace())
	}
}

// A driver that starts, runs, reports progress and succeeds: its record
// (SUBMITTED, naming its uid, at once), Running and Succeeded; nothing of
// its pull's seconds, of its executors coming up or of Spark's progress
// within the first interval.
func TestNormalLifeCostsThreeWrites(t *testing.T) {
	e := newLife(t, lifeBody, nil)
	s := start(e)
	s[10] = func() { e.progress = "stage 1/2, 10/100 tasks" }
	s[15] = func() { e.progress = "stage 2/2, 60/100 tasks" }
	s[20] = func() { e.exit(0) }
	e.live(60, s)
	checkRecordRunningFinal(t, e, wfv1.NodeSucceeded, "COMPLETED")
	if out := e.writes[2].res.Outputs; out == nil || out.ExitCode == nil || *out.ExitCode != "0" {
		t.Errorf("the final result's outputs %+v, want exit code 0", out)
	}
	if e.writes[1].at != 4 {
		t.Errorf("Running written at %ds, want at 4s, as the driver started", e.writes[1].at)
	}
}

// A driver already running when the pass after its launch looks: its
// first result is Running, and records its uid; two writes.
func TestLifeWhoseDriverRunsByTheFirstWriteCostsTwoWrites(t *testing.T) {
	e := newLife(t, lifeBody, nil)
	e.live(40, map[int]func(){
		1:  func() { e.running() },
		3:  func() { e.executors(2, corev1.PodRunning) },
		20: func() { e.exit(0) },
	})
	t.Logf("%d writes:%s", len(e.writes), e.trace())
	if len(e.writes) != 2 || e.writes[0].res.Phase != wfv1.NodeRunning || e.writes[1].res.Phase != wfv1.NodeSucceeded {
		t.Fatalf("writes %v, want 2, Running then Succeeded:%s", phases(e.writes), e.trace())
	}
	if uidOf(e.writes[0]) != "driver-uid-1" || e.writes[0].at != 1 {
		t.Errorf("Running written at %ds recording %q, want at 1s recording driver-uid-1", e.writes[0].at, uidOf(e.writes[0]))
	}
}

// A driver that fails: its record, Running, then Failed with the
// driver's reason.
func TestFailedLifeCostsThreeWrites(t *testing.T) {
	e := newLife(t, lifeBody, nil)
	s := start(e)
	s[12] = func() { e.exit(1) }
	e.live(40, s)
	checkRecordRunningFinal(t, e, wfv1.NodeFailed, "FAILED: driver exited 1 (Error)")
}

// An attempt that fails and is run again: PENDING_RERUN is a state a
// person wants to see, written at once; so is the second attempt's first
// SUBMITTED, the record of its new driver's uid; its RUNNING and the
// final result are written too.
func TestRerunLifeWritesPendingRerunAndTheNewDriverAtOnce(t *testing.T) {
	e := newLife(t, rerunBody, nil)
	s := start(e)
	s[10] = func() { e.exit(1) } // attempt 2 is launched at 15 s
	s[16] = func() {
		if len(e.pods) != 2 {
			t.Fatalf("16s: %d attempts, want the second launched at 15s", len(e.pods))
		}
		e.scheduled("ContainerCreating")
	}
	s[18] = func() { e.running() }
	s[19] = func() { e.executors(2, corev1.PodRunning) }
	s[30] = func() { e.exit(0) }
	e.live(60, s)
	t.Logf("%d writes:%s", len(e.writes), e.trace())
	want := []string{"SUBMITTED", "RUNNING", "PENDING_RERUN: attempt 2/2 in 5s", "SUBMITTED", "RUNNING", "COMPLETED"}
	if len(e.writes) != len(want) {
		t.Fatalf("%d writes, want %d: %v:%s", len(e.writes), len(want), want, e.trace())
	}
	for i, w := range want {
		if !strings.HasPrefix(e.writes[i].res.Message, w) {
			t.Errorf("write %d is %q, want it to open with %q", i+1, e.writes[i].res.Message, w)
		}
	}
	if e.writes[2].at != 10 {
		t.Errorf("PENDING_RERUN written at %ds, want at once, 10s", e.writes[2].at)
	}
	// Attempt 2 is launched at 15 s and seen by the pass at 16 s.
	if w := e.writes[3]; uidOf(w) != "driver-uid-2" || w.at > 16 || !strings.HasSuffix(w.res.Message, "(attempt 2/2)") {
		t.Errorf("attempt 2's first write %s recording %q, want its SUBMITTED recording driver-uid-2 at once, 16s", w, uidOf(w))
	}
	if !strings.HasSuffix(e.writes[4].res.Message, "(attempt 2/2)") {
		t.Errorf("the second RUNNING is %q, want it to name attempt 2/2", e.writes[4].res.Message)
	}
}

// A driver whose image takes 40 s to pull: its record is written at once;
// the wait outlasts the interim hold, so its reason is shown, once, when
// the hold runs out, in its own words.
func TestSlowImagePullIsShownAfterTheHold(t *testing.T) {
	e := newLife(t, lifeBody, nil)
	hold := int(e.opts.InterimHold / time.Second)
	if hold <= 0 || hold >= 40 {
		t.Fatalf("interim hold %s: this life's pull (40 s) must outlast it", e.opts.InterimHold)
	}
	e.live(70, map[int]func(){
		1:  func() { e.scheduled("") },
		2:  func() { e.scheduled("ContainerCreating") },
		42: func() { e.running() },
		50: func() { e.exit(0) },
	})
	t.Logf("%d writes:%s", len(e.writes), e.trace())
	if len(e.writes) != 4 {
		t.Fatalf("%d writes, want 4: the record, the wait, Running, Succeeded:%s", len(e.writes), e.trace())
	}
	if uidOf(e.writes[0]) != "driver-uid-1" || e.writes[0].at != 1 {
		t.Errorf("the first write %s recording %q, want the driver's record at once, 1s", e.writes[0], uidOf(e.writes[0]))
	}
	w := e.writes[1]
	if w.res.Phase != wfv1.NodePending || w.res.Message != "SUBMITTED: driver pending (ContainerCreating)" {
		t.Errorf("the second write is %s, want Pending SUBMITTED: driver pending (ContainerCreating)", w)
	}
	// SUBMITTED since 1 s (the first pass that saw the driver); the
	// writer's tick comes within a second of the hold.
	if w.at < 1+hold || w.at > 2+hold {
		t.Errorf("the wait written at %ds, want when the hold ran out, %d to %ds", w.at, 1+hold, 2+hold)
	}
	if phases(e.writes)[2] != wfv1.NodeRunning || phases(e.writes)[3] != wfv1.NodeSucceeded {
		t.Errorf("writes %v, want the record, the wait, Running, Succeeded", phases(e.writes))
	}
}

// A driver that runs for two minutes and more: between Running and the
// final result, its message (executors, elapsed time, Spark's progress)
// is written at most once per progress interval.
func TestLongLifeWritesProgressPerInterval(t *testing.T) {
	e := newLife(t, lifeBody, nil)
	s := start(e)
	for at := 10; at < 130; at += 10 {
		s[at] = func() { e.progress = "stage 1/1, " + strconv.Itoa(at) + " tasks" }
	}
	s[130] = func() { e.exit(0) }
	e.live(150, s)
	t.Logf("%d writes:%s", len(e.writes), e.trace())
	interval := e.opts.ProgressInterval
	ran := 130 - 4
	if most := 3 + ran/int(interval/time.Second); len(e.writes) > most {
		t.Fatalf("%d writes in %ds of running, want at most %d (the record, Running, final, one per %s):%s", len(e.writes), ran, most, interval, e.trace())
	}
	if len(e.writes) < 5 {
		t.Fatalf("%d writes, want progress written as the interval allows:%s", len(e.writes), e.trace())
	}
	// From Running (the second write) on.
	for i := 2; i < len(e.writes)-1; i++ {
		if gap := time.Duration(e.writes[i].at-e.writes[i-1].at) * time.Second; gap < interval {
			t.Errorf("progress written %s after the write before, want at least %s:%s", gap, interval, e.trace())
		}
	}
}

// A normal life whose every write first meets a write of Argo's (the
// TaskSet's version moved on since the writer's view): each conflict is
// read afresh and decided again, within Tries requests a batch; the
// TaskSet still takes three writes, which is all Argo answers.
func TestConflictsAreNotWritesOfTheLife(t *testing.T) {
	e := newLife(t, lifeBody, nil)
	e.conflictAt[1], e.conflictAt[3] = true, true
	s := start(e)
	s[20] = func() { e.exit(0) }
	e.live(40, s)
	checkRecordRunningFinal(t, e, wfv1.NodeSucceeded, "COMPLETED")
	if e.conflicts != 2 || e.requests != 5 {
		t.Errorf("%d requests, %d conflicts; want 5 and 2: each conflict, then its batch again", e.requests, e.conflicts)
	}
	if e.flushRequests > e.opts.Tries {
		t.Errorf("one Flush sent %d patches, want at most Tries (%d)", e.flushRequests, e.opts.Tries)
	}
}

// A step that stores its driver's log: the seconds the upload takes
// after the driver ended (COMPLETED; archiving the driver log) are not
// written when they are few, and are, once, when they outlast the hold.
func TestArchivingLifeHoldsTheUpload(t *testing.T) {
	for _, tc := range []struct {
		upload time.Duration
		want   int
	}{{3 * time.Second, 3}, {30 * time.Second, 4}} {
		t.Run(tc.upload.String(), func(t *testing.T) {
			e := newLife(t, archiveBody, nil)
			e.upload = tc.upload
			s := start(e)
			s[20] = func() { e.exit(0) }
			e.live(80, s)
			t.Logf("%d writes:%s", len(e.writes), e.trace())
			if len(e.writes) != tc.want {
				t.Fatalf("%d writes, want %d:%s", len(e.writes), tc.want, e.trace())
			}
			last := e.writes[len(e.writes)-1]
			if last.res.Phase != wfv1.NodeSucceeded || last.at < 20+int(tc.upload/time.Second) {
				t.Errorf("the final write %s, want Succeeded once the log was stored, at %s", last, 20*time.Second+tc.upload)
			}
			if tc.want == 4 && e.writes[2].res.Message != "COMPLETED; archiving the driver log" {
				t.Errorf("the third write %s, want the upload that outlasted the hold", e.writes[2])
			}
		})
	}
}

// A step queued in Kueue: its QUEUED wait, before any driver exists,
// records nothing and is held like any interim state (written once it
// lasted the hold); the driver Kueue's admission lets it launch is
// recorded at once, by its SUBMITTED.
func TestKueueWaitIsHeldAndItsDriverRecordedAtOnce(t *testing.T) {
	for _, tc := range []struct {
		admit  int
		queued bool // the QUEUED wait outlasts the hold, and is written
	}{{3, false}, {30, true}} {
		t.Run(strconv.Itoa(tc.admit)+"s", func(t *testing.T) {
			e := newLife(t, lifeBody, nil)
			e.policy.KueueQueue = "lq"
			hold := int(e.opts.InterimHold / time.Second)
			launch := tc.admit // the pass of the admission launches
			e.live(launch+40, map[int]func(){
				1: func() {
					e.workloads[0].Waiting = "couldn't assign flavors to pod set driver: insufficient quota for cpu"
				},
				tc.admit:    func() { e.admit() },
				launch + 2:  func() { e.running() },
				launch + 3:  func() { e.executors(2, corev1.PodRunning) },
				launch + 20: func() { e.exit(0) },
			})
			t.Logf("%d writes:%s", len(e.writes), e.trace())
			ws := e.writes
			if tc.queued {
				if len(ws) == 0 || !strings.HasPrefix(ws[0].res.Message, "QUEUED") || ws[0].at != hold {
					t.Fatalf("want the QUEUED wait written once, at %ds, when the hold ran out:%s", hold, e.trace())
				}
				ws = ws[1:]
			}
			for _, w := range ws {
				if strings.HasPrefix(w.res.Message, "QUEUED") {
					t.Errorf("the QUEUED wait written at %ds, want it held (it lasted less than the hold, or was written once)", w.at)
				}
			}
			if len(ws) != 3 || uidOf(ws[0]) != "driver-uid-1" || ws[0].at != launch+1 || ws[1].res.Phase != wfv1.NodeRunning || ws[2].res.Phase != wfv1.NodeSucceeded {
				t.Fatalf("writes after the wait %v, want the driver's record at %ds (the pass after its launch), Running, Succeeded:%s", phases(ws), launch+1, e.trace())
			}
		})
	}
}

// With no hold, every SUBMITTED message is written as before, the pull's
// reason too: the rule the lives above rely on is the hold, and this
// shows the count can grow.
func TestWithoutInterimHoldEveryWaitIsWritten(t *testing.T) {
	e := newLife(t, lifeBody, func(o *nodestatus.Options) { o.InterimHold = 0 })
	s := start(e)
	s[20] = func() { e.exit(0) }
	e.live(40, s)
	t.Logf("%d writes:%s", len(e.writes), e.trace())
	if len(e.writes) <= 3 || e.writes[1].res.Phase != wfv1.NodePending {
		t.Fatalf("%d writes, want the SUBMITTED messages written too:%s", len(e.writes), e.trace())
	}
}

// Argo's controller copies every entry into its node at every operate and
// updates the Workflow each time (C1): an entry left in place while the
// driver runs costs a Workflow write at every requeue (10 s) and every
// TaskSet change. Each entry the Workflow shows applied is withdrawn, so
// each result written costs Argo one Workflow update, whatever the run's
// length: here a record, Running, three progress messages and the final
// result over a run of 100 s.
func TestEachResultCostsArgoOneWorkflowUpdate(t *testing.T) {
	e := newLife(t, lifeBody, nil)
	e.argo = true
	s := start(e)
	s[100] = func() { e.exit(0) }
	e.live(130, s)
	t.Logf("%d writes:%s; Workflow updates at %v; %d withdrawn", len(e.writes), e.trace(), e.updates, e.withdrawn)
	if n := len(e.writes); n < 5 || e.writes[n-1].res.Phase != wfv1.NodeSucceeded {
		t.Fatalf("writes %v, want the record, Running, progress and Succeeded last:%s", phases(e.writes), e.trace())
	}
	if len(e.updates) != len(e.writes) {
		t.Errorf("%d Workflow updates (at %v) for %d results written; want one each", len(e.updates), e.updates, len(e.writes))
	}
	if e.withdrawn != len(e.writes)-1 {
		t.Errorf("%d entries withdrawn, want %d: every result but the final one, which Argo removes", e.withdrawn, len(e.writes)-1)
	}
	if n := e.wf.Status.Nodes[lifeNode]; n.Phase != wfv1.NodeSucceeded || len(e.ts.Status.Nodes) != 0 {
		t.Errorf("the node ends %s with entries %v; want Succeeded and no entry left", n.Phase, e.ts.Status.Nodes)
	}
}

// Withdrawn, the applied result stands for the entry: the next pass
// compares with what the Workflow shows, so an unchanged result is not
// written again, and the driver's record (output driver-uid) is still
// read, so a new attempt's driver is written at once.
func TestAWithdrawnEntryIsNotWrittenAgain(t *testing.T) {
	e := newLife(t, rerunBody, nil)
	e.argo = true
	s := start(e)
	s[20] = func() { e.exit(1) }
	e.live(60, s)
	t.Logf("%d writes:%s; Workflow updates at %v; %d withdrawn", len(e.writes), e.trace(), e.updates, e.withdrawn)
	for i := 1; i < len(e.writes); i++ {
		if nodestatus.Same(e.writes[i-1].res, e.writes[i].res) {
			t.Errorf("write %d repeats write %d: %s", i, i-1, e.writes[i])
		}
	}
	var uids []string
	for _, w := range e.writes {
		if u := uidOf(w); u != "" && !slices.Contains(uids, u) {
			uids = append(uids, u)
		}
	}
	if !slices.Equal(uids, []string{"driver-uid-1", "driver-uid-2"}) {
		t.Errorf("drivers recorded %v, want attempt 1's then attempt 2's", uids)
	}
	if len(e.updates) != len(e.writes) {
		t.Errorf("%d Workflow updates for %d results written; want one each", len(e.updates), len(e.writes))
	}
}
