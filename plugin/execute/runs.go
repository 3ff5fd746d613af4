package execute

import (
	"sort"
	"strconv"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

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

func attemptOf(p *corev1.Pod) int {
	n, err := strconv.Atoi(p.Labels[spark.LabelAttempt])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// runs groups the cached driver pods with the request's key by node, and
// adds a ghost run for every listed node whose recorded result names a
// driver the cluster no longer has (deleted by someone else): its node
// must not silently start over.
func (r *request) runs(tasks []identity.Task) map[string]*run {
	out := map[string]*run{}
	for _, p := range r.scope.Pods() {
		if p.Labels[spark.LabelRole] != spark.RoleDriver || p.Labels[spark.LabelTemplate] != r.key || r.core.discarded.has(p.UID) {
			continue
		}
		node := p.Annotations[spark.AnnotationNodeID]
		if node == "" {
			continue
		}
		rn := out[node]
		if rn == nil {
			rn = &run{nodeID: node}
			out[node] = rn
		}
		rn.attempts = append(rn.attempts, p)
	}
	for _, cm := range r.scope.ConfigMaps() {
		if cm.Labels[spark.LabelTemplate] != r.key || cm.Annotations[spark.AnnotationStopped] == "" {
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
		stand := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name: cm.Annotations[spark.AnnotationDriver], Namespace: cm.Namespace,
			Labels: cm.Labels, Annotations: cm.Annotations, CreationTimestamp: cm.CreationTimestamp,
		}}
		rn.attempts = append(rn.attempts, stand)
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

func submittedAt(rn *run) time.Time {
	if rn.ghost {
		return rn.missingSince
	}
	return rn.head().CreationTimestamp.Time
}

func (r *request) views(runs map[string]*run) []identity.Run {
	landed := r.landedDrivers()
	out := make([]identity.Run, 0, len(runs))
	for _, rn := range runs {
		h := rn.head()
		v := identity.Run{
			NodeID:    rn.nodeID,
			Final:     finalOf(r.verdict(rn)),
			Reported:  identity.Mode(h.Annotations[spark.AnnotationReportedMode]),
			AdoptedBy: h.Annotations[spark.AnnotationAdoptedBy],
			Landed:    landed[h.Name],
		}
		if at, err := time.Parse(time.RFC3339, h.Annotations[spark.AnnotationReported]); err == nil {
			v.ReportedAt = at
		}
		out = append(out, v)
	}
	return out
}

// landedDrivers are the drivers whose result Argo shows on a completed
// node of the cached Workflow (its driver-pod output): hand-outs that
// certainly arrived. Argo drops a node's TaskSet status before its task,
// so the TaskSet alone can make a fulfilled node look open again.
func (r *request) landedDrivers() map[string]bool {
	out := map[string]bool{}
	w := r.scope.WorkflowObject()
	if w == nil {
		return out
	}
	for _, n := range w.Status.Nodes {
		if !n.Phase.Completed() || n.Outputs == nil {
			continue
		}
		res := wfv1.NodeResult{Outputs: n.Outputs}
		if d := recordedParam(&res, OutputDriverPod); d != "" {
			out[d] = true
		}
	}
	return out
}

// executors are the cached executor pods of a driver.
func (r *request) executors(driver *corev1.Pod) []*corev1.Pod {
	appID := driver.Labels[spark.LabelAppSelector]
	var out []*corev1.Pod
	for _, p := range r.scope.Pods() {
		if p.Labels[spark.LabelRole] == spark.RoleExecutor && p.Labels[spark.LabelAppSelector] == appID {
			out = append(out, p)
		}
	}
	return out
}

func expectedExecutors(s *spec.SparkApplicationSpec) int32 {
	if s.DynamicAllocation != nil && s.DynamicAllocation.Enabled {
		return 0
	}
	if s.Executor.Instances == nil {
		return 1
	}
	return *s.Executor.Instances
}

// endedAt is when the driver's attempt ended: its container's finish time,
// else the time the pod was marked for deletion, else now.
func endedAt(p *corev1.Pod, now time.Time) time.Time {
	var latest time.Time
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.FinishedAt.After(latest) {
			latest = t.FinishedAt.Time
		}
	}
	if !latest.IsZero() {
		return latest
	}
	if p.DeletionTimestamp != nil {
		return p.DeletionTimestamp.Time
	}
	return now
}

func finalOf(v Verdict, _ limit) bool { return v.Final }
