//go:build e2e

package kueue

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Recorders of what the tests watch for their whole length (informers:
// watches, not polls): a LocalQueue's Workloads, the Spark pods, and the
// admission-to-driver latency read from both.

// wlEvent is one change of a Workload as the watch saw it.
type wlEvent struct {
	At      time.Time
	Deleted bool
	Obj     *unstructured.Unstructured
}

// workloads records every change of the Workloads of one LocalQueue from
// the test's start to its end (an informer: a watch, not polls).
type workloads struct {
	lq     string
	mu     sync.Mutex
	events []wlEvent
}

// watchWorkloads starts recording the Workloads of LocalQueue lq in the
// environment's namespace until the test ends.
func watchWorkloads(t *testing.T, lq string) *workloads {
	t.Helper()
	w := &workloads{lq: lq}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(env.Cluster.Dynamic, 0, env.Namespace, nil)
	record(t, "Workload", factory.ForResource(gvrWorkload).Informer(), factory.Start, func(obj any, deleted bool) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok || queueName(u) != lq {
			return
		}
		w.mu.Lock()
		w.events = append(w.events, wlEvent{At: time.Now(), Deleted: deleted, Obj: u.DeepCopy()})
		w.mu.Unlock()
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("Workloads of LocalQueue %s, every change seen:\n%s", lq, w)
		}
	})
	return w
}

// Events returns the changes seen so far.
func (w *workloads) Events() []wlEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.events)
}

// Live returns the Workloads that exist now (as last seen), by name.
func (w *workloads) Live() map[string]*unstructured.Unstructured {
	live := map[string]*unstructured.Unstructured{}
	for _, e := range w.Events() {
		if e.Deleted {
			delete(live, e.Obj.GetName())
		} else {
			live[e.Obj.GetName()] = e.Obj
		}
	}
	return live
}

// Names lists every Workload seen, in the order they appeared.
func (w *workloads) Names() []string {
	var names []string
	for _, e := range w.Events() {
		if !slices.Contains(names, e.Obj.GetName()) {
			names = append(names, e.Obj.GetName())
		}
	}
	return names
}

// FirstTrue is when the watch first saw condition typ True on Workload
// name, and the Workload then.
func (w *workloads) FirstTrue(name, typ string) (time.Time, *unstructured.Unstructured, bool) {
	for _, e := range w.Events() {
		if !e.Deleted && e.Obj.GetName() == name && isTrue(e.Obj, typ) {
			return e.At, e.Obj, true
		}
	}
	return time.Time{}, nil, false
}

// Ever reports whether Workload name was ever seen with condition typ
// True, returning that condition.
func (w *workloads) Ever(name, typ string) (cond, bool) {
	for _, e := range w.Events() {
		if e.Obj.GetName() == name && isTrue(e.Obj, typ) {
			c, _ := condition(e.Obj, typ)
			return c, true
		}
	}
	return cond{}, false
}

// DeletedAt is when the watch saw Workload name deleted.
func (w *workloads) DeletedAt(name string) (time.Time, bool) {
	for _, e := range w.Events() {
		if e.Deleted && e.Obj.GetName() == name {
			return e.At, true
		}
	}
	return time.Time{}, false
}

// Last is Workload name as last seen (deleted or not).
func (w *workloads) Last(name string) *unstructured.Unstructured {
	var last *unstructured.Unstructured
	for _, e := range w.Events() {
		if e.Obj.GetName() == name {
			last = e.Obj
		}
	}
	return last
}

func (w *workloads) String() string {
	var b strings.Builder
	for _, e := range w.Events() {
		if e.Deleted {
			fmt.Fprintf(&b, "  %s deleted %s\n", e.At.Format("15:04:05.000"), e.Obj.GetName())
			continue
		}
		var conds []string
		for _, typ := range []string{"QuotaReserved", "Admitted", "PodsReady", "Evicted", "Preempted", "Finished"} {
			if c, ok := condition(e.Obj, typ); ok {
				conds = append(conds, fmt.Sprintf("%s=%s(%s)", typ, c.Status, c.Reason))
			}
		}
		fmt.Fprintf(&b, "  %s %s %s\n", e.At.Format("15:04:05.000"), e.Obj.GetName(), strings.Join(conds, " "))
	}
	return b.String()
}

// podEvent is one change of a Spark pod as the watch saw it.
type podEvent struct {
	At      time.Time
	Deleted bool
	Pod     *corev1.Pod
}

// sparkPods records every change of every Spark pod (driver or executor)
// in the environment's namespace from the test's start to its end.
type sparkPods struct {
	mu     sync.Mutex
	events []podEvent
}

// watchSparkPods starts recording Spark pods until the test ends.
func watchSparkPods(t *testing.T) *sparkPods {
	t.Helper()
	p := &sparkPods{}
	sel, err := labels.Parse(spark.LabelRole + " in (" + spark.RoleDriver + "," + spark.RoleExecutor + ")")
	if err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(env.Kube, 0, informers.WithNamespace(env.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sel.String() }))
	record(t, "pod", factory.Core().V1().Pods().Informer(), factory.Start, func(obj any, deleted bool) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		p.mu.Lock()
		p.events = append(p.events, podEvent{At: time.Now(), Deleted: deleted, Pod: pod.DeepCopy()})
		p.mu.Unlock()
	})
	return p
}

