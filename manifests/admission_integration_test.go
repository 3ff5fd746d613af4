//go:build integration

package manifests

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// impersonate is a client that acts as the plugin's ServiceAccount of ns,
// as its token would.
func impersonate(t *testing.T, ns string) kubernetes.Interface {
	t.Helper()
	return impersonateAs(t, ns, serviceAccount)
}

// impersonateAs is a client that acts as ServiceAccount sa of ns.
func impersonateAs(t *testing.T, ns, sa string) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(testCluster.Config)
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + ns + ":" + sa,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAdmissionPolicyConfinesThePlugin installs manifests/ with the
// spark-submit/ Component (patch on every ConfigMap and Service: the
// widest the plugin's Roles get) and admission/, and acts as the plugin's
// ServiceAccount: its patch of the executor plugin ConfigMap, and its
// changes to objects without sparkplug's labels, are refused by the
// policy; sparkplug's own writes (annotating and deleting its driver,
// spark-submit's apply of its ConfigMap, handing over a labelled object)
// go through. Without spark-submit/, the Role alone refuses the
// ConfigMap patch.
func TestAdmissionPolicyConfinesThePlugin(t *testing.T) {
	ctx := t.Context()
	const ns = "confined"
	createNamespace(t, ns)
	kubectl(t, ".", "apply", "--server-side", "--field-manager=sparkplug-test", "-k", ".", "-n", ns)
	sa := impersonate(t, ns)
	patch := []byte(`{"metadata":{"annotations":{"evil":"yes"}}}`)

	// The Role alone: no patch on ConfigMaps at all.
	_, err := sa.CoreV1().ConfigMaps(ns).Patch(ctx, serviceAccount, types.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "RBAC") && !strings.Contains(err.Error(), "cannot patch") {
		t.Fatalf("patch of the plugin ConfigMap under rbac.yaml alone: %v, want forbidden by RBAC", err)
	}

	installConfined(t, ns, "MANIFESTS", "MANIFESTS/spark-submit")

	admin := testCluster.Client.CoreV1()
	runLabels := map[string]string{spark.LabelWorkflowUID: "wf-uid", spark.LabelManagedBy: spark.ManagedByValue}
	mk := func(name string, labels map[string]string) {
		t.Helper()
		if _, err := admin.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
		if _, err := admin.Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mk("run-conf", runLabels)
	mk("someone-else", map[string]string{"app": "other"})

	// The policy takes effect once the API server has loaded it: wait for
	// the first refusal of the plugin ConfigMap's patch.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := sa.CoreV1().ConfigMaps(ns).Patch(ctx, serviceAccount, types.MergePatchType, patch, metav1.PatchOptions{})
		if err == nil {
			// Allowed before the policy was loaded: undo, ask again.
			undo := []byte(`{"metadata":{"annotations":{"evil":null}}}`)
			_, err = admin.ConfigMaps(ns).Patch(ctx, serviceAccount, types.MergePatchType, undo, metav1.PatchOptions{})
			return false, err
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("the policy never refused the plugin ConfigMap's patch: %v", err)
	}

	refused := func(what string, err error, says string) {
		t.Helper()
		var status apierrors.APIStatus
		if err == nil || !errors.As(err, &status) || !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v, want refused by the policy saying %q", what, err, says)
		}
	}
	allowed := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v, want allowed", what, err)
		}
	}
	_, err = sa.CoreV1().ConfigMaps(ns).Patch(ctx, serviceAccount, types.MergePatchType, patch, metav1.PatchOptions{})
	refused("patch of the executor plugin ConfigMap", err, "Argo loads the executor plugin ConfigMap into every agent pod")
	cm, err := admin.ConfigMaps(ns).Get(ctx, serviceAccount, metav1.GetOptions{})
	if err != nil || cm.Annotations["evil"] != "" {
		t.Errorf("the plugin ConfigMap: %v, annotations %v; want it unchanged", err, cm.Annotations)
	}
	// Copying sparkplug's label onto it does not make it sparkplug's.
	relabel := []byte(`{"metadata":{"labels":{"` + spark.LabelWorkflowUID + `":"x"}}}`)
	_, err = sa.CoreV1().ConfigMaps(ns).Patch(ctx, serviceAccount, types.MergePatchType, relabel, metav1.PatchOptions{})
	refused("sparkplug's label onto the executor plugin ConfigMap", err, "Argo loads")
	_, err = sa.CoreV1().ConfigMaps(ns).Patch(ctx, "someone-else", types.MergePatchType, patch, metav1.PatchOptions{})
	refused("patch of a ConfigMap without sparkplug's labels", err, "only sparkplug's own objects")
	_, err = sa.CoreV1().Pods(ns).Patch(ctx, "someone-else", types.MergePatchType, patch, metav1.PatchOptions{})
	refused("patch of a pod without sparkplug's labels", err, "only sparkplug's own objects")
	err = sa.CoreV1().Pods(ns).Delete(ctx, "someone-else", metav1.DeleteOptions{})
	refused("delete of a pod without sparkplug's labels", err, "only sparkplug's own objects")
	if _, err := admin.Pods(ns).Get(ctx, "someone-else", metav1.GetOptions{}); err != nil {
		t.Errorf("the pod without sparkplug's labels: %v, want it there", err)
	}

	_, err = sa.CoreV1().Pods(ns).Patch(ctx, "run-conf", types.MergePatchType, []byte(`{"metadata":{"annotations":{"`+spark.AnnotationDriverLog+`":"k"}}}`), metav1.PatchOptions{})
	allowed("annotate sparkplug's driver", err)
	_, err = sa.CoreV1().ConfigMaps(ns).Patch(ctx, "run-conf", types.MergePatchType, patch, metav1.PatchOptions{})
	allowed("patch sparkplug's ConfigMap (spark-submit's apply)", err)
	_, err = sa.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "run-stopped", Labels: runLabels}}, metav1.CreateOptions{})
	allowed("create a tombstone", err)
	allowed("delete sparkplug's driver", sa.CoreV1().Pods(ns).Delete(ctx, "run-conf", metav1.DeleteOptions{}))
}

