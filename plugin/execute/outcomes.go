package execute

import (
	"fmt"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// The answers sparkplug gives besides a run's own state (state.Assessment's
// Outcome, judge's PENDING_RERUN), as typed outcomes; state.Outcome.Message
// renders them all.

// unlisted: no node with the request's template is in the TaskSet yet.
func unlisted() state.Outcome {
	return state.Outcome{State: spark.StateSubmitted, Phase: wfv1.NodePending,
		Detail: "waiting for the workflow's task set to list this step"}
}

// waitingForIdentical: every open identical node's run went to another
// node, whose result is not recorded yet.
func waitingForIdentical() state.Outcome {
	return state.Outcome{State: spark.StateRunning, Phase: wfv1.NodeRunning,
		Detail: "waiting for an identical step's driver to finish"}
}

// transient: an API error that asking again may cure.
func transient(message string) state.Outcome {
	return state.Outcome{State: spark.StateSubmitted, Phase: wfv1.NodePending,
		Detail: "retrying after a transient API error: " + message}
}

// submitRunning: the attempt's spark-submit still runs.
func submitRunning() state.Outcome {
	return state.Outcome{State: spark.StateSubmitted, Phase: wfv1.NodePending, Detail: "spark-submit running"}
}

// submitQueued: as many spark-submits run as the plugin allows.
func submitQueued(running int) state.Outcome {
	return state.Outcome{State: spark.StateSubmitted, Phase: wfv1.NodePending,
		Detail: fmt.Sprintf("waiting for a spark-submit slot: %d run, as many as the plugin allows (max-spark-submits)", running)}
}

// invalid: the step cannot run at all (its body or timeout is invalid);
// the message is the reason alone.
func invalid(err error) state.Outcome {
	return state.Outcome{Phase: wfv1.NodeFailed, Detail: err.Error()}
}

// ofMax is "n/max", as in "retry 1/2" and "attempt 2/3".
func ofMax(n int, max int32) string {
	return fmt.Sprintf("%d/%d", n, max)
}
