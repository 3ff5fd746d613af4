package monitor

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// tracker turns what the informers see into metric changes. It remembers,
// per pod, the facts it last counted (so an update counts a transition
// once, whatever the informer's old object was, and a resync or a relist
// counts nothing again) and the label values the running gauge was raised
// with (so it is lowered on the same series even when the labels changed
// since, e.g. the workflow became known); per Event, the count already
// counted.
type tracker struct {
	mu      sync.Mutex
	metrics *sparkMetrics
	labels  labeler
	pods    map[types.UID]*seenPod
	events  map[types.UID]int32
}

type seenPod struct {
	facts facts
	// running are the label values of the running gauge the pod raised;
	// nil: it raised none.
	running []string
}

func newTracker(m *sparkMetrics, l labeler) *tracker {
	return &tracker{metrics: m, labels: l, pods: map[types.UID]*seenPod{}, events: map[types.UID]int32{}}
}

// pod counts a pod added or updated, if it is a run's.
func (t *tracker) pod(p *corev1.Pod) {
	ours := t.counted(p)
	cur := factsOf(p)
	lv := t.labels.forPod(p)
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.pods[p.UID]
	var prev *facts
	switch {
	case s != nil:
		// Counted once, a pod is counted to its end, also when its
		// Workflow has left the cache since.
		prev = &s.facts
	case !ours:
		return
	default:
		s = &seenPod{}
		t.pods[p.UID] = s
	}
	t.apply(s, transitions(prev, &cur), lv)
	s.facts = cur
}

// counted says whether a pod not seen before is counted: its workflow-uid label names a
// Workflow of its namespace the cache knows, and a driver is owned by that
// Workflow. Labels alone are not enough: whoever may create pods in a job
// namespace could make pods with Spark's and sparkplug's labels and
// inflate every spark_* series. What is left (a pod that copies a live
// Workflow's uid into both) only admission can stop; docs/operations.md, Hardening.
func (t *tracker) counted(p *corev1.Pod) bool {
	uid := p.Labels[spark.LabelWorkflowUID]
	if uid == "" || t.labels.workflow == nil || t.labels.workflow(p.Namespace, uid) == nil {
		return false
	}
	if p.Labels[spark.LabelRole] != spark.RoleDriver {
		return true
	}
	return identity.OwnedByWorkflow(p.OwnerReferences, uid)
}

// podGone counts a pod deleted.
func (t *tracker) podGone(uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.pods[uid]
	if s == nil {
		return
	}
	t.apply(s, transitions(&s.facts, nil), nil)
	delete(t.pods, uid)
}

// apply makes the changes on the series of lv, and a lowering of a
// running gauge on the series the pod raised.
func (t *tracker) apply(s *seenPod, cs []change, lv []string) {
	for _, c := range cs {
		switch c.what {
		case appRunningUp, executorRunningUp:
			s.running = lv
			t.metrics.apply([]change{c}, lv)
		case appRunningDown, executorRunningDown:
			if s.running != nil {
				t.metrics.apply([]change{c}, s.running)
				s.running = nil
			}
		default:
			t.metrics.apply([]change{c}, lv)
		}
	}
}

// event counts the submissions an Event says failed: all of its count
// when first seen, then what its count grew by (the recorder counts
// repeats of one Event instead of making new ones).
func (t *tracker) event(e *corev1.Event) {
	if e.Reason != spark.ReasonSubmissionFailed || e.InvolvedObject.Kind != "Workflow" {
		return
	}
	n := e.Count
	if e.Series != nil && e.Series.Count > n {
		n = e.Series.Count
	}
	n = max(n, 1)
	lv := t.labels.forWorkflow(e.InvolvedObject.Namespace, string(e.InvolvedObject.UID))
	t.mu.Lock()
	defer t.mu.Unlock()
	if grew := n - t.events[e.UID]; grew > 0 {
		t.metrics.failedSubmissionCount.WithLabelValues(lv...).Add(float64(grew))
		t.events[e.UID] = n
	}
}

// eventGone forgets an Event that expired.
func (t *tracker) eventGone(uid types.UID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.events, uid)
}
