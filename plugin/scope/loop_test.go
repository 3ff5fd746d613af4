package scope

import (
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
)

func TestInLoop(t *testing.T) {
	nodes := wfv1.Nodes{}
	add := func(id, name string, typ wfv1.NodeType) {
		nodes[id] = wfv1.NodeStatus{ID: id, Name: name, Type: typ}
	}
	add("plain", "wf.pi", wfv1.NodeTypePlugin)
	add("dag-child", "wf.loop(0:a)", wfv1.NodeTypePlugin)
	add("steps-child", "wf[0].loop(12:{\"k\":\"v\"})", wfv1.NodeTypePlugin)
	add("in-loop-dag", "wf.loop(1:b).spark", wfv1.NodeTypePlugin)
	add("retry-parent", "wf.loop(2:c)", wfv1.NodeTypeRetry)
	add("loop-attempt", "wf.loop(2:c)(0)", wfv1.NodeTypePlugin)
	add("plain-retry", "wf.pi2", wfv1.NodeTypeRetry)
	add("plain-attempt", "wf.pi2(3)", wfv1.NodeTypePlugin)
	// A retried node inside a loop's DAG is no loop child.
	add("in-loop-retry", "wf.loop(1:b).other", wfv1.NodeTypeRetry)
	add("in-loop-attempt", "wf.loop(1:b).other(0)", wfv1.NodeTypePlugin)
	add("sequence-child", "wf.seq(4:4)", wfv1.NodeTypePlugin)

	for _, c := range []struct {
		id          string
		loop, known bool
	}{
		{"plain", false, true},
		{"dag-child", true, true},
		{"steps-child", true, true},
		{"in-loop-dag", false, true},
		{"loop-attempt", true, true},
		{"plain-attempt", false, true},
		{"in-loop-attempt", false, true},
		{"sequence-child", true, true},
		{"missing", false, false},
	} {
		loop, known := InLoop(nodes, c.id)
		if loop != c.loop || known != c.known {
			t.Errorf("InLoop(%s) = %v, %v; want %v, %v", c.id, loop, known, c.loop, c.known)
		}
	}
}
