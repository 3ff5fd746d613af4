package execute

import (
	"slices"
	"sort"
	"strconv"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/nodestatus"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// gather reads one node's snapshot from the workflow's cache: its TaskSet
// entry, what the Workflow shows of it, its run in the current
// incarnation (driver pods, the tombstone of a stopped one, or a ghost of
// one the entry names and the cluster lost) with the newest driver's
// executors and Spark's progress of its job, and its refused
// submissions. It writes nothing to the
// cluster; the only memory it touches is when this process first missed a
// ghost's driver.
func (r *pass) gather(ts *wfv1.WorkflowTaskSet, wf *wfv1.Workflow) *decide.Snapshot {
	s := &decide.Snapshot{Now: r.now, NodeID: r.node, Failures: r.core.failures.of(r.wf.UID, r.node)}
	s.InLoop, s.LoopKnown = scope.InLoop(wf.Status.Nodes, r.node)
	// The node's result: its entry, or, once the entry was withdrawn
	// (Argo had applied it), what the Workflow shows of it.
	var entry *wfv1.NodeResult
	if res, ok := nodestatus.Current(ts, wf, r.node); ok {
		entry, s.EntryPhase = &res, state.Phase(res.Phase)
	}
	if n, ok := wf.Status.Nodes[r.node]; ok && n.Fulfilled() {
		s.Fulfilled = true
	}
	_, hasEntry := ts.Status.Nodes[r.node]
	gone := !hasEntry && r.flow.writer.SawFinal(r.node, r.incarnation)
	s.FinalRemoved = r.flow.removedFor(r.node, gone, r.now) < r.core.opts.HoldVanished && gone
	r.record, r.started = recordOf(entry), nodeStart(wf, r.node)
	s.Started = r.started
	s.Run = r.run(entry, r.started)
	if s.Run != nil && s.Run.Tomb == nil && !s.Run.Ghost {
		s.Run.Executors = r.executors(s.Run.Head())
		s.Progress = r.core.sparkProgress(r.step.Body, s.Run.Head())
	}
	s.Workloads, s.WorkloadsKnown = r.kueueWorkloads()
	return s
}

// current: an object of the node's run belongs to its current
// incarnation. A run launched before sparkplug knew incarnations carries
// none, and is taken for the current one: the driver a previous version
// launched is adopted, never launched again.
func (r *pass) current(m metav1.ObjectMeta) bool {
	inc, ok := m.Annotations[spark.AnnotationIncarnation]
	return !ok || inc == r.incarnation
}

// run gathers the node's run: its driver pods, the tombstone of a driver
// sparkplug stopped, and a ghost when the entry names a newer driver the
// cluster no longer has (deleted by someone else): the node must not
// silently start over. Only objects this workflow owns under the names
// sparkplug gives them count.
func (r *pass) run(entry *wfv1.NodeResult, started time.Time) *decide.Run {
	var rn *decide.Run
	add := func(p *corev1.Pod) {
		if rn == nil {
			rn = &decide.Run{}
		}
		rn.Attempts = append(rn.Attempts, p)
	}
	rec := r.record
	var drivers []*corev1.Pod
	for _, p := range r.scope.PodsOfNode(r.node) {
		if p.Labels[spark.LabelRole] != spark.RoleDriver || p.Annotations[spark.AnnotationNodeID] != r.node || !r.current(p.ObjectMeta) ||
			r.core.discarded.has(p.UID) || !driverpod.OwnDriver(p, r.wf) {
			continue
		}
		if why := forgery(p, rec, started, r.core.launched.has); why != "" {
			r.forged("pod", p.Name, p.UID, why)
			continue
		}
		drivers = append(drivers, p)
	}
	drivers, chained := forgedInChain(drivers, rec, r.core.launched.has)
	for _, p := range drivers {
		add(p)
	}
	for _, d := range chained {
		r.forged("pod", d.pod.Name, d.pod.UID, d.why)
	}
	newest := func() int {
		n := 0
		if rn != nil {
			for _, p := range rn.Attempts {
				n = max(n, attemptOf(p))
			}
		}
		return n
	}
	var tomb *corev1.ConfigMap
	for _, cm := range r.scope.ConfigMapsOfNode(r.node) {
		if cm.Annotations[spark.AnnotationStopped] == "" || cm.Annotations[spark.AnnotationNodeID] != r.node || !r.current(cm.ObjectMeta) ||
			!driverpod.OwnTomb(cm, r.wf) {
			continue
		}
		if !r.core.launched.has(cm.UID) && !tombCounts(cm, drivers, rec) {
			r.forged("configmap", cm.Name, cm.UID, "a tombstone that names no driver of its attempt by uid")
			continue
		}
		if a := attemptOf(&corev1.Pod{ObjectMeta: cm.ObjectMeta}); (a > newest() || a == newest() && stopping(rn, a)) &&
			(tomb == nil || a > attemptOf(&corev1.Pod{ObjectMeta: tomb.ObjectMeta})) {
			tomb = cm
		}
	}
	if tomb != nil {
		// The stopped driver, still terminating, is its tombstone's: its
		// last status (a kubelet ends a container that never started as
		// ContainerStatusUnknown, exit 137) is not why the attempt ended.
		if rn != nil {
			a := attemptOf(&corev1.Pod{ObjectMeta: tomb.ObjectMeta})
			rn.Attempts = slices.DeleteFunc(rn.Attempts, func(p *corev1.Pod) bool { return attemptOf(p) == a })
			if len(rn.Attempts) == 0 {
				rn = nil
			}
		}
		add(tombStandIn(tomb))
	}
	if rn != nil {
		sort.Slice(rn.Attempts, func(i, j int) bool { return attemptOf(rn.Attempts[i]) < attemptOf(rn.Attempts[j]) })
		rn.Tomb = tomb
	}
	driver, attempt := recordedDriver(entry)
	if driver == "" || attempt <= newest() || (rn != nil && rn.Tomb != nil && attemptOf(rn.Head()) >= attempt) {
		return rn
	}
	// The entry names a driver of this node newer than any the cache has.
	ghost := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: driver, Namespace: r.wf.Namespace,
		Labels:      map[string]string{spark.LabelAttempt: strconv.Itoa(attempt), spark.LabelAppSelector: nodestatus.Param(entry, spark.OutputApplicationID)},
		Annotations: map[string]string{spark.AnnotationNodeID: r.node, spark.AnnotationDriverUID: string(rec.uid)},
	}}
	add(ghost)
	rn.Tomb = nil
	rn.Ghost = true
	rn.MissingSince = r.core.missing.since(r.wf.UID+"/"+driver, r.now)
	return rn
}

