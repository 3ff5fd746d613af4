//go:build e2e

package realnode

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/node"
)

var appIDPattern = regexp.MustCompile(`^spark-[0-9a-f]{32}$`)

// wfTimeout bounds a workflow on the real node.
const wfTimeout = 4 * time.Minute

// A DAG of Spark steps runs on the real kubelet: the agent pod is Argo's
// with sparkplug's released sidecar, and the driver of the step with
// executors succeeds only if both registered with it through its Service
// name (CoreDNS). Each node carries its application id and driver pod.
func TestSparkDAGSucceeds(t *testing.T) {
	t.Parallel()
	start := time.Now()
	w := submit(t, Given(t).
		Workflow(workflow("dag", "main", `    - name: main
      dag:
        tasks:
          - {name: prepare, template: one}
          - {name: compute, template: two, depends: prepare}
          - {name: report, template: one, depends: compute}
    - name: one
`+sparkStep(1, `"--sleep=1s"`)+`    - name: two
`+sparkStep(2, `"--min-executors=2", "--sleep=2s"`)))).
		WaitForWorkflow(framework.ToBeSucceeded, wfTimeout)
	t.Logf("workflow Succeeded in %.1fs", time.Since(start).Seconds())
	w.Then().
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			if len(drivers) != 3 {
				t.Fatalf("%d driver pods, want 3", len(drivers))
			}
			// The kubelet writes a container's end before its pod's phase:
			// the driver container's exit code is what sparkplug judged.
			for _, d := range drivers {
				if d.Spec.NodeName != node.Name || exitCode(d) != 0 {
					t.Errorf("driver %s on %q ended %d (%s), want 0 on %s", d.Name, d.Spec.NodeName, exitCode(d), d.Status.Phase, node.Name)
				}
			}
		}).
		ExpectPluginNodes(func(t *testing.T, nodes []wfv1.NodeStatus) {
			if len(nodes) != 3 {
				t.Fatalf("%d plugin nodes, want 3", len(nodes))
			}
			for _, n := range nodes {
				if n.Phase != wfv1.NodeSucceeded {
					t.Errorf("node %s %s %q, want Succeeded", n.DisplayName, n.Phase, n.Message)
				}
				if id := param(n, "application-id"); !appIDPattern.MatchString(id) {
					t.Errorf("node %s: application-id %q", n.DisplayName, id)
				}
				if param(n, "driver-pod") == "" {
					t.Errorf("node %s has no driver-pod output", n.DisplayName)
				}
			}
		})
	agentOnNode(t, w.Workflow())

	// sparkplug logs reads the finished driver's container log, which the
	// kubelet serves through the API server.
	start = time.Now()
	cmd := exec.CommandContext(t.Context(), env.Sidecars.Binary(), "logs", w.Workflow().Name, "compute",
		"-n", namespace, "--kubeconfig", env.Kubeconfig())
	out, err := cmd.CombinedOutput()
	t.Logf("sparkplug logs in %.1fs", time.Since(start).Seconds())
	if err != nil || !contains(string(out), "executors registered") || !contains(string(out), "registered=2") {
		t.Errorf("sparkplug logs %s compute: %v; want the driver's log, two executors registered:\n%s", w.Workflow().Name, err, out)
	}
}

// agentOnNode checks that the workflow's agent pod ran on the real node
// with the sidecar plugin.yaml ships, from the release image.
func agentOnNode(t *testing.T, wf *wfv1.Workflow) {
	t.Helper()
	pods, err := env.Kube.CoreV1().Pods(namespace).List(t.Context(), listAgent(wf.Name))
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) == 0 {
		return // deleted with the workflow's completion; nothing to see
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != node.Name {
			t.Errorf("agent pod %s ran on %q, want %s", p.Name, p.Spec.NodeName, node.Name)
		}
		for _, c := range p.Spec.Containers {
			if c.Name == "spark-executor-plugin" && c.Image != rel.Pinned() {
				t.Errorf("sidecar image %s, want the release's %s", c.Image, rel.Pinned())
			}
		}
	}
}

func param(n wfv1.NodeStatus, name string) string {
	if n.Outputs == nil {
		return ""
	}
	for _, p := range n.Outputs.Parameters {
		if p.Name == name && p.Value != nil {
			return p.Value.String()
		}
	}
	return ""
}

func contains(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// exitCode is the exit code of the pod's first container that ended, -1
// while none has.
func exitCode(p corev1.Pod) int32 {
	for _, s := range p.Status.ContainerStatuses {
		if s.State.Terminated != nil {
			return s.State.Terminated.ExitCode
		}
	}
	return -1
}
