//go:build integration

package manifests

import (
	"os"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
)

// TestKustomizeMonitor builds manifests/monitor and manifests/monitoring
// with the pinned kubectl, as manifests/README.md says to add them: the
// monitor applied into a namespace with kubectl apply -k -n, where its
// ServiceAccount may do what the monitor calls there and nothing more; the
// monitoring objects built for that namespace, the ServiceMonitor
// selecting the monitor's Service and the dashboard ConfigMap holding the
// dashboard. manifests/ itself installs no monitor.
func TestKustomizeMonitor(t *testing.T) {
	ctx := t.Context()
	const ns, other = "monitored", "unmonitored"
	createNamespace(t, ns)
	createNamespace(t, other)

	kubectl(t, ".", "apply", "--server-side", "--field-manager=sparkplug-test", "-k", monitorDir, "-n", ns)
	d, err := testCluster.Client.AppsV1().Deployments(ns).Get(ctx, "sparkplug-monitor", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the monitor's Deployment: %v", err)
	}
	svc, err := testCluster.Client.CoreV1().Services(ns).Get(ctx, "sparkplug-monitor", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the monitor's Service: %v", err)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("the Service's selector %v does not select the monitor's pods %v", svc.Spec.Selector, d.Spec.Template.Labels)
	}

	cfg, err := testCluster.ConfigForServiceAccount(ctx, ns, "sparkplug-monitor")
	if err != nil {
		t.Fatal(err)
	}
	sa, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	type access struct{ verb, group, resource, subresource, name, namespace string }
	core := func(verb, resource, ns string) access { return access{verb: verb, resource: resource, namespace: ns} }
	workflows := func(verb, ns string) access {
		return access{verb: verb, group: "argoproj.io", resource: "workflows", namespace: ns}
	}
	lease := func(verb, name string) access {
		return access{verb: verb, group: "coordination.k8s.io", resource: "leases", name: name, namespace: ns}
	}
	allowed := []access{
		core("list", "pods", ns), core("watch", "pods", ns), core("delete", "pods", ns),
		workflows("get", ns), workflows("list", ns), workflows("watch", ns),
		core("list", "events", ns), core("watch", "events", ns), core("create", "events", ns), core("patch", "events", ns),
		lease("create", ""), lease("get", "sparkplug-monitor"), lease("update", "sparkplug-monitor"),
	}
	denied := []access{
		// It launches nothing and changes no pod, nor reads one but
		// through its cache, nor their logs.
		core("create", "pods", ns), core("patch", "pods", ns), core("update", "pods", ns), core("get", "pods", ns),
		{verb: "get", resource: "pods", subresource: "log", namespace: ns},
		{verb: "create", resource: "pods", subresource: "exec", namespace: ns},
		// It never changes a Workflow.
		workflows("update", ns), workflows("patch", ns), workflows("delete", ns), workflows("create", ns),
		{verb: "get", group: "argoproj.io", resource: "workflowtasksets", namespace: ns},
		// No Secrets, ConfigMaps or Services.
		core("get", "secrets", ns), core("list", "secrets", ns), core("list", "configmaps", ns), core("list", "services", ns),
		// Only its own Lease, never deleted.
		lease("get", "other-lease"), lease("update", "other-lease"), lease("delete", "sparkplug-monitor"),
		// Nothing in a namespace it was not installed into, nothing
		// cluster-scoped or across namespaces.
		core("list", "pods", other), core("delete", "pods", other), workflows("list", other),
		core("list", "pods", ""), core("list", "nodes", ""), core("list", "namespaces", ""),
		// No way to grant itself more.
		{verb: "create", group: "rbac.authorization.k8s.io", resource: "rolebindings", namespace: ns},
		{verb: "create", resource: "serviceaccounts", subresource: "token", namespace: ns},
	}
	check := func(a access, want bool) {
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
			t.Errorf("sparkplug-monitor may %s %s/%s/%s %q in %q: got %v, want %v (%s)",
				a.verb, a.group, a.resource, a.subresource, a.name, a.namespace, got.Status.Allowed, want, got.Status.Reason)
		}
	}
	for _, a := range allowed {
		check(a, true)
	}
	for _, a := range denied {
		check(a, false)
	}

	// manifests/monitoring, for the monitor's namespace.
	dir := overlay(t, "namespace: "+ns+"\nresources: [MANIFESTS/monitoring]\n", map[string]string{})
	objs := map[string]*unstructured.Unstructured{}
	for _, o := range unstructuredDocs(t, kubectl(t, dir, "kustomize", ".")) {
		if o.GetNamespace() != ns {
			t.Errorf("%s %s in namespace %q, want %s", o.GetKind(), o.GetName(), o.GetNamespace(), ns)
		}
		objs[o.GetKind()] = o
	}
	if got := sortedKeys(objs); len(got) != 3 {
		t.Errorf("manifests/monitoring builds %q, want a ConfigMap, a PrometheusRule and a ServiceMonitor", got)
	}
	sm := objs["ServiceMonitor"]
	if sm == nil {
		t.Fatal("no ServiceMonitor")
	}
	sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	if len(sel) == 0 || !labels.SelectorFromSet(sel).Matches(labels.Set(svc.Labels)) {
		t.Errorf("the ServiceMonitor's selector %v does not select the monitor's Service %v", sel, svc.Labels)
	}
	eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(eps) != 1 || eps[0].(map[string]any)["port"] != svc.Spec.Ports[0].Name || eps[0].(map[string]any)["honorLabels"] != true {
		t.Errorf("ServiceMonitor endpoints %v, want the Service's port %s with honorLabels", eps, svc.Spec.Ports[0].Name)
	}
	if pr := objs["PrometheusRule"]; pr == nil || pr.GetName() != "sparkplug-monitor" {
		t.Errorf("PrometheusRule %v", pr)
	}
	var cm corev1.ConfigMap
	if u := objs["ConfigMap"]; u == nil {
		t.Fatal("no dashboard ConfigMap")
	} else if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cm); err != nil {
		t.Fatal(err)
	}
	dashboard, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	if cm.Name != "sparkplug-monitor-dashboard" || cm.Labels["grafana_dashboard"] != "1" || cm.Data["sparkplug.json"] != string(dashboard) {
		t.Errorf("dashboard ConfigMap %s, labels %v, keys %q: want sparkplug-monitor-dashboard, grafana_dashboard: \"1\", sparkplug.json the dashboard",
			cm.Name, cm.Labels, sortedKeys(cm.Data))
	}

	// manifests/ alone has no monitor.
	for _, o := range unstructuredDocs(t, kubectl(t, ".", "kustomize", ".")) {
		if o.GetLabels()["app.kubernetes.io/component"] == "monitor" || o.GetKind() == "Deployment" {
			t.Errorf("manifests/ builds %s %s", o.GetKind(), o.GetName())
		}
	}
}

// unstructuredDocs decodes kubectl kustomize output, any kind.
func unstructuredDocs(t *testing.T, docs []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, u := range objects(t, docs) {
		objs = append(objs, u)
	}
	return objs
}
