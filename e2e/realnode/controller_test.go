//go:build e2e

package realnode

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/node"
)

// The release's chart in controller mode, installed with helm: its
// controller (the released image) runs on the real node and launches the
// Spark step, and the agent pod's sidecar is the acknowledger, pulled by
// the kubelet from the registry it was pushed to (the README's second
// crane push), by the digest the chart pins.
func TestControllerModeReleaseRunsASparkStep(t *testing.T) {
	t.Parallel()
	const ns = "realnode-ctl"
	ctx := t.Context()
	sel, tol := placement()
	helmInstall(t, ns, append([]string{"--set", "mode=controller", "--set", "controller.replicas=1",
		"--set", "driver.serviceAccount.create=true", "--set", "agentRBAC.create=true",
		"--set-json", "monitor.nodeSelector=" + sel, "--set-json", "monitor.tolerations=" + tol},
		onTheNode(t, `"--min-executors=1"`)...)...)
	start := time.Now()
	w := submit(t, env.Given(t).Namespace(ns).
		Workflow(workflow("ctl", "main", "    - name: main\n"+sparkStep(1, `"--min-executors=1", "--sleep=10s"`))))
	// The agent pod's sidecar is the acknowledger, pulled by its digest:
	// seen while the step runs (Argo deletes the agent pod at the end).
	// The node was given no image of it: running, it was pulled.
	image, status := waitForAck(t, ns, w.Workflow().Name)
	t.Logf("the agent's sidecar runs %s (image %s, id %s)", image, status.Image, status.ImageID)
	if image != rel.AckPinned() || !strings.HasSuffix(status.ImageID, "@"+rel.AckDigest) {
		t.Errorf("the agent's sidecar is %s (image id %s), want the acknowledger %s", image, status.ImageID, rel.AckPinned())
	}
	w = w.WaitForWorkflow(framework.ToBeSucceeded, wfTimeout)
	t.Logf("workflow Succeeded in %.1fs", time.Since(start).Seconds())
	expectSucceeded(w)

	// The controller ran the step on the real node, from the release's image.
	pods, err := env.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=sparkplug"})
	if err != nil {
		t.Fatal(err)
	}
	var controllers int
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			if c.Image == rel.Pinned() && p.Spec.NodeName == node.Name && p.Status.Phase == corev1.PodRunning {
				controllers++
			}
		}
	}
	if controllers != 1 {
		t.Errorf("%d controller pods of %s running on %s, want 1", controllers, rel.Pinned(), node.Name)
	}

	// helm test passes in controller mode too: the controller runs the
	// test's step.
	if out, err := helmTest(t, ns); err != nil || !testSucceeded.MatchString(out) {
		t.Errorf("helm test in controller mode: %v; want the test Workflow Succeeded", err)
	}
}

// waitForAck waits for the workflow's agent pod to run its plugin
// sidecar, and returns that container's image and status.
func waitForAck(t *testing.T, ns, workflow string) (string, corev1.ContainerStatus) {
	t.Helper()
	deadline := time.Now().Add(wfTimeout)
	for time.Now().Before(deadline) {
		agents, err := env.Kube.CoreV1().Pods(ns).List(t.Context(), listAgent(workflow))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range agents.Items {
			for _, s := range p.Status.ContainerStatuses {
				if s.Name == "spark-executor-plugin" && s.State.Running != nil {
					for _, c := range p.Spec.Containers {
						if c.Name == s.Name {
							return c.Image, s
						}
					}
				}
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("no agent pod of %s ran its sidecar within %s", workflow, wfTimeout)
	return "", corev1.ContainerStatus{}
}
