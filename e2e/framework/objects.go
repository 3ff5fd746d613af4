package framework

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// SparkObjects is everything labelled with one workflow's uid: what
// sparkplug created for it (driver pods, their ConfigMaps and Services,
// tombstones) and what the simulated drivers created (executor pods).
type SparkObjects struct {
	Drivers, Executors []corev1.Pod
	ConfigMaps         []corev1.ConfigMap
	Services           []corev1.Service
	Ingresses          []networkingv1.Ingress
}

// Empty reports whether nothing is left.
func (o SparkObjects) Empty() bool {
	return len(o.Drivers)+len(o.Executors)+len(o.ConfigMaps)+len(o.Services)+len(o.Ingresses) == 0
}

// String lists the objects by kind and name.
func (o SparkObjects) String() string {
	var parts []string
	for _, p := range o.Drivers {
		parts = append(parts, "driver/"+p.Name)
	}
	for _, p := range o.Executors {
		parts = append(parts, "executor/"+p.Name)
	}
	for _, c := range o.ConfigMaps {
		parts = append(parts, "configmap/"+c.Name)
	}
	for _, s := range o.Services {
		parts = append(parts, "service/"+s.Name)
	}
	for _, i := range o.Ingresses {
		parts = append(parts, "ingress/"+i.Name)
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " ")
}

// SparkObjects lists every pod, ConfigMap, Service and Ingress labelled with the
// workflow's uid, each kind sorted by name.
func (e *Env) SparkObjects(ctx context.Context, wf *wfv1.Workflow) (SparkObjects, error) {
	var out SparkObjects
	sel := labels.Set{spark.LabelWorkflowUID: string(wf.UID)}.String()
	opts := metav1.ListOptions{LabelSelector: sel}
	pods, err := e.Kube.CoreV1().Pods(wf.Namespace).List(ctx, opts)
	if err != nil {
		return out, fmt.Errorf("list pods of %s: %w", wf.Name, err)
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	for _, p := range pods.Items {
		if p.Labels[spark.LabelRole] == spark.RoleDriver {
			out.Drivers = append(out.Drivers, p)
		} else {
			out.Executors = append(out.Executors, p)
		}
	}
	cms, err := e.Kube.CoreV1().ConfigMaps(wf.Namespace).List(ctx, opts)
	if err != nil {
		return out, fmt.Errorf("list configmaps of %s: %w", wf.Name, err)
	}
	sort.Slice(cms.Items, func(i, j int) bool { return cms.Items[i].Name < cms.Items[j].Name })
	out.ConfigMaps = cms.Items
	svcs, err := e.Kube.CoreV1().Services(wf.Namespace).List(ctx, opts)
	if err != nil {
		return out, fmt.Errorf("list services of %s: %w", wf.Name, err)
	}
	sort.Slice(svcs.Items, func(i, j int) bool { return svcs.Items[i].Name < svcs.Items[j].Name })
	out.Services = svcs.Items
	ings, err := e.Kube.NetworkingV1().Ingresses(wf.Namespace).List(ctx, opts)
	if err != nil {
		return out, fmt.Errorf("list ingresses of %s: %w", wf.Name, err)
	}
	sort.Slice(ings.Items, func(i, j int) bool { return ings.Items[i].Name < ings.Items[j].Name })
	out.Ingresses = ings.Items
	return out, nil
}

// ExpectSparkObjects checks everything labelled with the workflow's uid.
func (th *Then) ExpectSparkObjects(f func(t *testing.T, objs SparkObjects)) *Then {
	th.t.Helper()
	objs, err := th.w.env.SparkObjects(context.Background(), th.w.wf)
	if err != nil {
		th.t.Fatal(err)
	}
	f(th.t, objs)
	return th
}

// DeleteWorkflow deletes the workflow as `kubectl delete workflow` does
// (background propagation: the garbage collector removes what it owns).
// Waits on the workflow itself fail after this; WaitForSparkObjects works.
func (w *When) DeleteWorkflow() *When {
	w.t.Helper()
	if w.wf == nil {
		w.t.Fatal("no workflow submitted")
	}
	policy := metav1.DeletePropagationBackground
	err := w.env.Workflows.ArgoprojV1alpha1().Workflows(w.wf.Namespace).Delete(w.ctx(), w.wf.Name, metav1.DeleteOptions{PropagationPolicy: &policy})
	if err != nil {
		w.t.Fatalf("delete workflow %s: %v", w.wf.Name, err)
	}
	w.t.Logf("deleted workflow %s", w.wf.Name)
	return w
}

// WaitForSparkObjects polls the objects labelled with the workflow's uid
// until cond holds. It does not read the workflow, which may be gone.
func (w *When) WaitForSparkObjects(what string, cond func(SparkObjects) bool, timeout ...time.Duration) *When {
	w.t.Helper()
	if w.wf == nil {
		w.t.Fatal("no workflow submitted")
	}
	var objs SparkObjects
	took := pollUntil(w.t, w.env, what, timeoutOr(timeout), pollInterval, func() (bool, error) {
		var err error
		if objs, err = w.env.SparkObjects(w.ctx(), w.wf); err != nil {
			return false, err
		}
		return cond(objs), nil
	}, func() string { return fmt.Sprintf("there are %s", objs) })
	w.t.Logf("%s after %v", what, took.Round(100*time.Millisecond))
	return w
}

// WaitFor polls cond until it holds, failing the test after the timeout
// or when a process of the environment died.
func (w *When) WaitFor(what string, cond func() bool, timeout ...time.Duration) *When {
	w.t.Helper()
	took := pollUntil(w.t, w.env, what, timeoutOr(timeout), pollInterval, func() (bool, error) { return cond(), nil }, nil)
	w.t.Logf("%s after %v", what, took.Round(100*time.Millisecond))
	return w
}

// Sleep waits for d (to show that something does not happen meanwhile).
func (w *When) Sleep(d time.Duration) *When {
	w.t.Helper()
	time.Sleep(d)
	return w
}

// OwnedBy reports whether refs hold an owner reference to the object with uid.
func OwnedBy(refs []metav1.OwnerReference, uid string) bool {
	for _, r := range refs {
		if string(r.UID) == uid {
			return true
		}
	}
	return false
}

// Observe reads the workflow once and records its nodes' states (for
// ExpectHistory and a failed test's dump) without waiting for anything.
func (w *When) Observe() *When {
	w.t.Helper()
	if w.wf == nil {
		w.t.Fatal("no workflow submitted")
	}
	wf, err := w.env.Workflows.ArgoprojV1alpha1().Workflows(w.wf.Namespace).Get(w.ctx(), w.wf.Name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatalf("get workflow: %v", err)
	}
	w.wf = wf
	w.record(wf)
	return w
}
