//go:build e2e

package e2e

// sparkplug installed, upgraded and removed with its Helm chart, as a
// platform team would: into two job namespaces at once.

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
)

// helm install of the packaged chart puts sparkplug into two namespaces (with the drivers' and
// the agents' ServiceAccounts and Roles), run by an identity that may act
// in those two only (the release's records are in the first), so it
// touches no other namespace and nothing cluster-wide; a Spark workflow
// succeeds in each; helm upgrade of a serve flag reaches the sidecar of
// the next agent pod; helm uninstall leaves nothing of the chart behind.
func TestHelmInstallsUpgradesAndRemovesSparkplug(t *testing.T) {
	onceAcrossModes(t, "the chart's sidecar-mode install")
	parallel(t)
	ctx := context.Background()
	namespaces := []string{"chart-a", "chart-b"}
	admin := confined(t, "team-admin", namespaces...)
	helm := func(args ...string) string {
		t.Helper()
		out, err := env.HelmAs(ctx, admin.Kubeconfig, args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// The chart packaged as make release packages it (hack/release.sh:
	// helm package of manifests/chart/sparkplug), installed from the file.
	dir := t.TempDir()
	helm("package", "manifests/chart/sparkplug", "--version", "0.0.0-e2e", "-d", dir)
	chart := filepath.Join(dir, "sparkplug-0.0.0-e2e.tgz")
	helm("install", "sparkplug", chart, "-n", namespaces[0],
		"--set", "jobNamespaces={"+strings.Join(namespaces, ",")+"}",
		"--set", "driver.serviceAccount.create=true", "--set", "agentRBAC.create=true",
		// A namespace admin may not make the cluster-scoped admission policy.
		"--set", "admissionPolicy.enabled=false")
	t.Cleanup(func() { _, _ = env.Helm(context.Background(), "uninstall", "sparkplug", "-n", namespaces[0]) })

	for _, ns := range namespaces {
		Given(t).Namespace(ns).
			Workflow("@examples/spark-pi.yaml").
			Simulate(sim.Succeed(3*time.Second)).
			When().
			SubmitWorkflow().
			WaitForWorkflow(framework.ToBeSucceeded, 2*time.Minute)
	}

	helm("upgrade", "sparkplug", chart, "-n", namespaces[0], "--reuse-values", "--set", "serve.kubeAPIQPS=33")
	w := Given(t).Namespace(namespaces[0]).
		Workflow("@examples/spark-pi.yaml").
		Simulate(sim.Succeed(8*time.Second)).
		When().
		SubmitWorkflow().
		WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING`))
	if args := cmdline(t, oneSidecar(t, w.Workflow()).Pid); !slices.Contains(args, "--kube-api-qps=33") {
		t.Errorf("after helm upgrade, a new agent pod's sidecar runs %q, without --kube-api-qps=33", args)
	}
	w.WaitForWorkflow(framework.ToBeSucceeded)

	helm("uninstall", "sparkplug", "-n", namespaces[0])
	w.WaitFor("nothing of the chart left in either namespace", func() bool {
		for _, ns := range namespaces {
			if left := chartObjects(t, ctx, ns); len(left) > 0 {
				t.Logf("left in %s: %v", ns, left)
				return false
			}
		}
		return true
	}, time.Minute)
}

// chartObjects lists what the chart made in ns (its instance label, or
// the names it uses) and helm's release records.
func chartObjects(t *testing.T, ctx context.Context, ns string) []string {
	t.Helper()
	var left []string
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=sparkplug"}
	kube := env.Kube.CoreV1()
	cms, err := kube.ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cms.Items {
		if c.Name == "spark-executor-plugin" || c.Labels["app.kubernetes.io/instance"] == "sparkplug" {
			left = append(left, "configmap/"+c.Name)
		}
	}
	sas, err := kube.ServiceAccounts(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sas.Items {
		left = append(left, "serviceaccount/"+s.Name)
	}
	secrets, err := kube.Secrets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets.Items {
		if s.Labels["app.kubernetes.io/instance"] == "sparkplug" || s.Labels["owner"] == "helm" || strings.HasPrefix(s.Name, "spark-executor-plugin") {
			left = append(left, "secret/"+s.Name)
		}
	}
	roles, err := env.Kube.RbacV1().Roles(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range roles.Items {
		left = append(left, "role/"+r.Name)
	}
	bindings, err := env.Kube.RbacV1().RoleBindings(ns).List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bindings.Items {
		left = append(left, "rolebinding/"+b.Name)
	}
	return left
}
