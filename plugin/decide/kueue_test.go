package decide

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/kueue"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// wl is the Workload of attempt n of node n1, current, as a cache shows
// it; mods say what Kueue decided.
func wl(n int, mods ...func(*Workload)) Workload {
	w := Workload{View: kueue.View{Name: "wl-" + string(rune('0'+n)), UID: "uid-" + string(rune('0'+n)), LocalQueue: "lq"}, Attempt: n, Current: true}
	for _, m := range mods {
		m(&w)
	}
	return w
}

func waitingFor(msg string) func(*Workload) { return func(w *Workload) { w.Waiting = msg } }

func admittedWith(executors int32) func(*Workload) {
	return func(w *Workload) {
		w.Admitted, w.AdmittedAt = true, t0
		w.Admission = &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{
			{Name: kueue.PodSetDriver, Count: ptr.To[int32](1)}, {Name: kueue.PodSetExecutor, Count: ptr.To(executors)}}}
	}
}

func evictedFor(reason string) func(*Workload) {
	return func(w *Workload) {
		w.Admitted, w.Evicted, w.EvictedReason, w.EvictedMessage = false, true, reason, "to make room"
	}
}

func withWorkloads(ws ...Workload) func(*Snapshot) {
	return func(s *Snapshot) { s.Workloads, s.WorkloadsKnown = ws, true }
}

func executorPods(running int) []*corev1.Pod {
	var out []*corev1.Pod
	for range running {
		out = append(out, &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning}})
	}
	return out
}

func dequeued(pl Plan) []int {
	var out []int
	for _, w := range pl.KueueDequeue {
		out = append(out, w.Attempt)
	}
	return out
}

