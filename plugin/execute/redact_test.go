package execute

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// refusal is an API server's refusal quoting what it refused, as a
// node's message and an Event pass it on (issue #20, finding 6).
const refusal = `Pod "pi-driver" is invalid: spec.containers[0].args: Invalid value: "--db-password=leak01": ` +
	`spark.jars=https://u:leak02@repo/x.jar, jdbc:postgresql://h/db?user=u&password=leak03`

func shows(t *testing.T, what, text string) {
	t.Helper()
	for _, secret := range []string{"leak01", "leak02", "leak03"} {
		if strings.Contains(text, secret) {
			t.Errorf("%s shows %s: %s", what, secret, text)
		}
	}
	if !strings.Contains(text, "spec.containers[0].args: Invalid value") {
		t.Errorf("%s lost the API server's words: %s", what, text)
	}
}

// A node's message shows no secret the API server's words quote.
func TestResultMessageIsRedacted(t *testing.T) {
	c := &Core{}
	node := c.result(state.SubmissionFailed(refusal), nil, false, nil, nil)
	shows(t, "the node's message", node.Message)
}

// Neither a driver's state Event nor any other Event shows one.
func TestEventsAreRedacted(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	c := &Core{recorder: rec}
	wf := spark.WorkflowRef{Name: "wf", Namespace: "ns", UID: "u"}
	c.stateEvent(wf, "n1", "n1-driver", state.SubmissionFailed(refusal))
	c.event(wf, corev1.EventTypeWarning, spark.ReasonObjectRefused, "Service pi-ui of driver pi-driver not created: "+refusal)
	close(rec.Events)
	n := 0
	for e := range rec.Events {
		n++
		shows(t, "an Event", e)
	}
	if n != 2 {
		t.Errorf("%d Events, want 2", n)
	}
}
