//go:build integration

package manifests

import (
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// TestKustomizeControllerMode applies manifests/modes/controller as its
// kustomization says (kubectl apply -k -n NAMESPACE, server-side), and
// asks the API server, as the controller's ServiceAccount, what it may
// do: what a sidecar and the monitor could together in that namespace,
// and its own Lease; nothing in another namespace, nothing
// cluster-scoped, no Secrets, no change to the plugin ConfigMap. The
// acknowledger's ConfigMap mounts no token, and no plugin ServiceAccount
// exists. With the spark-submit Component, the controller may also patch
// ConfigMaps and Services.
func TestKustomizeControllerMode(t *testing.T) {
	ctx := t.Context()
	const ns, other, withSubmit = "controller-mode", "not-served", "controller-submit"
	createNamespace(t, ns)
	createNamespace(t, other)
	createNamespace(t, withSubmit)

	kubectl(t, ".", "apply", "--server-side", "--field-manager=sparkplug-test", "-k", controllerModeDir, "-n", ns)

	cm, err := testCluster.Client.CoreV1().ConfigMaps(ns).Get(ctx, serviceAccount, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the plugin ConfigMap: %v", err)
	}
	if cm.Labels[labelKeyConfigMapType] != "ExecutorPlugin" || cm.Data["sidecar.automountServiceAccountToken"] != "false" {
		t.Errorf("plugin ConfigMap labels %v, automount %q: want Argo's label and false", cm.Labels, cm.Data["sidecar.automountServiceAccountToken"])
	}
	if c := sidecarContainer(t, cm); c.Image != loadAckPlugin(t).Spec.Sidecar.Container.Image {
		t.Errorf("the plugin runs %s, want the acknowledger", c.Image)
	}
	// Argo mounts no plugin token (automount false), so none is installed.
	if _, err := testCluster.Client.CoreV1().ServiceAccounts(ns).Get(ctx, serviceAccount, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ServiceAccount %s: %v, want none in controller mode", serviceAccount, err)
	}
	d, err := testCluster.Client.AppsV1().Deployments(ns).Get(ctx, controllerName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the controller's Deployment: %v", err)
	}
	svc, err := testCluster.Client.CoreV1().Services(ns).Get(ctx, controllerName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the controller's Service: %v", err)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("the Service's selector %v does not select the controller's pods %v", svc.Spec.Selector, d.Spec.Template.Labels)
	}

	// With the spark-submit Component, in a kustomization of one's own.
	dir := overlay(t, "namespace: "+withSubmit+"\nresources: [MANIFESTS/"+controllerModeDir+"]\ncomponents: [MANIFESTS/"+controllerModeDir+"/spark-submit]\n", map[string]string{})
	if err := testCluster.Apply(ctx, kubectl(t, dir, "kustomize", ".")); err != nil {
		t.Fatalf("apply controller mode with spark-submit into %s: %v", withSubmit, err)
	}

	type access struct{ verb, group, resource, subresource, name, namespace string }
	core := func(verb, resource, ns string) access { return access{verb: verb, resource: resource, namespace: ns} }
	argo := func(verb, resource, ns string) access {
		return access{verb: verb, group: "argoproj.io", resource: resource, namespace: ns}
	}
	lease := func(verb, name string) access {
		return access{verb: verb, group: "coordination.k8s.io", resource: "leases", name: name, namespace: ns}
	}
	volcano := func(verb string) access {
		return access{verb: verb, group: "scheduling.volcano.sh", resource: "podgroups", namespace: ns}
	}
	ingresses := func(verb string) access {
		return access{verb: verb, group: "networking.k8s.io", resource: "ingresses", namespace: ns}
	}
	allowed := []access{
		// The sidecar's: launch and follow drivers and their objects.
		core("create", "pods", ns), core("get", "pods", ns), core("list", "pods", ns), core("watch", "pods", ns),
		core("patch", "pods", ns), core("delete", "pods", ns),
		{verb: "get", resource: "pods", subresource: "log", namespace: ns},
		core("create", "configmaps", ns), core("get", "configmaps", ns), core("list", "configmaps", ns), core("watch", "configmaps", ns),
		core("create", "services", ns), core("get", "services", ns), core("list", "services", ns), core("watch", "services", ns),
		ingresses("create"), ingresses("get"), ingresses("list"), ingresses("watch"),
		volcano("create"), volcano("get"), volcano("patch"), volcano("delete"),
		// Finding workflows by their WorkflowTaskSets, and writing results.
		argo("get", "workflowtasksets", ns), argo("list", "workflowtasksets", ns), argo("watch", "workflowtasksets", ns),
		{verb: "patch", group: "argoproj.io", resource: "workflowtasksets", subresource: "status", namespace: ns},
		argo("get", "workflows", ns), argo("list", "workflows", ns), argo("watch", "workflows", ns),
		// The monitor's: Events read for the metrics, and recorded.
		core("list", "events", ns), core("watch", "events", ns), core("create", "events", ns), core("patch", "events", ns),
		lease("create", ""), lease("get", controllerName), lease("update", controllerName),
	}
	denied := []access{
		core("get", "secrets", ns), core("list", "secrets", ns),
		core("update", "pods", ns), {verb: "create", resource: "pods", subresource: "exec", namespace: ns},
		{verb: "patch", resource: "pods", subresource: "status", namespace: ns},
		// The plugin ConfigMap, which Argo loads into every agent pod, is
		// out of reach: ConfigMaps and Services are never changed (but
		// with the spark-submit Component, below).
		core("patch", "configmaps", ns), core("update", "configmaps", ns), core("delete", "configmaps", ns),
		core("patch", "services", ns), core("delete", "services", ns),
		ingresses("delete"), ingresses("patch"),
		argo("patch", "workflowtasksets", ns), argo("update", "workflowtasksets", ns),
		argo("update", "workflows", ns), argo("patch", "workflows", ns), argo("delete", "workflows", ns), argo("create", "workflows", ns),
		volcano("list"), volcano("update"),
		lease("get", "other-lease"), lease("update", "other-lease"), lease("delete", controllerName),
		// Not a namespace it was not installed into, nothing across
		// namespaces or cluster-scoped.
		core("create", "pods", other), core("list", "pods", other), argo("watch", "workflowtasksets", other),
		core("list", "pods", ""), argo("list", "workflowtasksets", ""), core("list", "nodes", ""), core("list", "namespaces", ""),
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "rolebindings", namespace: ns},
		{verb: "create", resource: "serviceaccounts", subresource: "token", namespace: ns},
	}
	clientFor := func(ns string) kubernetes.Interface {
		cfg, err := testCluster.ConfigForServiceAccount(ctx, ns, controllerName)
		if err != nil {
			t.Fatal(err)
		}
		c, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	check := func(sa kubernetes.Interface, who string, a access, want bool) {
		t.Helper()
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource, Name: a.name, Namespace: a.namespace,
			},
		}}
		got, err := sa.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("access review %+v: %v", a, err)
		}
		if got.Status.Allowed != want {
			t.Errorf("%s/%s may %s %s/%s/%s %q in %q: got %v, want %v (%s)", who, controllerName,
				a.verb, a.group, a.resource, a.subresource, a.name, a.namespace, got.Status.Allowed, want, got.Status.Reason)
		}
	}
	sa := clientFor(ns)
	for _, a := range allowed {
		check(sa, ns, a, true)
	}
	for _, a := range denied {
		check(sa, ns, a, false)
	}
	// spark-submit's patch, only where its Component is, and only for
	// the controller of that namespace.
	submit := clientFor(withSubmit)
	check(submit, withSubmit, core("patch", "configmaps", withSubmit), true)
	check(submit, withSubmit, core("patch", "services", withSubmit), true)
	check(submit, withSubmit, core("delete", "configmaps", withSubmit), false)
	check(submit, withSubmit, core("patch", "configmaps", ns), false)
	check(sa, ns, core("patch", "configmaps", withSubmit), false)
}