func TestDecideQueuedStep(t *testing.T) {
	queued := policyOf(t, `"executor":{"instances":2}`, 0)
	queued.KueueQueue = "lq"
	failOnPreemption := policyOf(t, `"executor":{"instances":2},"sparkplug":{"kueue":{"onPreemption":"Fail"}}`, 0)
	failOnPreemption.KueueQueue = "lq"
	withExecutors := func(n int) func(*Snapshot) { return func(s *Snapshot) { s.Run.Executors = executorPods(n) } }
	archivesLogs := policyOf(t, `"executor":{"instances":2},"sparkplug":{"archiveLogs":true}`, 0)
	archivesLogs.KueueQueue = "lq"

	for _, row := range []struct {
		name                      string
		s                         *Snapshot
		p                         Policy
		launch, enqueue           int
		admitted                  bool
		stop                      Limit
		phase                     state.Phase
		state                     spark.State
		msg                       string
		dequeue                   []int
		podsReady, abandon, final bool
		archive                   bool
	}{
		{name: "no Workload yet: it is created, nothing launches, the node is QUEUED",
			s: snap(t0, nil, withWorkloads()), p: queued,
			enqueue: 1, phase: state.PhasePending, state: spark.StateQueued, msg: "QUEUED: waiting in LocalQueue lq for Kueue"},
		{name: "the cache has not synced: nothing is created yet",
			s: snap(t0, nil, func(s *Snapshot) { s.WorkloadsKnown = false }), p: queued,
			phase: state.PhasePending, state: spark.StateQueued, msg: "QUEUED"},
		{name: "a Workload Kueue has not admitted: the node says why it waits",
			s: snap(t0, nil, withWorkloads(wl(1, waitingFor("couldn't assign flavors to pod set driver: insufficient quota for cpu")))), p: queued,
			phase: state.PhasePending, state: spark.StateQueued, msg: "QUEUED: waiting in LocalQueue lq for Kueue to admit Workload wl-1: couldn't assign flavors to pod set driver: insufficient quota for cpu"},
		{name: "a waiting Workload whose place the visibility API gives: the node says it",
			s: snap(t0, nil, withWorkloads(wl(1, waitingFor("insufficient quota for cpu"), func(w *Workload) { w.Position = ptr.To[int32](2) }))), p: queued,
			phase: state.PhasePending, state: spark.StateQueued, msg: "QUEUED: waiting in LocalQueue lq for Kueue to admit Workload wl-1: 2 Workloads ahead of it; insufficient quota for cpu"},
		{name: "the next in line",
			s: snap(t0, nil, withWorkloads(wl(1, func(w *Workload) { w.Position = ptr.To[int32](0) }))), p: queued,
			phase: state.PhasePending, state: spark.StateQueued, msg: "QUEUED: waiting in LocalQueue lq for Kueue to admit Workload wl-1: next in line"},
		{name: "an admitted Workload: attempt 1 launches with it",
			s: snap(t0, nil, withWorkloads(wl(1, admittedWith(2)))), p: queued,
			launch: 1, admitted: true},
		{name: "a running driver keeps its Workload and is marked PodsReady once its admitted executors run",
			s: snap(t0.Add(time.Minute), runOf(driver(1, running())), withWorkloads(wl(1, admittedWith(2))), withExecutors(2)), p: queued,
			phase: state.PhaseRunning, state: spark.StateRunning, podsReady: true},
		{name: "not PodsReady while an admitted executor is missing",
			s: snap(t0.Add(time.Minute), runOf(driver(1, running())), withWorkloads(wl(1, admittedWith(2))), withExecutors(1)), p: queued,
			phase: state.PhaseRunning, state: spark.StateRunning},
		{name: "preempted while running: the driver stops and attempt 2 is queued at once",
			s: snap(t0.Add(time.Minute), runOf(driver(1, running())), withWorkloads(wl(1, evictedFor(kueue.ReasonPreempted)))), p: queued,
			stop: LimitPreempted, phase: state.PhaseRunning, state: spark.StatePendingRerun, enqueue: 2, dequeue: []int{1},
			msg: "PENDING_RERUN: attempt 2 waits in LocalQueue lq for Kueue; after: FAILED: evicted by Kueue (Preempted): to make room"},
		{name: "preempted, the step archives logs: the log is stored first, the driver and its Workload stay meanwhile",
			s: snap(t0.Add(time.Minute), runOf(driver(1, running())), withWorkloads(wl(1, evictedFor(kueue.ReasonPreempted)))), p: archivesLogs,
			archive: true, phase: state.PhaseRunning, state: spark.StatePendingRerun, msg: "archiving the driver log before stopping the driver"},
		{name: "preempted, its log stored: the driver stops and attempt 2 is queued",
			s: snap(t0.Add(time.Minute), runOf(driver(1, running(), annotated(spark.AnnotationDriverLog, "k"))), withWorkloads(wl(1, evictedFor(kueue.ReasonPreempted)))), p: archivesLogs,
			stop: LimitPreempted, enqueue: 2, dequeue: []int{1}, phase: state.PhaseRunning, state: spark.StatePendingRerun},
		{name: "preempted, the step fails on preemption: the driver stops and the node fails",
			s: snap(t0.Add(time.Minute), runOf(driver(1, running())), withWorkloads(wl(1, evictedFor(kueue.ReasonPreempted)))), p: failOnPreemption,
			stop: LimitEvicted, phase: state.PhaseFailed, state: spark.StateFailed, dequeue: []int{1}, final: true,
			msg: "FAILED: evicted by Kueue (Preempted): to make room"},
		{name: "evicted for another reason: final, whatever onPreemption says",
			s: snap(t0.Add(time.Minute), runOf(driver(1, running())), withWorkloads(wl(1, evictedFor("PodsReadyTimeout")))), p: queued,
			stop: LimitEvicted, phase: state.PhaseFailed, state: spark.StateFailed, dequeue: []int{1}, final: true,
			msg: "FAILED: evicted by Kueue (PodsReadyTimeout)"},
		{name: "the preempted attempt's tombstone: attempt 2 waits for its own admission",
			s: snap(t0.Add(2*time.Minute), tombOf(1, LimitPreempted, t0.Add(time.Minute)), withWorkloads(wl(2, waitingFor("insufficient quota")))), p: queued,
			phase: state.PhaseRunning, state: spark.StatePendingRerun, msg: "attempt 2 waits in LocalQueue lq for Kueue to admit Workload wl-2 (insufficient quota); after: FAILED"},
		{name: "the driver finished: its Workload goes, the node completes",
			s: snap(t0.Add(time.Minute), runOf(driver(1, exited(0, "Completed"))), withWorkloads(wl(1, admittedWith(2)))), p: queued,
			phase: state.PhaseSucceeded, state: spark.StateCompleted, dequeue: []int{1}, final: true},
		{name: "Argo fulfilled a queued node (stop, terminate): its Workload goes",
			s: snap(t0.Add(time.Minute), nil, withWorkloads(wl(1, waitingFor("insufficient quota"))), func(s *Snapshot) { s.Fulfilled = true }), p: queued,
			dequeue: []int{1}},
		{name: "a queued node's final entry just removed by Argo, its Workload withdrawn: nothing is queued again",
			s: snap(t0.Add(time.Minute), nil, withWorkloads(), func(s *Snapshot) { s.FinalRemoved = true }), p: queued},
		{name: "a node's final entry gone past the hold, the Workflow showing it open: decided again",
			s: snap(t0.Add(time.Minute), nil, withWorkloads()), p: queued,
			enqueue: 1, phase: state.PhasePending, state: spark.StateQueued},
		{name: "Argo fulfilled a running node: the driver is abandoned and its Workload goes",
			s: snap(t0.Add(time.Minute), runOf(driver(1, running())), withWorkloads(wl(1, admittedWith(2))), func(s *Snapshot) { s.Fulfilled = true }), p: queued,
			abandon: true, dequeue: []int{1}},
		{name: "a Workload of an older incarnation goes; the current one is created",
			s: snap(t0, nil, withWorkloads(func() Workload { w := wl(1, admittedWith(2)); w.Current = false; return w }())), p: queued,
			enqueue: 1, dequeue: []int{1}, phase: state.PhasePending, state: spark.StateQueued},
	} {
		t.Run(row.name, func(t *testing.T) {
			pl := Decide(row.s, row.p)
			if pl.Launch != row.launch || pl.KueueEnqueue != row.enqueue || (pl.Admission != nil) != row.admitted || pl.Stop != row.stop ||
				(pl.PodsReady != nil) != row.podsReady || pl.Abandon != row.abandon || pl.Archive != row.archive {
				t.Errorf("launch %d enqueue %d admission %v stop %q podsReady %v abandon %v; want %d %d %v %q %v %v",
					pl.Launch, pl.KueueEnqueue, pl.Admission != nil, pl.Stop, pl.PodsReady != nil, pl.Abandon,
					row.launch, row.enqueue, row.admitted, row.stop, row.podsReady, row.abandon)
			}
			if got := dequeued(pl); !equalInts(got, row.dequeue) {
				t.Errorf("dequeue attempts %v, want %v", got, row.dequeue)
			}
			if row.phase != "" && (pl.Outcome.Phase != row.phase || pl.Outcome.State != row.state || !strings.Contains(pl.Outcome.Message(), row.msg)) {
				t.Errorf("outcome %s %s %q, want %s %s containing %q", pl.Outcome.Phase, pl.Outcome.State, pl.Outcome.Message(), row.phase, row.state, row.msg)
			}
			if row.final != pl.Outcome.Phase.Completed() {
				t.Errorf("outcome phase %s, final %v wanted", pl.Outcome.Phase, row.final)
			}
		})
	}
}

