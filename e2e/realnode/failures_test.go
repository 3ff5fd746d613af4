//go:build e2e

package realnode

import (
	"regexp"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/images"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// A driver over its memory limit is killed by the kernel; the node fails
// with the kubelet's OOMKilled and exit code 137.
func TestDriverOOMKilledFailsTheNode(t *testing.T) {
	t.Parallel()
	start := time.Now()
	submit(t, Given(t).
		Workflow(workflow("driver-oom", "main", "    - name: main\n"+sparkStep(1, `"--oom"`)))).
		WaitForWorkflow(framework.ToBeFailed, wfTimeout).
		Then().
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			t.Logf("node %s %q after %.1fs", n.Phase, n.Message, time.Since(start).Seconds())
			if n.Phase != wfv1.NodeFailed || !contains(n.Message, "OOMKilled") {
				t.Errorf("node %s %q, want Failed, OOMKilled", n.Phase, n.Message)
			}
			if got := outputExitCode(n); got != "137" {
				t.Errorf("outputs.exitCode %q, want 137", got)
			}
		})
}

// Executors over their memory limit are OOMKilled by the kubelet; the
// driver, which lost them, fails (--exit=1), and so does the node.
func TestExecutorOOMKilled(t *testing.T) {
	t.Parallel()
	start := time.Now()
	w := submit(t, Given(t).
		Workflow(workflow("executor-oom", "main", "    - name: main\n"+sparkBody(images.SparkStandInRef, 1,
			`"--executor-oom", "--min-executors=1", "--exit=1"`,
			"            spark.kubernetes.executor.deleteOnTermination: \"false\"\n", "")))).
		WaitForWorkflow(framework.ToBeFailed, wfTimeout)
	t.Logf("workflow Failed after %.1fs", time.Since(start).Seconds())
	var history []framework.NodeState
	w.Then().ExpectHistory(framework.RootNode, func(t *testing.T, states []framework.NodeState) { history = states })
	pods, err := env.Kube.CoreV1().Pods(namespace).List(t.Context(), metav1.ListOptions{
		LabelSelector: spark.LabelRole + "=" + spark.RoleExecutor + "," + spark.LabelWorkflowUID + "=" + string(w.Workflow().UID),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 {
		t.Fatalf("%d executor pods, want 1 (deleteOnTermination=false)", len(pods.Items))
	}
	if r := terminatedReason(pods.Items[0]); r != "OOMKilled" {
		t.Errorf("executor %s terminated with %q, want OOMKilled", pods.Items[0].Name, r)
	}
	// sparkplug's messages are the driver's: the executor's OOMKilled
	// shows in its pod, and in the driver's log as Spark writes it.
	t.Logf("node went through %v", history)
}

// A driver whose image cannot be pulled fails its node before the pending
// timeout would, with the kubelet's reason.
func TestUnpullableImageFailsTheNode(t *testing.T) {
	t.Parallel()
	start := time.Now()
	submit(t, Given(t).
		Workflow(workflow("no-image", "main", "    - name: main\n"+sparkBody(registry+"/nope:1", 1, `"--sleep=1s"`, "",
			"          sparkplug: {pendingTimeout: 45s}\n")))).
		WaitForWorkflow(framework.ToBeFailed, 2*time.Minute).
		Then().
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			took := time.Since(start)
			t.Logf("node %s %q after %.1fs", n.Phase, n.Message, took.Seconds())
			if !regexp.MustCompile(`ErrImagePull|ImagePullBackOff`).MatchString(n.Message) {
				t.Errorf("node message %q names no ErrImagePull or ImagePullBackOff", n.Message)
			}
			if took > 45*time.Second+30*time.Second {
				t.Errorf("failed after %s, the pending timeout is 45s", took)
			}
		})
}

func outputExitCode(n *wfv1.NodeStatus) string {
	if n.Outputs == nil || n.Outputs.ExitCode == nil {
		return ""
	}
	return *n.Outputs.ExitCode
}

func terminatedReason(p corev1.Pod) string {
	for _, s := range p.Status.ContainerStatuses {
		if s.State.Terminated != nil {
			return s.State.Terminated.Reason
		}
		if s.LastTerminationState.Terminated != nil {
			return s.LastTerminationState.Terminated.Reason
		}
	}
	return ""
}
