//go:build integration

package manifests

import (
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKueueRBACGrants applies components/kueue as its kustomization says
// (namespace:, the component, and per-namespace/ under transformers:) with
// the sidecar install into two namespaces and with controller mode into a
// third, then asks the API server (SubjectAccessReviews; Kueue's CRDs are
// not installed, RBAC does not need them) what each step account may do
// with Kueue's objects and PriorityClasses: exactly the component's verbs,
// Workloads only in its own namespace, the cluster-scoped objects read
// only. Both namespaces' ClusterRoleBindings are there (the second install
// did not take the first's), and a namespace without the component grants
// nothing of Kueue. Without per-namespace/, the API server refuses the
// binding's placeholder name.
func TestKueueRBACGrants(t *testing.T) {
	ctx := t.Context()
	const nsA, nsB, nsCtl, nsNone = "kueue-a", "kueue-b", "kueue-controller", "kueue-none"
	for _, ns := range []string{nsA, nsB, nsCtl, nsNone} {
		createNamespace(t, ns)
	}
	install := func(ns, base string, withKueue bool) []byte {
		t.Helper()
		body := "namespace: " + ns + "\nresources: [" + base + "]\n"
		if withKueue {
			body += "components: [MANIFESTS/" + kueueDir + "]\ntransformers: [MANIFESTS/" + kueuePerNamespace + "]\n"
		}
		built := kubectl(t, overlay(t, body, map[string]string{}), "kustomize", ".")
		if err := testCluster.Apply(ctx, built); err != nil {
			t.Fatalf("apply %s into %s (kueue %v): %v", base, ns, withKueue, err)
		}
		return built
	}
	install(nsA, "MANIFESTS", true)
	install(nsB, "MANIFESTS", true)
	install(nsCtl, "MANIFESTS/"+controllerModeDir, true)
	install(nsNone, "MANIFESTS", false)

	for _, ns := range []string{nsA, nsB, nsCtl} {
		name := "sparkplug-kueue-read." + ns
		if _, err := testCluster.Client.RbacV1().ClusterRoleBindings().Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("ClusterRoleBinding %s: %v", name, err)
		}
	}

	type res struct{ group, resource, subresource string }
	workloads := res{kueueGroup, "workloads", ""}
	workloadStatus := res{kueueGroup, "workloads", "status"}
	pending := res{"visibility.kueue.x-k8s.io", "localqueues", "pendingworkloads"}
	namespaced := []res{workloads, workloadStatus, {kueueGroup, "localqueues", ""}, pending, {"visibility.kueue.x-k8s.io", "clusterqueues", "pendingworkloads"}}
	clusterScoped := []res{
		{kueueGroup, "resourceflavors", ""}, {kueueGroup, "workloadpriorityclasses", ""}, {kueueGroup, "clusterqueues", ""},
		{"scheduling.k8s.io", "priorityclasses", ""},
	}
	verbs := []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	read := map[string]bool{"get": true, "list": true, "watch": true}
	// want is what the component grants, in namespace ns ("" for the
	// cluster-scoped objects) to the account of home.
	want := func(r res, verb, ns, home string) bool {
		switch {
		case r == workloads && ns == home:
			return read[verb] || verb == "create" || verb == "delete"
		case r == workloadStatus && ns == home:
			return verb == "get" || verb == "patch"
		case r == pending && ns == home:
			return verb == "get"
		case ns == "" && r.group == kueueGroup && (r.resource == "resourceflavors" || r.resource == "workloadpriorityclasses"):
			return read[verb]
		case ns == "" && r.resource == "priorityclasses":
			return read[verb]
		}
		return false
	}
	check := func(home, sa string, granted bool) {
		t.Helper()
		user := "system:serviceaccount:" + home + ":" + sa
		ask := func(r res, verb, ns string) {
			t.Helper()
			review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User:   user,
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + home, "system:authenticated"},
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Verb: verb, Group: r.group, Resource: r.resource, Subresource: r.subresource, Namespace: ns,
				},
			}}
			got, err := testCluster.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("access review %+v: %v", review.Spec.ResourceAttributes, err)
			}
			if w := granted && want(r, verb, ns, home); got.Status.Allowed != w {
				t.Errorf("%s may %s %s/%s/%s in %q: got %v, want %v (%s)", user, verb, r.group, r.resource, r.subresource, ns, got.Status.Allowed, w, got.Status.Reason)
			}
		}
		// Its namespace, others with the component, and across namespaces.
		namespaces := []string{home, ""}
		for _, other := range []string{nsA, nsCtl} {
			if other != home {
				namespaces = append(namespaces, other)
			}
		}
		for _, verb := range verbs {
			for _, r := range namespaced {
				for _, ns := range namespaces {
					ask(r, verb, ns)
				}
			}
			for _, r := range clusterScoped {
				ask(r, verb, "")
			}
		}
	}
	check(nsA, serviceAccount, true)
	check(nsB, serviceAccount, true)
	check(nsCtl, controllerName, true)
	check(nsNone, serviceAccount, false)

	// Without per-namespace/ the ClusterRoleBinding keeps its placeholder
	// name, which the API server refuses.
	const nsForgot = "kueue-no-transformer"
	createNamespace(t, nsForgot)
	body := "namespace: " + nsForgot + "\nresources: [MANIFESTS]\ncomponents: [MANIFESTS/" + kueueDir + "]\n"
	built := kubectl(t, overlay(t, body, map[string]string{}), "kustomize", ".")
	err := testCluster.Apply(ctx, built)
	if err == nil || !strings.Contains(err.Error(), "%NAMESPACE%") {
		t.Errorf("apply without per-namespace/: %v, want the ClusterRoleBinding's name refused", err)
	}
}