// In controller mode the policy confines sparkplug-controller as it does
// the plugin's ServiceAccount: with the spark-submit Component (patch on
// every ConfigMap and Service), it may still not change the acknowledger's
// plugin ConfigMap, which Argo loads into every agent pod, nor objects
// without sparkplug's labels; its own go through.
func TestAdmissionPolicyConfinesTheController(t *testing.T) {
	ctx := t.Context()
	const ns = "confined-controller"
	createNamespace(t, ns)
	installConfined(t, ns, "MANIFESTS/modes/controller", "MANIFESTS/modes/controller/spark-submit")
	admin := testCluster.Client.CoreV1()
	for name, labels := range map[string]map[string]string{
		"run-conf":     {spark.LabelWorkflowUID: "wf-uid", spark.LabelManagedBy: spark.ManagedByValue},
		"someone-else": {"app": "other"},
	} {
		if _, err := admin.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	sa := impersonateAs(t, ns, "sparkplug-controller")
	patch := []byte(`{"metadata":{"annotations":{"evil":"yes"}}}`)
	const pluginConfigMap = "spark-executor-plugin"
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := sa.CoreV1().ConfigMaps(ns).Patch(ctx, pluginConfigMap, types.MergePatchType, patch, metav1.PatchOptions{})
		if err == nil {
			undo := []byte(`{"metadata":{"annotations":{"evil":null}}}`)
			_, err = admin.ConfigMaps(ns).Patch(ctx, pluginConfigMap, types.MergePatchType, undo, metav1.PatchOptions{})
			return false, err
		}
		return strings.Contains(err.Error(), "Argo loads the executor plugin ConfigMap"), nil
	})
	if err != nil {
		t.Fatalf("the policy never refused sparkplug-controller's patch of the plugin ConfigMap: %v", err)
	}
	_, err = sa.CoreV1().ConfigMaps(ns).Patch(ctx, "someone-else", types.MergePatchType, patch, metav1.PatchOptions{})
	if err == nil || !strings.Contains(err.Error(), "only sparkplug's own objects") {
		t.Errorf("patch of a ConfigMap without sparkplug's labels: %v, want refused by the policy", err)
	}
	if _, err = sa.CoreV1().ConfigMaps(ns).Patch(ctx, "run-conf", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Errorf("patch of sparkplug's own ConfigMap: %v, want allowed", err)
	}
}

// installConfined applies the kustomization base with the spark-submit
// Component (the widest Roles sparkplug gets) into ns, and admission/'s
// policy, which it removes at the test's end.
func installConfined(t *testing.T, ns, base, sparkSubmit string) {
	t.Helper()
	installPolicy(t, ns, base, sparkSubmit, kubectl(t, "admission", "kustomize", "."))
}

// installPolicy applies the kustomization base with the spark-submit
// Component into ns, and policy, a ValidatingAdmissionPolicy and its
// binding, which it removes at the test's end.
func installPolicy(t *testing.T, ns, base, sparkSubmit string, policy []byte) {
	t.Helper()
	ctx := t.Context()
	dir := overlay(t, "namespace: "+ns+"\nresources: ["+base+"]\ncomponents: ["+sparkSubmit+"]\n", map[string]string{})
	if err := testCluster.Apply(ctx, kubectl(t, dir, "kustomize", ".")); err != nil {
		t.Fatalf("apply %s with %s: %v", base, sparkSubmit, err)
	}
	if err := testCluster.Apply(ctx, policy); err != nil {
		t.Fatalf("apply the admission policy: %v", err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		for _, o := range unstructuredDocs(t, policy) {
			switch o.GetKind() {
			case "ValidatingAdmissionPolicyBinding":
				_ = testCluster.Client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			case "ValidatingAdmissionPolicy":
				_ = testCluster.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, o.GetName(), metav1.DeleteOptions{})
			}
		}
	})
}