// record tells add of every change inf sees (deleted: a deletion) from
// now until the test ends: start starts inf's factory, and record waits
// for its first list. what names the watch in a failure.
func record(t *testing.T, what string, inf cache.SharedIndexInformer, start func(<-chan struct{}), add func(obj any, deleted bool)) {
	t.Helper()
	seen := func(obj any, deleted bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		add(obj, deleted)
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { seen(obj, false) },
		UpdateFunc: func(_, obj any) { seen(obj, false) },
		DeleteFunc: func(obj any) { seen(obj, true) },
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		t.Fatalf("%s watch did not sync", what)
	}
}

// Events returns the changes of the pods of the workflows with uids.
func (p *sparkPods) Events(uids ...types.UID) []podEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []podEvent
	for _, e := range p.events {
		if slices.Contains(uids, types.UID(e.Pod.Labels[spark.LabelWorkflowUID])) {
			out = append(out, e)
		}
	}
	return out
}

// Pods returns each pod of the workflows with uids as last seen, by name.
func (p *sparkPods) Pods(uids ...types.UID) map[string]podEvent {
	out := map[string]podEvent{}
	for _, e := range p.Events(uids...) {
		out[e.Pod.Name] = e
	}
	return out
}

// FirstSeen is when the watch first saw pod name.
func (p *sparkPods) FirstSeen(name string) (time.Time, *corev1.Pod, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.events {
		if e.Pod.Name == name {
			return e.At, e.Pod, true
		}
	}
	return time.Time{}, nil, false
}

// active reports whether a pod still holds its place: not ended, not
// being deleted.
func active(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

// application names the application a Spark pod belongs to: a driver's
// own name, an executor's driver's (its controller owner).
func application(pod *corev1.Pod) string {
	if pod.Labels[spark.LabelRole] == spark.RoleDriver {
		return pod.Name
	}
	if ref := metav1.GetControllerOf(pod); ref != nil {
		return ref.Name
	}
	return pod.Name
}

// overlap is a moment the pods of two applications were active at once.
type overlap struct {
	At   time.Time
	Apps []string
}

// Overlaps replays the changes of the pods of the workflows with uids in
// the order the watch saw them and returns every moment at which pods of
// more than one application were active. An executor counts while its
// driver is active: once the driver has ended, its executors are Spark's
// leftovers that exit with it (the simulator deletes them a moment later),
// which hold no quota Kueue accounts for.
func (p *sparkPods) Overlaps(uids ...types.UID) []overlap {
	state := map[string]*corev1.Pod{}
	var out []overlap
	for _, e := range p.Events(uids...) {
		if e.Deleted {
			delete(state, e.Pod.Name)
		} else {
			state[e.Pod.Name] = e.Pod
		}
		apps := map[string]bool{}
		for _, pod := range state {
			if !active(pod) {
				continue
			}
			app := application(pod)
			if d, ok := state[app]; pod.Labels[spark.LabelRole] == spark.RoleExecutor && (!ok || !active(d)) {
				continue
			}
			apps[app] = true
		}
		if len(apps) > 1 {
			names := make([]string, 0, len(apps))
			for a := range apps {
				names = append(names, a)
			}
			sort.Strings(names)
			out = append(out, overlap{At: e.At, Apps: names})
		}
	}
	return out
}

// MaxActiveExecutors is the most executors of driver that were active at
// once.
func (p *sparkPods) MaxActiveExecutors(driver string, uids ...types.UID) int {
	state := map[string]*corev1.Pod{}
	most := 0
	for _, e := range p.Events(uids...) {
		if e.Deleted {
			delete(state, e.Pod.Name)
		} else {
			state[e.Pod.Name] = e.Pod
		}
		n := 0
		for _, pod := range state {
			if pod.Labels[spark.LabelRole] == spark.RoleExecutor && application(pod) == driver && active(pod) {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// admissionLatency logs, for each driver of the workflows with uids, the
// time from its Workload's Admitted condition to the driver's creation:
// from the API objects' timestamps (whole seconds) and from when the
// watches saw each (milliseconds).
func admissionLatency(t *testing.T, wls *workloads, pods *sparkPods, uids ...types.UID) {
	t.Helper()
	var lines []string
	for name, e := range pods.Pods(uids...) {
		if e.Pod.Labels[spark.LabelRole] != spark.RoleDriver {
			continue
		}
		wl := e.Pod.Annotations[annotationWorkload]
		seenAdmitted, obj, ok := wls.FirstTrue(wl, "Admitted")
		if !ok {
			t.Errorf("driver %s: its Workload %q (annotation %s) was never seen Admitted", name, wl, annotationWorkload)
			continue
		}
		c, _ := condition(obj, "Admitted")
		seenDriver, first, _ := pods.FirstSeen(name)
		lines = append(lines, fmt.Sprintf("%s: Admitted %s -> created %s: %v by the API's timestamps (1s resolution), %v as the watches saw them",
			name, c.LastTransitionTime.Format(time.TimeOnly), first.CreationTimestamp.Format(time.TimeOnly),
			first.CreationTimestamp.Sub(c.LastTransitionTime), seenDriver.Sub(seenAdmitted).Round(time.Millisecond)))
	}
	sort.Strings(lines)
	t.Logf("admission-to-driver latency:\n  %s", strings.Join(lines, "\n  "))
}