// stopping: the run's drivers of attempt are all being deleted, as
// sparkplug's stop does once their tombstone is written. Until the delete
// went through (it may fail, and the stop is made again), the tombstone
// of a live driver of the same attempt does not count.
func stopping(rn *decide.Run, attempt int) bool {
	if rn == nil {
		return false
	}
	found := false
	for _, p := range rn.Attempts {
		if attemptOf(p) == attempt {
			if p.DeletionTimestamp == nil {
				return false
			}
			found = true
		}
	}
	return found
}

// tombStandIn is the stand-in for a stopped driver, built from its
// tombstone ConfigMap.
func tombStandIn(cm *corev1.ConfigMap) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: cm.Annotations[spark.AnnotationDriver], Namespace: cm.Namespace,
		Labels: cm.Labels, Annotations: cm.Annotations, CreationTimestamp: cm.CreationTimestamp,
	}}
}

// executors are the cached executor pods of a driver.
func (r *pass) executors(driver *corev1.Pod) []*corev1.Pod {
	appID := driver.Labels[spark.LabelAppSelector]
	var out []*corev1.Pod
	for _, p := range r.scope.PodsOfApp(appID) {
		if p.Labels[spark.LabelRole] == spark.RoleExecutor && p.Labels[spark.LabelAppSelector] == appID {
			out = append(out, p)
		}
	}
	return out
}

// attemptOf is driverpod.Attempt, under the name this package's many
// callers use.
func attemptOf(p *corev1.Pod) int { return driverpod.Attempt(p) }

// recordedDriver reads the driver and attempt a node's entry names.
func recordedDriver(res *wfv1.NodeResult) (string, int) {
	driver := nodestatus.Param(res, spark.OutputDriverPod)
	attempt, err := strconv.Atoi(nodestatus.Param(res, spark.OutputAttempt))
	if err != nil || attempt < 1 {
		attempt = 1
	}
	return driver, attempt
}
