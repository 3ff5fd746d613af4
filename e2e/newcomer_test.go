//go:build e2e

package e2e

// A newcomer's install into two job namespaces, as the README and
// docs/install.md tell it, by an identity confined to them
// (framework.Confine): with kustomize here, with the chart in
// chart_test.go. Whatever the install holds, it cannot write outside those
// namespaces, nor anything cluster-wide: the API server would refuse it,
// and the install would fail.

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
)

// kubectl apply -k manifests/ -n NAMESPACE, the README's install step 2
// from a clone, for each of two namespaces, as an identity that may act in
// those two only; then a Spark workflow succeeds in each, which holds the
// kustomization's plugin ConfigMap and ServiceAccount.
func TestKustomizeInstallsIntoTwoNamespacesOnly(t *testing.T) {
	onceAcrossModes(t, "the kustomize install of manifests/")
	parallel(t)
	ctx := context.Background()
	namespaces := []string{"kust-a", "kust-b"}
	admin := confined(t, "team-admin", namespaces...)
	for _, ns := range namespaces {
		kubectlAs(t, admin, "apply", "-k", "manifests/", "-n", ns)
		// Step 3 is Argo's and Spark's, not sparkplug's.
		if err := env.PrepareJobNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range namespaces {
		Given(t).Namespace(ns).
			Workflow("@examples/spark-pi.yaml").
			Simulate(sim.Succeed(3*time.Second)).
			When().
			SubmitWorkflow().
			WaitForWorkflow(framework.ToBeSucceeded, 2*time.Minute)
		// The kustomization's objects are there, by name.
		if _, err := env.Kube.CoreV1().ConfigMaps(ns).Get(ctx, "spark-executor-plugin", metav1.GetOptions{}); err != nil {
			t.Errorf("%s: the plugin ConfigMap: %v", ns, err)
		}
		if _, err := env.Kube.CoreV1().ServiceAccounts(ns).Get(ctx, "spark-executor-plugin", metav1.GetOptions{}); err != nil {
			t.Errorf("%s: the plugin's ServiceAccount: %v", ns, err)
		}
	}
}

// confined is env.Confine, checked: the identity may write in its
// namespaces, and neither in another one nor cluster-wide, so that a test
// that installs as it proves its install stays in its namespaces.
func confined(t *testing.T, name string, namespaces ...string) *framework.Confined {
	t.Helper()
	ctx := context.Background()
	c, err := env.Confine(ctx, name, namespaces...)
	if err != nil {
		t.Fatal(err)
	}
	probe := func(ns string) error {
		cm, err := c.Kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "confined-probe-"}}, metav1.CreateOptions{})
		if err == nil {
			_ = env.Kube.CoreV1().ConfigMaps(ns).Delete(ctx, cm.Name, metav1.DeleteOptions{})
		}
		return err
	}
	for _, ns := range namespaces {
		if err := probe(ns); err != nil {
			t.Fatalf("%s may not write in its own namespace %s: %v", name, ns, err)
		}
	}
	if err := probe(env.Namespace); !apierrors.IsForbidden(err) {
		t.Fatalf("%s may write in namespace %s, outside its own: %v", name, env.Namespace, err)
	}
	_, err = c.Kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{GenerateName: "confined-probe-"}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("%s may create a ClusterRole: %v", name, err)
	}
	return c
}

// kubectlAs runs the environment's kubectl in the repository as c.
func kubectlAs(t *testing.T, c *framework.Confined, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(env.BinDir(), "kubectl"), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	cmd.Dir = env.RepoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s as %s: %v\n%s", strings.Join(args, " "), c.Name, err, out)
	}
	t.Logf("kubectl %s as %s:\n%s", strings.Join(args, " "), c.Name, out)
	return string(out)
}
