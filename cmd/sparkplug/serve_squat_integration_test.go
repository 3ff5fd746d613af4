//go:build integration

package main

import (
	"context"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// squatterClient is a client of a second ServiceAccount of the env's
// namespace, "squatter", that may create (and only create) ConfigMaps and
// Services: anyone a namespace lets make such objects.
func squatterClient(t *testing.T, e *env) kubernetes.Interface {
	t.Helper()
	ctx := context.Background()
	if err := testCluster.EnsureServiceAccount(ctx, e.ns, "squatter"); err != nil {
		t.Fatal(err)
	}
	rbac := testCluster.Client.RbacV1()
	if _, err := rbac.Roles(e.ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "squatter"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps", "services"}, Verbs: []string{"create"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.RoleBindings(e.ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "squatter"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "squatter"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "squatter", Namespace: e.ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := testCluster.WaitAllowed(ctx, e.ns, "squatter", []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps", "services"}, Verbs: []string{"create"}}}); err != nil {
		t.Fatal(err)
	}
	cfg, err := testCluster.ConfigForServiceAccount(ctx, e.ns, "squatter")
	if err != nil {
		t.Fatal(err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A ConfigMap and a Service made in advance, by another ServiceAccount,
// under a run's names (a hash of the workflow's uid and the node: anyone
// who may read the Workflow knows them) with the run's labels copied.
// The Service, found once the driver exists, moves the run to names
// drawn then (the first driver is deleted); nobody can hold those. The
// ConfigMap is not the driver's: its name has a part drawn at launch
// (here the squatter took the name without it, all one can know
// beforehand), so the driver launches with its own. Both are left as they
// were.
func TestSquattersNeverStopTheRunAndStayUnchanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, kind := range []string{"ConfigMap", "Service"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t, "squat-"+strings.ToLower(kind))
			squatter := squatterClient(t, e)
			tmpl := template(t, "spark-pi", sparkPi)
			e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
			n := e.names("node-1", 1)
			labels := map[string]string{spark.LabelWorkflowUID: string(e.wf.UID), spark.LabelAttempt: "1", spark.LabelManagedBy: spark.ManagedByValue}
			var name, rv string
			switch kind {
			case "ConfigMap":
				cm, err := squatter.CoreV1().ConfigMaps(e.ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n.ConfigMap, Labels: labels},
					Data: map[string]string{spark.PropertiesFile: "spark.driver.extraJavaOptions=-javaagent:/tmp/evil.jar\n"}}, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				name, rv = cm.Name, cm.ResourceVersion
			case "Service":
				svc, err := squatter.CoreV1().Services(e.ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: n.Service, Labels: labels},
					Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "evil"}, Ports: []corev1.ServicePort{{Name: "rpc", Port: 7078}}}}, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				name, rv = svc.Name, svc.ResourceVersion
			}
			if kind == "ConfigMap" {
				e.eventually(tmpl, "launched", func(r executor.ExecuteTemplateReply) bool {
					return r.Node.Phase == wfv1.NodePending && strings.HasPrefix(r.Node.Message, "SUBMITTED")
				})
				d := e.onlyDriver()
				conf := objects.ConfigMapOf(&d)
				cm, err := testCluster.Client.CoreV1().ConfigMaps(e.ns).Get(ctx, conf, metav1.GetOptions{})
				if conf == name || err != nil || len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != d.UID {
					t.Fatalf("driver %s mounts ConfigMap %q (%v, owners %+v); want its own, not the squatter's %s", d.Name, conf, err, cm.OwnerReferences, name)
				}
			} else {
				r := e.eventually(tmpl, "launched under drawn names", func(r executor.ExecuteTemplateReply) bool {
					return r.Node.Phase == wfv1.NodePending && param(r, "driver-pod") != ""
				})
				if param(r, "driver-pod") == n.DriverPod {
					t.Fatalf("result %s; want a driver under names drawn for it, not %s", describe(r), n.DriverPod)
				}
			}
			var now metav1.Object
			var err error
			if kind == "ConfigMap" {
				now, err = testCluster.Client.CoreV1().ConfigMaps(e.ns).Get(ctx, name, metav1.GetOptions{})
			} else {
				now, err = testCluster.Client.CoreV1().Services(e.ns).Get(ctx, name, metav1.GetOptions{})
			}
			if err != nil || now.GetResourceVersion() != rv || len(now.GetOwnerReferences()) > 0 {
				t.Fatalf("the squatter: %v, resourceVersion %s (was %s), owners %+v; want it unchanged", err, now.GetResourceVersion(), rv, now.GetOwnerReferences())
			}
			for _, d := range e.drivers() {
				if kind == "Service" && d.Name == n.DriverPod && d.DeletionTimestamp == nil {
					t.Errorf("driver %s runs on beside a squatted Service", d.Name)
				}
			}
		})
	}
}

