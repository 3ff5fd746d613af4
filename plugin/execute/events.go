package execute

import (
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Kubernetes Events on the Workflow tell what happened to its Spark runs
// (`kubectl describe workflow`, `kubectl get events`), one per state
// change of a driver: SUBMITTED, RUNNING, COMPLETED, FAILED, PENDING_RERUN.

// eventLog remembers the last state reported per driver so an Event is
// recorded once per change. It is memory only: a restarted plugin may
// record one state again, which is harmless.
type eventLog struct {
	mu   sync.Mutex
	last map[string]string
}

func (l *eventLog) changed(driver, state string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]string{}
	}
	if l.last[driver] == state {
		return false
	}
	l.last[driver] = state
	return true
}

// stateWord is the first word of a message: the Spark state.
func stateWord(message string) string {
	w, _, _ := strings.Cut(message, ":")
	w, _, _ = strings.Cut(w, " ")
	return w
}

var eventReasons = map[string]string{
	"SUBMITTED":         "SparkSubmitted",
	"RUNNING":           "SparkRunning",
	"COMPLETED":         "SparkCompleted",
	"FAILED":            "SparkFailed",
	"PENDING_RERUN":     "SparkPendingRerun",
	"SUBMISSION_FAILED": "SparkSubmissionFailed",
	"UNKNOWN":           "SparkUnknown",
}

// stateEvent records an Event when a driver's state changed.
func (c *Core) stateEvent(wf spark.WorkflowRef, node, driver, message string) {
	word := stateWord(message)
	if !c.events.changed(driver, word) {
		return
	}
	reason, ok := eventReasons[word]
	if !ok {
		reason = "SparkState"
	}
	kind := corev1.EventTypeNormal
	if word == "FAILED" || word == "SUBMISSION_FAILED" || word == "UNKNOWN" {
		kind = corev1.EventTypeWarning
	}
	c.event(wf, kind, reason, "node "+node+", driver "+driver+": "+message)
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
