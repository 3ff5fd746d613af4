//go:build e2e

package realnode

import (
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
)

// The release's chart, installed with helm into a namespace of its own,
// runs the released image (pinned by digest, pulled by the kubelet from
// the registry) as the sidecar of a Spark step there.
func TestHelmInstalledReleaseRunsASparkStep(t *testing.T) {
	t.Parallel()
	const ns = "realnode-helm"
	ctx := t.Context()
	start := time.Now()
	if out, err := env.Helm(ctx, "install", "sparkplug", rel.Chart, "--namespace", ns, "--create-namespace",
		"--set", "driver.serviceAccount.create=true", "--set", "agentRBAC.create=true"); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	t.Logf("helm install in %.1fs", time.Since(start).Seconds())
	// The namespace is new: its default ServiceAccount may not be made yet.
	if err := env.Cluster.EnsureServiceAccount(ctx, ns, "default"); err != nil {
		t.Fatal(err)
	}
	// Argo mounts the workflow ServiceAccount's token Secret into the
	// agent pod by name (Argo's quick-start makes it; the chart does not).
	token := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "default.service-account-token", Namespace: ns,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: "default"}},
		Type: corev1.SecretTypeServiceAccountToken,
	}
	if _, err := env.Kube.CoreV1().Secrets(ns).Create(ctx, token, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	w := submit(t, env.Given(t).Namespace(ns).
		Workflow(workflow("helm", "main", "    - name: main\n"+sparkStep(1, `"--min-executors=1"`)))).
		WaitForWorkflow(framework.ToBeSucceeded, wfTimeout)
	t.Logf("workflow Succeeded in %.1fs", time.Since(start).Seconds())
	w.Then().ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
		if n.Phase != wfv1.NodeSucceeded || !appIDPattern.MatchString(param(*n, "application-id")) {
			t.Errorf("node %s %q, outputs %+v", n.Phase, n.Message, n.Outputs)
		}
	})
}