// The preconditions sparkplug's patches and deletes carry are the API
// server's to hold: a merge patch that names an object's uid, as the
// driver annotation and the PodGroup handover do, is refused on an object
// of that name with another uid (one that replaced it), and so is a
// delete with a uid precondition, as the PodGroup withdrawal's; the
// object is left as it is.
func TestPatchesAndDeletesHoldToTheirUID(t *testing.T) {
	// Not parallel: it installs Volcano's PodGroup CRD, which
	// TestVolcanoPodGroup removes and installs (Go runs both alone,
	// before the parallel tests).
	ctx := context.Background()
	if err := installCRD(ctx, testCluster, volcanoCRDFile); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, "preconditions")
	admin := testCluster.Client.CoreV1()
	pod, err := admin.Pods(e.ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "replaced-driver"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: spark.DriverContainerName, Image: "spark"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale := types.UID("the-uid-of-the-pod-it-replaced")
	patch := []byte(`{"metadata":{"uid":"` + string(stale) + `","annotations":{"` + spark.AnnotationDriverLog + `":"k"}}}`)
	_, err = admin.Pods(e.ns).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err == nil || !apierrors.IsConflict(err) && !apierrors.IsInvalid(err) {
		t.Errorf("merge patch naming another uid: %v, want refused", err)
	}
	if now, _ := admin.Pods(e.ns).Get(ctx, pod.Name, metav1.GetOptions{}); now.Annotations[spark.AnnotationDriverLog] != "" {
		t.Error("the pod was annotated")
	}
	good := []byte(`{"metadata":{"uid":"` + string(pod.UID) + `","annotations":{"` + spark.AnnotationDriverLog + `":"k"}}}`)
	if _, err := admin.Pods(e.ns).Patch(ctx, pod.Name, types.MergePatchType, good, metav1.PatchOptions{}); err != nil {
		t.Errorf("merge patch naming the pod's own uid: %v", err)
	}

	dyn, err := dynamic.NewForConfig(testCluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	pgs := dyn.Resource(volcanoPodGroups).Namespace(e.ns)
	pg := &unstructured.Unstructured{}
	pg.SetAPIVersion("scheduling.volcano.sh/v1beta1")
	pg.SetKind("PodGroup")
	pg.SetName("run-pg")
	if pg, err = pgs.Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	handover := []byte(`{"metadata":{"uid":"` + string(stale) + `","labels":{"` + spark.LabelAppSelector + `":"spark-x"}}}`)
	if _, err := pgs.Patch(ctx, pg.GetName(), types.MergePatchType, handover, metav1.PatchOptions{}); err == nil {
		t.Error("PodGroup merge patch naming another uid went through")
	}
	if err := pgs.Delete(ctx, pg.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &stale}}); !apierrors.IsConflict(err) {
		t.Errorf("PodGroup delete with another uid: %v, want 409 Conflict", err)
	}
	now, err := pgs.Get(ctx, pg.GetName(), metav1.GetOptions{})
	if err != nil || now.GetLabels()[spark.LabelAppSelector] != "" {
		t.Errorf("the PodGroup: %v, labels %v; want it there, unchanged", err, now.GetLabels())
	}
}
