package decide

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/confvalue"
	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// Plan is what one pass over one node must do, and what it reports.
type Plan struct {
	// Launch is the attempt to launch now; 0: none.
	Launch int
	// Stop is the limit that ended the newest attempt, whose driver must
	// be stopped (before any launch); LimitNone: none. Ended is what
	// ended it, for the tombstone.
	Stop  Limit
	Ended state.Assessment
	// Abandon: someone else fulfilled the node (Argo after a stop, a
	// deadline, the agent after a transport error) while its driver still
	// runs. Nothing will ever read the run's result: stop the driver and
	// report nothing.
	Abandon bool
	// Ensure: the newest driver runs; the objects it owns must exist.
	Ensure bool
	// Archive: the driver ended by itself and its log must be stored
	// before the final result is written.
	Archive bool
	// Discard is a driver that must not run: a companion it needs was
	// refused, or a name of its run is another's (befell.go). It is
	// deleted first, and what it owns with it.
	Discard *corev1.Pod
	// Refuse is the attempt whose submission is counted as refused, for
	// Refusal (what was said); 0: none. Nothing else is done: the next
	// pass reports the refusal (befell.go).
	Refuse  int
	Refusal string
	// DrawNames: Launch runs under names drawn now (objects.Run.NameKey),
	// which nobody can hold, because another's objects hold the run's.
	DrawNames bool
	// Waive is a companion the API server refused (what it said) that
	// the newest driver, running already, runs on without; it is said,
	// and its companions are not checked again.
	Waive string
	// Report: write Outcome for the node, its outputs naming Driver (nil:
	// none) as a JSON string when JSON (the node is a loop's child).
	Report  bool
	Outcome state.Outcome
	Driver  *corev1.Pod
	JSON    bool

	// A queued step's Kueue Workloads (kueue.go). KueueEnqueue is the
	// attempt whose Workload to create: it launches only once Kueue admits
	// it.
	KueueEnqueue int
	// Admission is the admitted Workload the Launch attempt runs with.
	Admission *Workload
	// KueueDequeue are the Workloads to delete: their attempt is over, or
	// the node is, so their quota goes back at once.
	KueueDequeue []Workload
	// PodsReady is the Workload to mark PodsReady: its driver and the
	// executors it was admitted for run.
	PodsReady *Workload
}

// Decide plans one pass over the node of s. It is pure: the same snapshot
// and policy always give the same plan.
//
// What befell an action of the pass just before (Snapshot.Befell) is
// reported, or decides what is done of the rest of that pass's plan
// (befell.go). A node someone else
// fulfilled is closed: its live driver is abandoned
// and nothing is reported. A node without a run launches attempt 1 (after
// the backoff of refused submissions). A node with a run reports the run's
// verdict: its state, the time limits and the restart policy applied;
// a limit that ended the attempt stops its driver, a rerun launches the
// next attempt, and a driver that ended by itself has its log stored
// first when the step asks for it.
func Decide(s *Snapshot, p Policy) Plan {
	pl := plan(s, p)
	if pl.Report && pl.Driver != nil {
		pl.Outcome = driverParts(pl.Outcome, pl.Driver, s.Progress)
	}
	if pl.Report {
		pl.Outcome = onceRunning(s, pl.Outcome)
	}
	return pl
}

