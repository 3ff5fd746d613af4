package execute

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

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

var eventReasons = map[spark.State]string{
	spark.StateSubmitted:        "SparkSubmitted",
	spark.StateRunning:          "SparkRunning",
	spark.StateCompleted:        "SparkCompleted",
	spark.StateFailed:           "SparkFailed",
	spark.StatePendingRerun:     "SparkPendingRerun",
	spark.StateSubmissionFailed: "SparkSubmissionFailed",
	spark.StateUnknown:          "SparkUnknown",
}

// stateEvent records an Event when a driver's state changed: its reason
// and type come from the outcome's state, its text is the message.
func (c *Core) stateEvent(wf spark.WorkflowRef, node, driver string, o state.Outcome) {
	if !c.events.changed(driver, o.State) {
		return
	}
	reason, ok := eventReasons[o.State]
	if !ok {
		reason = "SparkState"
	}
	kind := corev1.EventTypeNormal
	switch o.State {
	case spark.StateFailed, spark.StateSubmissionFailed, spark.StateUnknown:
		kind = corev1.EventTypeWarning
	}
	c.event(wf, kind, reason, "node "+node+", driver "+driver+": "+o.Message())
}

func (c *Core) event(wf spark.WorkflowRef, kind, reason, message string) {
	if c.recorder == nil {
		return
	}
	ref := &corev1.ObjectReference{
		APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow",
		Namespace: wf.Namespace, Name: wf.Name, UID: types.UID(wf.UID),
	}
	c.recorder.Event(ref, kind, reason, message)
}

// Recorder is what records Events; client-go's record.EventRecorder.
type Recorder = record.EventRecorder
