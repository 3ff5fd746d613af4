package cleanup

import (
	"fmt"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Ended is the one rule for "this workflow has ended": its phase is a
// completed one (read where w is the whole Workflow), Argo labelled it
// completed (all a Workflow's metadata says), or it is being deleted.
// A Workflow `argo retry` made run again has neither, and has not ended.
func Ended(w metav1.Object) bool {
	if wf, ok := w.(*wfv1.Workflow); ok && wf.Status.Phase.Completed() {
		return true
	}
	return w.GetLabels()[spark.ArgoLabelCompleted] == "true" || w.GetDeletionTimestamp() != nil
}

// Ending reports whether nothing a Workflow launched should run on: it
// ended, or it was stopped or terminated (spec.shutdown; its exit
// handlers may still run).
func Ending(w *wfv1.Workflow) bool { return w.Spec.Shutdown != "" || Ended(w) }

// State is what the API server says of a driver's Workflow.
type State uint8

const (
	// Running: it exists and has not ended; its sidecar (or the next one
	// Argo starts), or the controller, looks after its drivers.
	Running State = iota
	// EndedState: it exists and has ended (Ended).
	EndedState
	// Gone: no Workflow of its name, or one of another uid.
	Gone
)

// StateOf is the state of the Workflow of uid, given what reading it by
// name returned; err is returned when it says nothing (not a not-found).
func StateOf(w metav1.Object, err error, uid string) (State, error) {
	switch {
	case apierrors.IsNotFound(err):
		return Gone, nil
	case err != nil:
		return Running, err
	case string(w.GetUID()) != uid:
		return Gone, nil
	case Ended(w):
		return EndedState, nil
	}
	return Running, nil
}

// Reasons of a deletion: the values of the metrics' reason label
// (sparkplug_monitor_drivers_deleted_total, and the drivers counter's
// deleted action).
const (
	ReasonExpired         = "expired"
	ReasonWorkflowEnded   = "workflow_ended"
	ReasonWorkflowDeleted = "workflow_deleted"
)

// Verdict says whether a search for leftovers deletes driver p of a
// workflow in state wf, and why (a Reason); "" keeps it. p must be a
// driver driverpod.OwnDriver accepted.
func Verdict(p *corev1.Pod, wf State, now time.Time) string {
	switch {
	case wf == Running || p.DeletionTimestamp != nil:
		return ""
	case driverpod.Expired(p, now):
		return ReasonExpired
	case wf == EndedState && !driverpod.Finished(p):
		return ReasonWorkflowEnded
	case wf == Gone:
		return ReasonWorkflowDeleted
	}
	return ""
}

// EndingReason says, for an Event, why an ending workflow's drivers go.
func EndingReason(w *wfv1.Workflow) string {
	switch {
	case w.DeletionTimestamp != nil:
		return "the workflow is being deleted"
	case w.Spec.Shutdown != "":
		return fmt.Sprintf("the workflow was shut down (%s)", w.Spec.Shutdown)
	default:
		return fmt.Sprintf("the workflow finished (%s)", w.Status.Phase)
	}
}

// sweepReason says whether a workflow's drivers are swept at shutdown,
// and why: w is the Workflow as read now (nil: not found), uid the one the
// process served. A Workflow still running is left to the agent that will
// serve it next.
func sweepReason(w *wfv1.Workflow, uid string) (string, bool) {
	switch {
	case w == nil || string(w.UID) != uid:
		return "the workflow was deleted", true
	case Ending(w):
		return EndingReason(w), true
	default:
		return "", false
	}
}