// plan is Decide but for the parts of the message that tell of the
// driver the outputs name (driverParts).
func plan(s *Snapshot, p Policy) Plan {
	rn := s.Run
	if s.Befell != nil {
		return afterAction(s, p, s.InLoop)
	}
	if s.Fulfilled || s.EntryPhase.Fulfilled() || s.FinalRemoved {
		pl := Plan{Abandon: rn != nil && rn.Live()}
		release(s, &pl, 0)
		return pl
	}
	loop, known := s.InLoop, s.LoopKnown
	if rn == nil {
		pl := Plan{Launch: 1, JSON: loop}
		if b := backoff(s, p, 1); b != nil {
			pl = Plan{Report: true, Outcome: *b, JSON: loop}
		}
		release(s, &pl, gate(s, p, &pl, nil))
		return pl
	}
	v, l := verdict(s, p, rn)
	if (l == LimitPreempted || l == LimitEvicted) && needsArchive(rn, p.Body) {
		// Kueue took the quota back, but holds it for the Workload until
		// sparkplug deletes it: the driver's log is stored first, then
		// the driver stops.
		out := v.Outcome
		out.Archive = state.ArchivingBeforeStop
		out.Phase = state.PhaseRunning
		pl := Plan{Archive: true, Report: true, Outcome: out, Driver: rn.Head(), JSON: loop}
		release(s, &pl, rn.Attempt())
		return pl
	}
	pl := Plan{Ensure: rn.Live(), Report: true, Outcome: v.Outcome, Driver: rn.Head(), JSON: loop}
	if l != LimitNone && (v.Relaunch || v.Final) {
		pl.Stop, pl.Ended = l, v.Ended
	}
	if v.Relaunch {
		if b := backoff(s, p, rn.Attempt()+1); b != nil {
			pl.Outcome = *b
		} else {
			pl.Launch = rn.Attempt() + 1
		}
	}
	keep := gate(s, p, &pl, &v.Ended)
	if keep == 0 && rn.Live() && pl.Stop == LimitNone {
		keep = rn.Attempt()
		pl.PodsReady = podsReady(s, p, rn)
	}
	release(s, &pl, keep)
	if v.Final && pl.Stop == LimitNone && needsArchive(rn, p.Body) {
		pl.Archive = true
		pl.Outcome.Phase = state.PhaseRunning
		pl.Outcome.Archive = state.ArchivingLog
	}
	if pl.Outcome.Phase.Completed() && !known {
		// Whether the node is a loop's child (a JSON result) is unknown
		// while the cached Workflow lags; a final result is written once,
		// so it waits for the Workflow.
		pl.Report = false
	}
	return pl
}

// needsArchive: the step stores driver logs, and the newest driver ended
// by itself with its log neither stored nor refused yet.
func needsArchive(rn *Run, body *spec.SparkApplicationSpec) bool {
	if !body.ArchivesLogs() || rn.Ghost || rn.Tomb != nil {
		return false
	}
	h := rn.Head()
	return h.DeletionTimestamp == nil && h.Annotations[spark.AnnotationDriverLog] == "" && h.Annotations[spark.AnnotationDriverLogError] == ""
}

// verdict assesses a run's newest attempt, applies the time limits and the
// restart policy, and says which limit, if any, ended the attempt.
func verdict(s *Snapshot, p Policy, rn *Run) (Verdict, Limit) {
	head := rn.Head()
	if rn.Tomb != nil {
		return tombVerdict(s, p, rn), LimitNone
	}
	a := state.Assess(state.Observed{
		Driver:           rn.ObservedHead(),
		Executors:        rn.Executors,
		Expected:         expectedExecutors(p.Body),
		Dynamic:          p.Body.DynamicAllocationEnabled(),
		SubmittedAt:      submittedAt(rn),
		Now:              s.Now,
		NotFoundGrace:    p.NotFoundGrace,
		ProgressInterval: p.ProgressInterval,
	})
	pending := p.Body.PendingTimeout()
	a, l := limits(a, rn.ObservedHead(), timeoutFrom(s), s.Now, p.Timeout, pending)
	if l == LimitNone && !a.Done {
		if w, ok := s.WorkloadOf(rn.Attempt()); ok && w.Evicted {
			return evicted(w, a, rn.Attempt(), p.Body)
		}
	}
	ended := driverpod.EndedAt(head, s.Now)
	switch {
	case l == LimitTimeout:
		return Verdict{Final: true, Outcome: withAttempt(a.Outcome(), attemptPart(rn.Attempt(), p.Body.RestartPolicy)), Ended: a}, l
	case l == LimitPending:
		ended = head.CreationTimestamp.Add(pending)
	case l == LimitCannotStart:
		ended = head.CreationTimestamp.Time
	case rn.Ghost:
		ended = rn.MissingSince.Add(p.NotFoundGrace)
	}
	return judge(a, rn.Attempt(), p.Body.RestartPolicy, ended, s.Now), l
}

