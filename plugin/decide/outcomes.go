package decide

import (
	"fmt"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// The answers sparkplug gives besides a run's own state (state.Assessment's
// Outcome, judge's PENDING_RERUN), as typed outcomes; state.Outcome.Message
// renders them all.

// Transient: an API error that asking again may cure.
func Transient(message string) state.Outcome {
	return state.Outcome{State: spark.StateSubmitted, Phase: state.PhasePending,
		Detail: "retrying after a transient API error: " + message}
}

// SubmitRunning: the attempt's spark-submit still runs.
func SubmitRunning() state.Outcome {
	return state.Outcome{State: spark.StateSubmitted, Phase: state.PhasePending, Detail: "spark-submit running"}
}

// SubmitQueued: as many spark-submits run as the plugin allows.
func SubmitQueued(running int) state.Outcome {
	return state.Outcome{State: spark.StateSubmitted, Phase: state.PhasePending,
		Detail: fmt.Sprintf("waiting for a spark-submit slot: %d run, as many as the plugin allows (max-spark-submits)", running)}
}

// Invalid: the step cannot run at all (its body or timeout is invalid);
// the message is the reason alone.
func Invalid(err error) state.Outcome {
	return state.Outcome{Phase: state.PhaseFailed, Detail: err.Error()}
}

// Declined: this process does not serve the request's workflow (the
// sidecar follows its own agent pod's, or as many as it may already), or
// may not write its TaskSet; the message is the reason alone.
func Declined(why string) state.Outcome {
	return state.Outcome{Phase: state.PhaseFailed, Detail: why}
}

// Refused: the workflow's node status is over what sparkplug reads of
// one, or not readable (why): whether a node is fulfilled or a loop's
// child is unknown, so none of its Spark steps runs.
func Refused(why string) state.Outcome {
	return state.Outcome{Phase: state.PhaseFailed, Detail: "sparkplug refused this workflow: " + why + "; its Spark steps do not run"}
}

// onceRunning is o as the node reports it: a node that was Running in
// this incarnation (its entry says so, or an attempt after the first
// exists, which the attempt before reported PENDING_RERUN, Running) stays
// Running while a later attempt waits (queued, submitted, its driver
// pending, a submission to retry), with that state's message: a node a
// person saw running does not look as if it never started.
func onceRunning(s *Snapshot, o state.Outcome) state.Outcome {
	if o.Phase != state.PhasePending {
		return o
	}
	if s.EntryPhase == state.PhaseRunning || (s.Run != nil && s.Run.Attempt() > 1) {
		o.Phase = state.PhaseRunning
	}
	return o
}

// ofMax is "n/max", as in "retry 1/2" and "attempt 2/3".
func ofMax(n int, max int32) string {
	return fmt.Sprintf("%d/%d", n, max)
}