// A step that is not queued is never held, whatever Workloads exist.
func TestDecideUnqueuedStepIgnoresKueue(t *testing.T) {
	p := policyOf(t, "", 0)
	pl := Decide(snap(t0, nil, withWorkloads()), p)
	if pl.Launch != 1 || pl.KueueEnqueue != 0 || len(pl.KueueDequeue) != 0 {
		t.Errorf("launch %d enqueue %d dequeue %v, want attempt 1 launched and nothing of Kueue", pl.Launch, pl.KueueEnqueue, pl.KueueDequeue)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// startedAt: the Workflow shows node n1 started at at.
func startedAt(at time.Time) func(*Snapshot) {
	return func(s *Snapshot) { s.Started = at }
}

func createdAt(at time.Time) func(*Workload) { return func(w *Workload) { w.Created = at } }

func neverFitting(msg string) func(*Workload) {
	return func(w *Workload) { w.Waiting, w.NeverFits = msg, msg }
}

// Kueue v0.19.2's words for an executor pod set over its ClusterQueue's
// whole capacity.
const overCapacity = "couldn't assign flavors to pod set executor: insufficient quota for cpu in flavor default, previously considered podsets requests (1) + current podset request (8) > maximum capacity (4)"

// A queued step's wait ends, for good, when the template's timeout,
// counted from the node's start, runs out or when Kueue says its
// Workload can never be admitted; else it waits.
func TestDecideQueuedStepWaitEnds(t *testing.T) {
	queued := func(timeout time.Duration) Policy {
		p := policyOf(t, `"executor":{"instances":2}`, timeout)
		p.KueueQueue = "lq"
		return p
	}
	for _, row := range []struct {
		name            string
		s               *Snapshot
		p               Policy
		launch, enqueue int
		stop            Limit
		phase           state.Phase
		msg             string
		dequeue         []int
	}{
		{name: "the timeout runs out while queued: the node fails naming the LocalQueue, the Workload is withdrawn",
			s: snap(t0.Add(30*time.Second), nil, startedAt(t0), withWorkloads(wl(1, waitingFor("insufficient quota")))), p: queued(30 * time.Second),
			phase: state.PhaseFailed, dequeue: []int{1},
			msg: "FAILED: timed out after 30s (the template's timeout) while queued in LocalQueue lq; Workload wl-1 withdrawn"},
		{name: "a second before the timeout: it waits",
			s: snap(t0.Add(29*time.Second), nil, startedAt(t0), withWorkloads(wl(1, waitingFor("insufficient quota")))), p: queued(30 * time.Second),
			phase: state.PhasePending, msg: "QUEUED: waiting in LocalQueue lq for Kueue to admit Workload wl-1"},
		{name: "no timeout: it waits",
			s: snap(t0.Add(time.Hour), nil, startedAt(t0), withWorkloads(wl(1, waitingFor("insufficient quota")))), p: queued(0),
			phase: state.PhasePending, msg: "QUEUED"},
		{name: "the timeout ran out before the Workload was made: none is made",
			s: snap(t0.Add(time.Minute), nil, startedAt(t0), withWorkloads()), p: queued(30 * time.Second),
			phase: state.PhaseFailed, msg: "FAILED: timed out after 30s (the template's timeout) while queued in LocalQueue lq"},
		{name: "the node's start unknown: the timeout counts from the Workload's",
			s: snap(t0.Add(30*time.Second), nil, withWorkloads(wl(1, createdAt(t0)))), p: queued(30 * time.Second),
			phase: state.PhaseFailed, dequeue: []int{1}, msg: "while queued in LocalQueue lq"},
		{name: "admitted as the timeout runs out: nothing launches, the Workload is withdrawn",
			s: snap(t0.Add(time.Minute), nil, startedAt(t0), withWorkloads(wl(1, admittedWith(2)))), p: queued(30 * time.Second),
			phase: state.PhaseFailed, dequeue: []int{1}, msg: "timed out after 30s (the template's timeout) while queued in LocalQueue lq"},
		{name: "preempted, requeued, the timeout runs out while attempt 2 waits: the node fails",
			s: snap(t0.Add(3*time.Minute), tombOf(1, LimitPreempted, t0.Add(time.Minute)), startedAt(t0.Add(-time.Minute)), withWorkloads(wl(2, waitingFor("insufficient quota")))),
			p: queued(3 * time.Minute), phase: state.PhaseFailed, dequeue: []int{2}, msg: "FAILED: timed out after 3m0s (the template's timeout) while queued in LocalQueue lq; Workload wl-2 withdrawn"},
		{name: "a running driver's timeout counts from the node's start, the time queued included",
			s: snap(t0.Add(90*time.Second), runOf(driver(1, running())), startedAt(t0.Add(-time.Minute)), withWorkloads(wl(1, admittedWith(2)))),
			p: queued(2 * time.Minute), stop: LimitTimeout, phase: state.PhaseFailed, dequeue: []int{1}, msg: "timed out after 2m0s (the template's timeout)"},
		{name: "a Workload that can never be admitted: the node fails at once in Kueue's words; the Workload stays until the result is written",
			s: snap(t0, nil, startedAt(t0), withWorkloads(wl(1, neverFitting(overCapacity)))), p: queued(0),
			phase: state.PhaseFailed, msg: "FAILED: Kueue can never admit Workload wl-1 in LocalQueue lq: " + overCapacity},
		{name: "attempt 2 can never be admitted: the node fails",
			s: snap(t0.Add(2*time.Minute), tombOf(1, LimitPreempted, t0.Add(time.Minute)), withWorkloads(wl(2, neverFitting(overCapacity)))), p: queued(0),
			phase: state.PhaseFailed, msg: "FAILED: Kueue can never admit Workload wl-2 in LocalQueue lq: couldn't assign flavors to pod set executor"},
		{name: "a Workload that waits for quota in use: it waits",
			s: snap(t0, nil, startedAt(t0), withWorkloads(wl(1, waitingFor("couldn't assign flavors to pod set driver: insufficient unused quota for cpu in flavor default, 1 more needed")))), p: queued(0),
			phase: state.PhasePending, msg: "QUEUED: waiting in LocalQueue lq for Kueue to admit Workload wl-1: couldn't assign"},
	} {
		t.Run(row.name, func(t *testing.T) {
			pl := Decide(row.s, row.p)
			if pl.Launch != row.launch || pl.KueueEnqueue != row.enqueue || pl.Stop != row.stop {
				t.Errorf("launch %d enqueue %d stop %q; want %d %d %q", pl.Launch, pl.KueueEnqueue, pl.Stop, row.launch, row.enqueue, row.stop)
			}
			if got := dequeued(pl); !equalInts(got, row.dequeue) {
				t.Errorf("dequeue attempts %v, want %v", got, row.dequeue)
			}
			if !pl.Report || pl.Outcome.Phase != row.phase || !strings.Contains(pl.Outcome.Message(), row.msg) {
				t.Errorf("report %v, outcome %s %q; want %s containing %q", pl.Report, pl.Outcome.Phase, pl.Outcome.Message(), row.phase, row.msg)
			}
		})
	}
}

// A node that was Running in this incarnation stays Running while a
// later attempt waits, with that wait's message; a first attempt that
// never ran is Pending.
func TestDecideLaterAttemptStaysRunning(t *testing.T) {
	queued := policyOf(t, `"executor":{"instances":2}`, 0)
	queued.KueueQueue = "lq"
	onFailure := policyOf(t, onFailureRP, 0)
	entry := func(p state.Phase) func(*Snapshot) {
		return func(s *Snapshot) { s.EntryPhase = p }
	}
	refused2 := func(s *Snapshot) {
		s.Failures = map[int]Failure{2: {Count: 1, At: t0.Add(2*time.Minute - 2*time.Second), Message: "pods is forbidden: exceeded quota"}}
	}
	for _, row := range []struct {
		name  string
		s     *Snapshot
		p     Policy
		phase state.Phase
		msg   string
	}{
		{"preempted, attempt 2 admitted, its driver not started yet: Running, SUBMITTED",
			snap(t0.Add(2*time.Minute), runOf(driver(1, exited(143, "Error")), driver(2)), entry(state.PhaseRunning), withWorkloads(wl(2, admittedWith(2)))), queued,
			state.PhaseRunning, "SUBMITTED: "},
		{"the same while the cached entry still says Pending: the later attempt says Running",
			snap(t0.Add(2*time.Minute), runOf(driver(1, exited(143, "Error")), driver(2)), entry(state.PhasePending), withWorkloads(wl(2, admittedWith(2)))), queued,
			state.PhaseRunning, "SUBMITTED: "},
		{"a rerun after a failure, its driver pending: Running, SUBMITTED",
			snap(t0.Add(2*time.Minute), runOf(driver(1, exited(1, "Error")), driver(2))), onFailure,
			state.PhaseRunning, "SUBMITTED: "},
		{"a rerun whose submission was refused, backing off: Running, SUBMISSION_FAILED",
			snap(t0.Add(2*time.Minute), runOf(driver(1, exited(1, "Error"))), refused2, entry(state.PhaseRunning)), onFailure,
			state.PhaseRunning, "SUBMISSION_FAILED: retry 1/2"},
		{"attempt 2's launch interrupted by an API error: Running, retrying",
			snap(t0.Add(2*time.Minute), runOf(driver(1, exited(1, "Error"))), entry(state.PhaseRunning), func(s *Snapshot) {
				s.Befell, s.Acted = &Befell{Kind: Interrupted, Attempt: 2, Message: "create driver pod x: timeout"}, &Plan{Launch: 2}
			}), onFailure,
			state.PhaseRunning, "SUBMITTED: retrying after a transient API error"},
		{"attempt 1's launch interrupted, never Running: Pending",
			snap(t0, nil, func(s *Snapshot) {
				s.Befell, s.Acted = &Befell{Kind: Interrupted, Attempt: 1, Message: "create driver pod x: timeout"}, &Plan{Launch: 1}
			}), onFailure,
			state.PhasePending, "SUBMITTED: retrying after a transient API error"},
		{"the first attempt's driver pending, never Running: Pending",
			snap(t0.Add(time.Minute), runOf(driver(1)), entry(state.PhasePending)), onFailure,
			state.PhasePending, "SUBMITTED: "},
		{"the first attempt queued: Pending",
			snap(t0, nil, withWorkloads(wl(1, waitingFor("insufficient quota")))), queued,
			state.PhasePending, "QUEUED: "},
	} {
		t.Run(row.name, func(t *testing.T) {
			pl := Decide(row.s, row.p)
			if !pl.Report || pl.Outcome.Phase != row.phase || !strings.HasPrefix(pl.Outcome.Message(), row.msg) {
				t.Errorf("report %v, outcome %s %q; want %s starting %q", pl.Report, pl.Outcome.Phase, pl.Outcome.Message(), row.phase, row.msg)
			}
		})
	}
}
