//go:build integration

package manifests

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/cluster"
)

var testCluster *cluster.Cluster

// TestMain runs every test of the package against one API server, with the
// controller-manager, whose token controller fills the ServiceAccount's
// token Secret as it would in a real cluster.
func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, cluster.Options{ControllerManager: true},
		func(c *cluster.Cluster) { testCluster = c }))
}

// kubectl runs the pinned kubectl against the test cluster, in dir.
func kubectl(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	bin := filepath.Join(os.Getenv(cluster.EnvToolsBin), "kubectl")
	cmd := exec.CommandContext(t.Context(), bin, append([]string{"--kubeconfig", testCluster.Kubeconfig}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func createNamespace(t *testing.T, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := testCluster.Client.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// overlay writes a kustomization into a temp dir that uses the given
// directories of this package (as paths relative to it) under key.
func overlay(t *testing.T, body string, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, here)
	if err != nil {
		t.Fatal(err)
	}
	files["kustomization.yaml"] = strings.ReplaceAll(body, "MANIFESTS", filepath.ToSlash(rel))
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestInstallGrantsLeastPrivilege installs manifests/ into two namespaces,
// the two ways manifests/kustomization.yaml documents, and asks the API
// server what the plugin's ServiceAccount may do.
func TestInstallGrantsLeastPrivilege(t *testing.T) {
	ctx := t.Context()
	const nsA, nsB = "team-a", "team-b"
	createNamespace(t, nsA)
	createNamespace(t, nsB)

	// As manifests/README.md says: kubectl apply -k manifests/ -n NAMESPACE,
	// server-side.
	kubectl(t, ".", "apply", "--server-side", "--field-manager=sparkplug-test", "-k", ".", "-n", nsA)

	// As a resource of the user's own kustomization that sets the
	// namespace; the built output applied with server-side apply.
	dir := overlay(t, "namespace: "+nsB+"\nresources: [MANIFESTS]\n", map[string]string{})
	if err := testCluster.Apply(ctx, kubectl(t, dir, "kustomize", ".")); err != nil {
		t.Fatalf("apply the kustomization into %s: %v", nsB, err)
	}

	for _, ns := range []string{nsA, nsB} {
		cm, err := testCluster.Client.CoreV1().ConfigMaps(ns).Get(ctx, serviceAccount, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the plugin ConfigMap in %s: %v", ns, err)
		}
		if cm.Labels[labelKeyConfigMapType] != "ExecutorPlugin" {
			t.Errorf("%s: ConfigMap labels %v", ns, cm.Labels)
		}
		checkTokenSecret(t, ns)
	}

	saA, saB := serviceAccountClient(t, nsA), serviceAccountClient(t, nsB)
	type access struct {
		verb, group, resource, subresource, namespace string
	}
	core := func(verb, resource, ns string) access { return access{verb: verb, resource: resource, namespace: ns} }
	argo := func(verb, resource, ns string) access {
		return access{verb: verb, group: "argoproj.io", resource: resource, namespace: ns}
	}
	volcano := func(verb, resource, ns string) access {
		return access{verb: verb, group: "scheduling.volcano.sh", resource: resource, namespace: ns}
	}
	schedulerPlugins := func(verb, resource, ns string) access {
		return access{verb: verb, group: "scheduling.x-k8s.io", resource: resource, namespace: ns}
	}
	ingresses := func(verb, ns string) access {
		return access{verb: verb, group: "networking.k8s.io", resource: "ingresses", namespace: ns}
	}
	allowed := []access{
		core("create", "pods", nsA), core("get", "pods", nsA), core("list", "pods", nsA),
		core("watch", "pods", nsA), core("patch", "pods", nsA), core("delete", "pods", nsA),
		core("create", "configmaps", nsA), core("get", "configmaps", nsA), core("list", "configmaps", nsA), core("watch", "configmaps", nsA),
		core("create", "services", nsA), core("get", "services", nsA), core("list", "services", nsA), core("watch", "services", nsA),
		ingresses("create", nsA), ingresses("get", nsA), ingresses("list", nsA), ingresses("watch", nsA),
		argo("get", "workflowtasksets", nsA), argo("list", "workflowtasksets", nsA), argo("watch", "workflowtasksets", nsA),
		{verb: "patch", group: "argoproj.io", resource: "workflowtasksets", subresource: "status", namespace: nsA}, // node results
		argo("get", "workflows", nsA), argo("list", "workflows", nsA), argo("watch", "workflows", nsA),
		core("create", "events", nsA), core("patch", "events", nsA),
		volcano("create", "podgroups", nsA), volcano("get", "podgroups", nsA), volcano("patch", "podgroups", nsA), volcano("delete", "podgroups", nsA),
		schedulerPlugins("create", "podgroups", nsA), schedulerPlugins("get", "podgroups", nsA), schedulerPlugins("patch", "podgroups", nsA), schedulerPlugins("delete", "podgroups", nsA),
	}
	denied := []access{
		// No Secrets, not even its own token.
		core("get", "secrets", nsA), core("list", "secrets", nsA), core("watch", "secrets", nsA),
		// Nothing in another namespace, even one with the same install.
		core("create", "pods", nsB), core("list", "pods", nsB), argo("watch", "workflowtasksets", nsB),
		// Nothing cluster-scoped or across namespaces.
		core("list", "nodes", ""), core("list", "pods", ""), core("list", "namespaces", ""),
		// Only the verbs it needs, and no subresources.
		core("update", "pods", nsA), {verb: "create", resource: "pods", subresource: "exec", namespace: nsA},
		{verb: "patch", resource: "pods", subresource: "status", namespace: nsA},
		core("update", "configmaps", nsA), core("update", "services", nsA),
		// ConfigMaps and Services go with their owner (garbage
		// collection) and are never changed: a tombstone is created, and
		// the patch of spark-submit's apply is spark-submit/'s. So the
		// plugin ConfigMap Argo loads into every agent pod is out of reach.
		core("patch", "configmaps", nsA), core("delete", "configmaps", nsA),
		core("patch", "services", nsA), core("delete", "services", nsA),
		// Ingresses go with their driver (garbage collection).
		ingresses("delete", nsA), ingresses("update", nsA), ingresses("patch", nsA),
		ingresses("create", nsB), {verb: "patch", group: "networking.k8s.io", resource: "ingresses", subresource: "status", namespace: nsA},
		argo("patch", "workflowtasksets", nsA), argo("update", "workflows", nsA), argo("delete", "workflows", nsA),
		argo("create", "workflows", nsA),
		// PodGroups are created, read by name and handed over, never
		// listed or changed otherwise, and nothing else of the
		// schedulers' groups.
		volcano("list", "podgroups", nsA), volcano("update", "podgroups", nsA),
		volcano("create", "queues", ""), volcano("create", "podgroups", nsB),
		schedulerPlugins("list", "podgroups", nsA), schedulerPlugins("update", "podgroups", nsA),
		schedulerPlugins("create", "elasticquotas", nsA),
		// No way to grant itself more.
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "rolebindings", namespace: nsA},
		{verb: "create", resource: "serviceaccounts", subresource: "token", namespace: nsA},
	}
	check := func(sa kubernetes.Interface, who string, a access, want bool) {
		t.Helper()
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource, Namespace: a.namespace,
			},
		}}
		got, err := sa.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("access review %+v: %v", a, err)
		}
		if got.Status.Allowed != want {
			t.Errorf("%s/%s may %s %s/%s/%s in %q: got %v, want %v (%s)", who, serviceAccount,
				a.verb, a.group, a.resource, a.subresource, a.namespace, got.Status.Allowed, want, got.Status.Reason)
		}
	}
	for _, a := range allowed {
		check(saA, nsA, a, true)
	}
	for _, a := range denied {
		check(saA, nsA, a, false)
	}
	// The namespace: transformer bound team-b's account in team-b.
	check(saB, nsB, core("create", "pods", nsB), true)
	check(saB, nsB, core("create", "pods", nsA), false)
}