// tombVerdict is the verdict of a run whose newest driver sparkplug
// stopped: what the tombstone recorded, with the restart policy applied
// again (a stopped attempt may still be followed by another).
func tombVerdict(s *Snapshot, p Policy, rn *Run) Verdict {
	ann := rn.Tomb.Annotations
	a := state.Assessment{State: spark.StateFailing, Done: true, Reason: ann[spark.AnnotationStoppedReason], Detail: ann[spark.AnnotationStoppedDetail]}
	switch Limit(ann[spark.AnnotationStopped]) {
	case LimitTimeout, LimitEvicted:
		return Verdict{Final: true, Outcome: withAttempt(a.Outcome(), attemptPart(rn.Attempt(), p.Body.RestartPolicy))}
	case LimitPreempted:
		return requeue(a, rn.Attempt())
	}
	stoppedAt, err := time.Parse(time.RFC3339, ann[spark.AnnotationStoppedAt])
	if err != nil {
		stoppedAt = rn.Tomb.CreationTimestamp.Time
	}
	return judge(a, rn.Attempt(), p.Body.RestartPolicy, stoppedAt, s.Now)
}

// backoff is the outcome while an attempt must still wait after refused
// submissions (linear, onSubmissionFailureRetryInterval per failure), the
// final refusal (Failed) once no retry is left, else nil.
func backoff(s *Snapshot, p Policy, attempt int) *state.Outcome {
	f := s.Failures[attempt]
	if f.Count == 0 {
		return nil
	}
	if out := afterRefusal(f, p.Body); out.Phase == state.PhaseFailed {
		return &out // no retry left: the refusal stands
	}
	rp := p.Body.RestartPolicy
	interval := time.Duration(deref64(rp.OnSubmissionFailureRetryInterval, 5)) * time.Second
	at := f.At.Add(time.Duration(f.Count) * interval)
	if !s.Now.Before(at) {
		return nil
	}
	o := state.Outcome{State: spark.StateSubmissionFailed, Phase: state.PhasePending,
		Detail: fmt.Sprintf("retry %s in %s: %s", ofMax(f.Count, deref32(rp.OnSubmissionFailureRetries, 0)), at.Sub(s.Now).Round(time.Second), f.Message)}
	return &o
}

// afterRefusal is the outcome once a submission was refused, f counting
// it: a retry later while restartPolicy.onSubmissionFailureRetries allows
// one, else Failed.
func afterRefusal(f Failure, body *spec.SparkApplicationSpec) state.Outcome {
	rp := body.RestartPolicy
	retries := deref32(rp.OnSubmissionFailureRetries, 0)
	if f.Count <= int(retries) && rp.Type != spec.RestartNever {
		return state.Outcome{State: spark.StateSubmissionFailed, Phase: state.PhasePending,
			Detail: fmt.Sprintf("retry %s soon: %s", ofMax(f.Count, retries), f.Message)}
	}
	return state.SubmissionFailed(f.Message)
}

func submittedAt(rn *Run) time.Time {
	if rn.Ghost {
		return rn.MissingSince
	}
	return rn.Head().CreationTimestamp.Time
}

// runStart is when the run of s started, from which the template's
// timeout counts: when the Workflow shows its node started, else when
// the run's first driver that still exists was created (rn nil: none),
// whichever was first. A step queued with Kueue waits before its first
// driver, and that wait is part of the run.
func runStart(s *Snapshot, rn *Run) time.Time {
	var start time.Time
	switch {
	case rn == nil:
	case rn.Ghost && len(rn.Attempts) == 1:
		start = rn.MissingSince
	default:
		start = rn.Attempts[0].CreationTimestamp.Time
	}
	if !s.Started.IsZero() && (start.IsZero() || s.Started.Before(start)) {
		start = s.Started
	}
	return start
}

// expectedExecutors is how many executors a running application should
// have, as the driver's conf says (objects.Properties: sparkConf beats the
// field): sparkConf's spark.executor.instances, else executor.instances,
// else 1 (spec defaulting's); none is expected under dynamic allocation,
// by the field or by sparkConf.
func expectedExecutors(s *spec.SparkApplicationSpec) int32 {
	if s.DynamicAllocationEnabled() {
		return 0
	}
	if n, err := confvalue.Int(spark.ConfExecutorInstances, s.SparkConf[spark.ConfExecutorInstances]); err == nil && n >= 0 {
		return n
	}
	if s.Executor.Instances != nil {
		return *s.Executor.Instances
	}
	return 1
}
