package execute

import (
	"sort"
	"strconv"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// snapshot is everything one decision reads, as one plain value: the
// TaskSet's nodes with the request's template key, the Workflow's node
// status, the runs launched for those nodes with their executors, and the
// submission failures kept in memory. gather makes it; decide reads it and
// nothing else.
type snapshot struct {
	now time.Time
	// tasks are the TaskSet's nodes whose template has the request's key,
	// each with the result recorded for it (from the TaskSet, or the
	// Workflow's node status when that says the node is done).
	tasks []identity.Task
	// nodes is the cached Workflow's node status (nil without one).
	nodes wfv1.Nodes
	// runs are the runs with the request's key, by the node each was
	// launched for, ghosts and tombstones included.
	runs map[string]*run
	// failures are the refused submissions of this workflow's attempts,
	// by failKey(node, attempt).
	failures map[string]submissionFailure
}

// run is every attempt launched for one node, newest last.
type run struct {
	nodeID   string
	attempts []*corev1.Pod
	// ghost: the newest driver is gone from the cluster. Its name and
	// attempt come from the result the agent recorded in the TaskSet, and
	// missingSince from when this process first missed it.
	ghost        bool
	missingSince time.Time
	// tomb: the newest driver was stopped by sparkplug; head is a stand-in
	// built from its tombstone ConfigMap, which carries the bookkeeping.
	tomb *corev1.ConfigMap
	// executors are the cached executor pods of the newest driver.
	executors []*corev1.Pod
}

func (rn *run) head() *corev1.Pod { return rn.attempts[len(rn.attempts)-1] }

// newest is the attempt with the highest number (attempts may not be
// sorted yet while runs are being gathered).
func (rn *run) newest() *corev1.Pod {
	n := rn.attempts[0]
	for _, p := range rn.attempts[1:] {
		if attemptOf(p) > attemptOf(n) {
			n = p
		}
	}
	return n
}
func (rn *run) attempt() int { return attemptOf(rn.head()) }

// observedHead is the newest driver as observed: nil for a ghost or a
// tombstone.
func (rn *run) observedHead() *corev1.Pod {
	if rn.ghost || rn.tomb != nil {
		return nil
	}
	return rn.head()
}

// live: the newest driver exists and has not finished.
func (rn *run) live() bool {
	return !rn.ghost && rn.tomb == nil && !driverpod.Finished(rn.head())
}

// attemptOf is driverpod.Attempt, under the name this package's many
// callers use.
func attemptOf(p *corev1.Pod) int { return driverpod.Attempt(p) }

// gather reads one request's snapshot from the workflow's cache and the
// TaskSet given (the cached one, or one read afresh). It writes nothing to
// the cluster; the only memory it touches is when this process first
// missed a ghost's driver.
func (r *request) gather(ts *wfv1.WorkflowTaskSet) (*snapshot, error) {
	s := &snapshot{now: r.now, failures: r.core.failures.of(r.wf.UID)}
	if w := r.scope.WorkflowObject(); w != nil {
		s.nodes = w.Status.Nodes
	}
	tasks, err := r.tasks(ts, s.nodes)
	if err != nil {
		return nil, err
	}
	s.tasks = tasks
	s.runs = r.runs(tasks)
	for _, rn := range s.runs {
		if rn.tomb == nil {
			rn.executors = r.executors(rn.head())
		}
	}
	return s, nil
}

// tasks lists the TaskSet's nodes whose template has the request's key.
// Argo drops a fulfilled node's TaskSet status before its task: for a
// moment the node looks open again. The Workflow's own node status says it
// is done.
func (r *request) tasks(ts *wfv1.WorkflowTaskSet, nodes wfv1.Nodes) ([]identity.Task, error) {
	if ts == nil {
		return nil, nil
	}
	ids, err := r.scope.TasksOfTemplate(ts, r.step.Key, identity.Key)
	if err != nil {
		return nil, err
	}
	out := make([]identity.Task, 0, len(ids))
	for _, id := range ids {
		t := identity.Task{NodeID: id}
		if res, ok := ts.Status.Nodes[id]; ok {
			res := res
			t.Recorded = &res
		}
		if n, ok := nodes[id]; ok && n.Phase.Completed() && (t.Recorded == nil || !t.Recorded.Phase.Completed()) {
			t.Recorded = &wfv1.NodeResult{Phase: n.Phase, Message: n.Message, Outputs: n.Outputs}
		}
		out = append(out, t)
	}
	return out, nil
}

// runs groups the cached driver pods with the request's key by node, and
// adds a ghost run for every listed node whose recorded result names a
// driver the cluster no longer has (deleted by someone else): its node
// must not silently start over.
func (r *request) runs(tasks []identity.Task) map[string]*run {
	out := map[string]*run{}
	for _, p := range r.scope.PodsOfTemplate(r.step.Key) {
		if p.Labels[spark.LabelRole] != spark.RoleDriver || p.Labels[spark.LabelTemplate] != r.step.Key || r.core.discarded.has(p.UID) {
			continue
		}
		node := p.Annotations[spark.AnnotationNodeID]
		if node == "" || !driverpod.OwnDriver(p, r.wf) {
			continue
		}
		rn := out[node]
		if rn == nil {
			rn = &run{nodeID: node}
			out[node] = rn
		}
		rn.attempts = append(rn.attempts, p)
	}
	for _, cm := range r.scope.ConfigMapsOfTemplate(r.step.Key) {
		if cm.Labels[spark.LabelTemplate] != r.step.Key || cm.Annotations[spark.AnnotationStopped] == "" || !driverpod.OwnTomb(cm, r.wf) {
			continue
		}
		node := cm.Annotations[spark.AnnotationNodeID]
		rn := out[node]
		if rn != nil && attemptOf(rn.newest()) >= attemptOf(&corev1.Pod{ObjectMeta: cm.ObjectMeta}) {
			continue // the stopped pod is still visible, or a later attempt exists
		}
		if rn == nil {
			rn = &run{nodeID: node}
			out[node] = rn
		}
		rn.attempts = append(rn.attempts, tombStandIn(cm))
		rn.tomb = cm
	}
	for _, rn := range out {
		sort.Slice(rn.attempts, func(i, j int) bool { return attemptOf(rn.attempts[i]) < attemptOf(rn.attempts[j]) })
		if rn.tomb != nil && rn.head().Name != rn.tomb.Annotations[spark.AnnotationDriver] {
			rn.tomb = nil // a later attempt supersedes the tombstone
		}
	}
	for _, t := range tasks {
		driver, attempt := recordedDriver(t.Recorded)
		if driver == "" {
			continue
		}
		if rn := out[t.NodeID]; rn != nil && attemptOf(rn.newest()) >= attempt {
			continue
		}
		ghost := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name: driver, Namespace: r.wf.Namespace,
			Labels:      map[string]string{spark.LabelAttempt: strconv.Itoa(attempt), spark.LabelAppSelector: recordedParam(t.Recorded, OutputApplicationID)},
			Annotations: map[string]string{spark.AnnotationNodeID: t.NodeID},
		}}
		rn := out[t.NodeID]
		if rn == nil {
			rn = &run{nodeID: t.NodeID}
			out[t.NodeID] = rn
		}
		rn.attempts = append(rn.attempts, ghost)
		rn.ghost = true
		rn.missingSince = r.core.missing.since(r.wf.UID+"/"+driver, r.now)
	}
	return out
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
func (r *request) executors(driver *corev1.Pod) []*corev1.Pod {
	appID := driver.Labels[spark.LabelAppSelector]
	var out []*corev1.Pod
	for _, p := range r.scope.PodsOfApp(appID) {
		if p.Labels[spark.LabelRole] == spark.RoleExecutor && p.Labels[spark.LabelAppSelector] == appID {
			out = append(out, p)
		}
	}
	return out
}

// recordedDriver reads the driver and attempt sparkplug reported for a node.
func recordedDriver(res *wfv1.NodeResult) (string, int) {
	driver := recordedParam(res, OutputDriverPod)
	attempt, err := strconv.Atoi(recordedParam(res, OutputAttempt))
	if err != nil || attempt < 1 {
		attempt = 1
	}
	return driver, attempt
}

func recordedParam(res *wfv1.NodeResult, name string) string {
	if res == nil || res.Outputs == nil {
		return ""
	}
	for _, p := range res.Outputs.Parameters {
		if p.Name == name && p.Value != nil {
			return p.Value.String()
		}
	}
	return ""
}