// serviceAccountClient authenticates as the plugin's ServiceAccount of ns.
func serviceAccountClient(t *testing.T, ns string) kubernetes.Interface {
	t.Helper()
	cfg, err := testCluster.ConfigForServiceAccount(t.Context(), ns, serviceAccount)
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// checkTokenSecret waits for the token controller to fill the long-lived
// token Secret Argo mounts into the sidecar, and checks that the token
// authenticates as the plugin's ServiceAccount.
func checkTokenSecret(t *testing.T, ns string) {
	t.Helper()
	ctx := t.Context()
	name := serviceAccount + ".service-account-token"
	var token []byte
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		s, err := testCluster.Client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		token = s.Data[corev1.ServiceAccountTokenKey]
		return len(token) > 0, nil
	})
	if err != nil {
		t.Fatalf("Secret %s/%s never got a token: %v", ns, name, err)
	}
	cfg := rest.AnonymousClientConfig(testCluster.Config)
	cfg.BearerToken = string(token)
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	who, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("authenticate with the token of %s/%s: %v", ns, name, err)
	}
	if want := "system:serviceaccount:" + ns + ":" + serviceAccount; who.Status.UserInfo.Username != want {
		t.Errorf("the token of %s/%s is %q, want %q", ns, name, who.Status.UserInfo.Username, want)
	}
}

// TestControllerPatchWithKubectl applies manifests/controller both ways
// manifests/README.md documents: kubectl patch of a running Deployment, and
// the kustomize Component over Argo's install.
func TestControllerPatchWithKubectl(t *testing.T) {
	ctx := t.Context()
	const ns = "argo"
	createNamespace(t, ns)
	deploy := &appsv1.Deployment{}
	if err := yaml.UnmarshalStrict([]byte(argoControllerDeployment), deploy); err != nil {
		t.Fatal(err)
	}
	if _, err := testCluster.Client.AppsV1().Deployments(ns).Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []corev1.EnvVar{
		{Name: "ARGO_EXECUTOR_PLUGINS", Value: "true"},
		deploy.Spec.Template.Spec.Containers[0].Env[0],
	}

	kubectl(t, ".", "-n", ns, "patch", "deployment", "workflow-controller", "--patch-file", patchFile)
	got, err := testCluster.Client.AppsV1().Deployments(ns).Get(ctx, "workflow-controller", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got.Spec.Template.Spec.Containers[0].Env); diff != "" {
		t.Errorf("kubectl patch: env (-want +got):\n%s", diff)
	}

	dir := overlay(t, "resources: [argo.yaml]\ncomponents: [MANIFESTS/controller]\n",
		map[string]string{"argo.yaml": argoControllerDeployment})
	var built appsv1.Deployment
	if err := yaml.UnmarshalStrict(kubectl(t, dir, "kustomize", "."), &built); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, built.Spec.Template.Spec.Containers[0].Env); diff != "" {
		t.Errorf("kustomize component: env (-want +got):\n%s", diff)
	}
}
