package decide

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/kueue"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// A queued step (Policy.KueueQueue) launches each attempt only once Kueue
// admits the attempt's Workload, which asks for the driver and its
// executors together; the Workload lives as long as its attempt does.

// Workload is one of a node's Kueue Workloads, with the attempt it is
// for and whether that attempt is of the current incarnation.
type Workload struct {
	kueue.View
	Attempt int
	Current bool
}

// WorkloadOf is the current incarnation's Workload of attempt n.
func (s *Snapshot) WorkloadOf(n int) (Workload, bool) {
	for _, w := range s.Workloads {
		if w.Current && w.Attempt == n && !w.Deleting {
			return w, true
		}
	}
	return Workload{}, false
}

// gate holds the launch a plan asks for (pl.Launch) until Kueue admits
// its attempt's Workload: without one, the plan creates it (KueueEnqueue);
// while it waits, the node says so; once admitted, the launch goes ahead
// with it (Admission). ended is what ended the previous attempt (nil for
// the first). It returns the attempt whose Workload must stay, 0: none.
//
// The wait has two ends besides admission, both final whatever the
// restart policy says: the template's timeout, counted from the node's
// start, runs out (the Workload is withdrawn), or Kueue says the
// Workload can never be admitted as its ClusterQueue stands (a pod set
// over the queue's whole capacity; the Workload stays until the result
// is written, so that it is not made again meanwhile).
func gate(s *Snapshot, p Policy, pl *Plan, ended *state.Assessment) int {
	n := pl.Launch
	if n == 0 || p.KueueQueue == "" {
		return 0
	}
	w, ok := s.WorkloadOf(n)
	if start := timeoutFrom(s); p.Timeout > 0 && !start.IsZero() && !s.Now.Before(start.Add(p.Timeout)) {
		detail := fmt.Sprintf("timed out after %s (the template's timeout) while queued in LocalQueue %s", p.Timeout, p.KueueQueue)
		if ok {
			detail += "; Workload " + w.Name + " withdrawn"
		}
		endQueued(p, pl, n, detail)
		return 0
	}
	switch {
	case ok && w.NeverFits != "" && !w.Admitted:
		endQueued(p, pl, n, fmt.Sprintf("Kueue can never admit Workload %s in LocalQueue %s: %s", w.Name, p.KueueQueue, w.NeverFits))
		return n
	case ok && w.Admitted:
		pl.Admission = &w
		return n
	case ok && w.Evicted:
		// Evicted before its driver was made: it holds nothing; a new
		// one queues on the next pass.
		pl.Launch = 0
		pl.Report, pl.Outcome = true, queued(p, n, ended, "", "Kueue evicted Workload "+w.Name+" before it started ("+w.EvictedReason+"); queuing it again")
		return 0
	case ok:
		pl.Launch = 0
		why := w.Waiting
		if w.Position != nil {
			ahead := fmt.Sprintf("%d Workloads ahead of it", *w.Position)
			switch *w.Position {
			case 0:
				ahead = "next in line"
			case 1:
				ahead = "1 Workload ahead of it"
			}
			why = strings.TrimSuffix(ahead+"; "+why, "; ")
		}
		pl.Report, pl.Outcome = true, queued(p, n, ended, w.Name, why)
		return n
	default:
		pl.Launch = 0
		if s.WorkloadsKnown {
			pl.KueueEnqueue = n
		}
		pl.Report, pl.Outcome = true, queued(p, n, ended, "", "")
		return n
	}
}

// endQueued ends the node while attempt n waits for Kueue, for good
// (detail says why): nothing launches or is queued, and the node fails.
func endQueued(p Policy, pl *Plan, n int, detail string) {
	a := state.Assessment{State: spark.StateFailing, Done: true, Detail: detail}
	pl.Launch, pl.KueueEnqueue, pl.Admission = 0, 0, nil
	pl.Report, pl.Outcome = true, withAttempt(a.Outcome(), attemptPart(n, p.Body.RestartPolicy))
}

// queued is what a node says while attempt n waits for Kueue (to admit
// Workload name, when it exists; why is Kueue's reason): the first
// attempt QUEUED (Pending: nothing of it runs), a later one PENDING_RERUN
// after what ended the previous attempt.
func queued(p Policy, n int, ended *state.Assessment, name, why string) state.Outcome {
	what := "for Kueue"
	if name != "" {
		what += " to admit Workload " + name
	}
	if n == 1 || ended == nil {
		detail := fmt.Sprintf("waiting in LocalQueue %s %s", p.KueueQueue, what)
		if why != "" {
			detail += ": " + why
		}
		return state.Outcome{State: spark.StateQueued, Phase: state.PhasePending, Detail: detail}
	}
	detail := fmt.Sprintf("attempt %s waits in LocalQueue %s %s", attemptOfMax(n, p.Body.RestartPolicy), p.KueueQueue, what)
	if why != "" {
		detail += " (" + why + ")"
	}
	return pendingRerun(detail+"; after", *ended)
}

// release puts in the plan the node's Workloads to delete: every one but
// keep's (the attempt that waits, launches or runs), so that no quota is
// held for an attempt that is over, a node that is over, or an older
// incarnation.
func release(s *Snapshot, pl *Plan, keep int) {
	for _, w := range s.Workloads {
		if w.Deleting || (w.Current && w.Attempt == keep) {
			continue
		}
		pl.KueueDequeue = append(pl.KueueDequeue, w)
	}
}

// evicted is the verdict on a live attempt whose Workload Kueue evicted:
// its driver stops, and a preempted step that requeues queues attempt+1,
// whatever its restart policy; anything else fails the node.
func evicted(w Workload, a state.Assessment, attempt int, body *spec.SparkApplicationSpec) (Verdict, Limit) {
	ended := state.Assessment{State: spark.StateFailing, Done: true, Infrastructure: true, Executors: a.Executors,
		Detail: fmt.Sprintf("evicted by Kueue (%s): %s", w.EvictedReason, w.EvictedMessage)}
	if w.Preempted() && body.RequeuesOnPreemption() {
		return requeue(ended, attempt), LimitPreempted
	}
	return Verdict{Final: true, Outcome: withAttempt(ended.Outcome(), attemptPart(attempt, body.RestartPolicy)), Ended: ended}, LimitEvicted
}

// requeue is the verdict on an attempt Kueue preempted: the next attempt
// queues at once (Kueue decides when it runs).
func requeue(a state.Assessment, attempt int) Verdict {
	return Verdict{Relaunch: true, Ended: a, Outcome: pendingRerun(fmt.Sprintf("requeuing as attempt %d after", attempt+1), a)}
}

// podsReady is the Workload to mark PodsReady, nil when none: the
// newest attempt's, admitted and not marked yet, once its driver runs
// with the executors Kueue admitted (all of them; under dynamic
// allocation, which starts and ends executors as it goes, the driver
// alone).
func podsReady(s *Snapshot, p Policy, rn *Run) *Workload {
	w, ok := s.WorkloadOf(rn.Attempt())
	if !ok || !w.Admitted || w.PodsReady || w.Evicted || rn.Head().Status.Phase != corev1.PodRunning {
		return nil
	}
	if !p.Body.DynamicAllocationEnabled() {
		want, ok := w.Assigned(kueue.PodSetExecutor)
		if !ok {
			want = expectedExecutors(p.Body)
		}
		running := int32(0)
		for _, e := range rn.Executors {
			if e.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		if running < want {
			return nil
		}
	}
	return &w
}
