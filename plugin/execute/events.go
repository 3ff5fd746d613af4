package execute

import (
	"sync"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/redact"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// Kubernetes Events on the Workflow tell what happened to its Spark runs
// (`kubectl describe workflow`, `kubectl get events`), one per state
// change of a driver: SUBMITTED, RUNNING, COMPLETED, FAILED, PENDING_RERUN.

// eventLog remembers the last state reported per driver so an Event is
// recorded once per change. It is memory only: a restarted plugin may
// record one state again, which is harmless.
type eventLog struct {
	mu   sync.Mutex
	last map[string]spark.State
}

func (l *eventLog) changed(driver string, state spark.State) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]spark.State{}
	}
	if l.last[driver] == state {
		return false
	}
	l.last[driver] = state
	return true
}

// eventReasons are the reasons of the driver states' Events.
var eventReasons = map[spark.State]string{
	spark.StateSubmitted:        spark.ReasonSubmitted,
	spark.StateRunning:          spark.ReasonRunning,
	spark.StateCompleted:        spark.ReasonCompleted,
	spark.StateFailed:           spark.ReasonFailed,
	spark.StatePendingRerun:     spark.ReasonPendingRerun,
	spark.StateSubmissionFailed: spark.ReasonSubmissionFailed,
	spark.StateUnknown:          spark.ReasonUnknown,
}

// stateEvent records an Event when a driver's state changed: its reason
// and type come from the outcome's state, its text is the message.
func (c *Core) stateEvent(wf spark.WorkflowRef, node, driver string, o state.Outcome) {
	if !c.events.changed(driver, o.State) {
		return
	}
	// The Event tells of the state; Spark's progress moves on within it.
	o.Progress = ""
	reason, ok := eventReasons[o.State]
	if !ok {
		reason = spark.ReasonOtherState
	}
	c.event(wf, stateEventType(o.State), reason, "node "+node+", driver "+driver+": "+o.Message())
}

// stateEventType is the type of a driver state's Event: Warning for the
// states a person should look at, Normal for the rest.
func stateEventType(s spark.State) string {
	switch s {
	case spark.StateFailed, spark.StateSubmissionFailed, spark.StateUnknown:
		return corev1.EventTypeWarning
	}
	return corev1.EventTypeNormal
}

// onRefused says, on the Workflow, that its nodes were refused
// (scope.Refused) and why: its Spark steps fail (reconcile).
func (c *Core) onRefused(wf *wfv1.Workflow, why string) {
	c.event(spark.WorkflowRef{Name: wf.Name, Namespace: wf.Namespace, UID: string(wf.UID)}, corev1.EventTypeWarning,
		spark.ReasonWorkflowRefused, decide.Refused(why).Message())
}

func (c *Core) event(wf spark.WorkflowRef, kind, reason, message string) {
	if c.recorder == nil {
		return
	}
	ref := &corev1.ObjectReference{
		APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow",
		Namespace: wf.Namespace, Name: wf.Name, UID: types.UID(wf.UID),
	}
	// An Event quotes the API server's and spark-submit's words: what
	// they hold goes through the rule set of package redact.
	c.recorder.Event(ref, kind, reason, redact.Value(message))
}

// Recorder is what records Events; client-go's record.EventRecorder.
type Recorder = record.EventRecorder
