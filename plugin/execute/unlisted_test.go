package execute

import (
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

func TestRecentlyUnlistedNodes(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	pod := func(ann map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: ann}}
	}
	node := func(phase wfv1.NodePhase, ago time.Duration) wfv1.NodeStatus {
		return wfv1.NodeStatus{Phase: phase, FinishedAt: metav1.NewTime(now.Add(-ago))}
	}
	s := &snapshot{
		now:   now,
		tasks: []identity.Task{{NodeID: "b"}},
		runs: map[string]*run{
			"a":     {nodeID: "a", attempts: []*corev1.Pod{pod(nil)}},
			"b":     {nodeID: "b", attempts: []*corev1.Pod{pod(nil)}},
			"old":   {nodeID: "old", attempts: []*corev1.Pod{pod(nil)}},
			"given": {nodeID: "given", attempts: []*corev1.Pod{pod(map[string]string{spark.AnnotationAdoptedBy: "adopter"})}},
			"open":  {nodeID: "open", attempts: []*corev1.Pod{pod(nil)}},
		},
		nodes: wfv1.Nodes{
			"a":       node(wfv1.NodeSucceeded, 2*time.Second),
			"b":       node(wfv1.NodeSucceeded, time.Second), // listed: not a candidate
			"old":     node(wfv1.NodeSucceeded, unlistedAskWindow+time.Second),
			"given":   node(wfv1.NodeRunning, 0),
			"adopter": node(wfv1.NodeFailed, 3*time.Second),
			"open":    node(wfv1.NodeRunning, 0),
		},
	}
	got := recentlyUnlisted(s)
	var ids []string
	for _, task := range got {
		if !task.Unlisted || task.Recorded == nil || !task.Recorded.Phase.Completed() {
			t.Errorf("task %+v: want an unlisted, recorded, completed node", task)
		}
		ids = append(ids, task.NodeID)
	}
	if len(ids) != 2 || ids[0] != "a" || ids[1] != "adopter" {
		t.Errorf("recently unlisted %v, want [a adopter]: completed within %s, not listed, by own or adopted run", ids, unlistedAskWindow)
	}
	// And the request is then ambiguous: b may be a's request.
	if d := identity.Resolve(append(s.tasks, got...), nil, now, time.Minute); !d.Ambiguous {
		t.Errorf("decision %+v, want ambiguous", d)
	}
}
