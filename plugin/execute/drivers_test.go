package execute

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// Builders of decide.Snapshots made of driver pods and tombstones, as
// gather would read them from the cache, for the tests of what the act
// side renders from a plan (progress_test.go, history_test.go).

// t0 is when the drivers of these tests were created.
var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

type podOpt func(*corev1.Pod)

// driver is the driver of attempt n of node's run, created at t0,
// Pending until an option says otherwise.
func driver(node string, attempt int, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-a%d-driver", node, attempt), Namespace: "jobs", UID: types.UID("uid-" + node + "-" + strconv.Itoa(attempt)),
			CreationTimestamp: metav1.NewTime(t0),
			Labels: map[string]string{spark.LabelRole: spark.RoleDriver, spark.LabelAttempt: strconv.Itoa(attempt),
				spark.LabelAppSelector: fmt.Sprintf("spark-%s-%d", node, attempt)},
			Annotations: map[string]string{spark.AnnotationNodeID: node},
		},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: spark.DriverContainerName}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func containerState(p *corev1.Pod, s corev1.ContainerState) {
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: spark.DriverContainerName, State: s}}
}

func running() podOpt {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		containerState(p, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}})
	}
}

// exited: the driver container ended with code at t0+1m.
func exited(code int32, reason string) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		if code == 0 {
			p.Status.Phase = corev1.PodSucceeded
		}
		containerState(p, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, FinishedAt: metav1.NewTime(t0.Add(time.Minute))}})
	}
}

// waitingOn: the driver container waits on reason.
func waitingOn(reason string) podOpt {
	return func(p *corev1.Pod) {
		containerState(p, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "Back-off pulling image"}})
	}
}

func evicted() podOpt {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.Reason, p.Status.Message = "Evicted", "The node was low on resource: memory."
	}
}

// runOf is a run of the attempts given, oldest first.
func runOf(attempts ...*corev1.Pod) *decide.Run { return &decide.Run{Attempts: attempts} }

// ghostDriver is the stand-in gather builds for a driver the node's entry
// names and the cluster no longer has: its name, attempt and application
// id, as recorded.
func ghostDriver(node string, attempt int, appID string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: fmt.Sprintf("%s-a%d-driver", node, attempt), Namespace: "jobs",
		Labels:      map[string]string{spark.LabelAttempt: strconv.Itoa(attempt), spark.LabelAppSelector: appID},
		Annotations: map[string]string{spark.AnnotationNodeID: node},
	}}
}

// tombOf is a run whose driver sparkplug stopped at stoppedAt for l, as
// gather reads it: the tombstone, and its stand-in as the head.
func tombOf(node string, attempt int, l decide.Limit, stoppedAt time.Time) *decide.Run {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: node + "-conf", Namespace: "jobs", CreationTimestamp: metav1.NewTime(stoppedAt),
		Labels: map[string]string{spark.LabelAttempt: strconv.Itoa(attempt)},
		Annotations: map[string]string{
			spark.AnnotationNodeID: node, spark.AnnotationDriver: fmt.Sprintf("%s-a%d-driver", node, attempt),
			spark.AnnotationStopped: string(l), spark.AnnotationStoppedAt: stoppedAt.UTC().Format(time.RFC3339),
			spark.AnnotationStoppedReason: string(l), spark.AnnotationStoppedDetail: "stopped for " + string(l),
		},
	}}
	return &decide.Run{Attempts: []*corev1.Pod{tombStandIn(cm)}, Tomb: cm}
}

// snapOf is a snapshot at now of node n1 with run rn (nil: none), which
// the Workflow shows Running, outside any loop.
func snapOf(now time.Time, rn *decide.Run) *decide.Snapshot {
	return &decide.Snapshot{Now: now, NodeID: "n1", Run: rn,
		Nodes: wfv1.Nodes{"n1": {ID: "n1", Name: "wf.spark", Type: wfv1.NodeTypePlugin, Phase: wfv1.NodeRunning}}}
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
