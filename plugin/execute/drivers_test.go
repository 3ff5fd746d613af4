package execute

import (
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/driverpod/drivertest"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// Builders of decide.Snapshots made of driver pods and tombstones, as
// gather would read them from the cache, for the tests of what the act
// side renders from a plan (progress_test.go, history_test.go).

// t0 is when the drivers of these tests were created.
var t0 = drivertest.T0

var (
	driver  = drivertest.Driver
	running = drivertest.Running
	exited  = drivertest.Exited
	evicted = drivertest.Evicted
)

// waitingOn: the driver container waits on reason.
func waitingOn(reason string) drivertest.Opt {
	return drivertest.WaitingOn(reason, "Back-off pulling image")
}

// runOf is a run of the attempts given, oldest first.
func runOf(attempts ...*corev1.Pod) *decide.Run { return &decide.Run{Attempts: attempts} }

// ghostDriver is the stand-in gather builds for a driver the node's entry
// names and the cluster no longer has.
var ghostDriver = drivertest.Ghost

// tombOf is a run whose driver sparkplug stopped at stoppedAt for l, as
// gather reads it: the tombstone, and its stand-in (gather's own) as the
// head.
func tombOf(node string, attempt int, l decide.Limit, stoppedAt time.Time) *decide.Run {
	cm, _ := drivertest.Tomb(node, attempt, string(l), stoppedAt)
	return &decide.Run{Attempts: []*corev1.Pod{tombStandIn(cm)}, Tomb: cm}
}

// snapOf is a snapshot at now of node n1 with run rn (nil: none), which
// the Workflow shows Running, outside any loop.
func snapOf(now time.Time, rn *decide.Run) *decide.Snapshot {
	return &decide.Snapshot{Now: now, NodeID: "n1", Run: rn, LoopKnown: true}
}

// sparkBody is a SparkPi body with extra fields (JSON, after a comma).
func sparkBody(t *testing.T, extra string) *spec.SparkApplicationSpec {
	t.Helper()
	raw := `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar"`
	if extra != "" {
		raw += "," + extra
	}
	s, err := spec.Parse([]byte(raw + "}"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Policies of these tests.
func never(t *testing.T) decide.Policy { return policyOf(t, "", 0) }

func onFailure(t *testing.T) decide.Policy {
	return policyOf(t, `"restartPolicy":{"type":"OnFailure","onFailureRetries":2,"onFailureRetryInterval":10,"onSubmissionFailureRetries":2,"onSubmissionFailureRetryInterval":5}`, 0)
}

func policyOf(t *testing.T, extra string, timeout time.Duration) decide.Policy {
	return decide.Policy{Body: sparkBody(t, extra), Timeout: timeout, NotFoundGrace: 30 * time.Second}
}

// asReply wraps a node's result as a reply, for the helpers that read
// outputs (param, outputParam, exitCodeOf).
func asReply(res wfv1.NodeResult) executor.ExecuteTemplateReply {
	return executor.ExecuteTemplateReply{Node: &res}
}
