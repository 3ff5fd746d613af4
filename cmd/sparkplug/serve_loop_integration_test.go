//go:build integration

package main

import (
	"strconv"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// setNodes writes the Workflow's node status, as the controller does.
func (e *env) setNodes(nodes wfv1.Nodes) {
	e.t.Helper()
	e.updateWorkflow(func(wf *wfv1.Workflow) { wf.Status.Nodes = nodes })
}

// A loop's child reports its application id as a JSON string, which Argo
// decodes to aggregate the loop: while it runs and when it is done. Once
// Argo took the result and removed the node's entry and task, the agent
// asking again writes nothing back.
func TestALoopChildsResultIsJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "loop-result")
	tmpl := template(t, "spark-pi", sparkPi)
	id := "spark-pi-1234"
	node := wfv1.NodeStatus{ID: id, Name: "spark-pi.pi(0:a)", DisplayName: "pi(0:a)", Type: wfv1.NodeTypePlugin, Phase: wfv1.NodeRunning}
	e.setNodes(wfv1.Nodes{id: node})
	e.setTasks(map[string]*wfv1.Template{id: tmpl})
	want := func(r executor.ExecuteTemplateReply, d corev1.Pod, when string) {
		t.Helper()
		if r.Node == nil || r.Node.Outputs == nil || r.Node.Outputs.Result == nil || *r.Node.Outputs.Result != strconv.Quote(d.Labels[spark.LabelAppSelector]) {
			t.Fatalf("%s: %s; want the application id as a JSON string", when, describe(r))
		}
		if param(r, "application-id") != d.Labels[spark.LabelAppSelector] {
			t.Fatalf("%s: application-id %q, want the plain id", when, param(r, "application-id"))
		}
	}
	r := e.eventually(tmpl, "the node is seen in the loop", func(r executor.ExecuteTemplateReply) bool {
		return r.Node.Outputs != nil && r.Node.Outputs.Result != nil && (*r.Node.Outputs.Result)[0] == '"'
	})
	d := e.onlyDriver()
	want(r, d, "submitted")
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	r = e.eventually(tmpl, "succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	want(r, d, "succeeded")

	// Argo records the result, removes the node's entry, then its task;
	// the agent asks once more.
	node.Phase, node.Outputs = wfv1.NodeSucceeded, r.Node.Outputs
	e.setNodes(wfv1.Nodes{id: node})
	e.removeEntry(id)
	e.setTasks(map[string]*wfv1.Template{})
	if r := e.ask(tmpl); !isAck(r) {
		t.Fatalf("asked again after the node left the TaskSet: %s, want the acknowledgement", describe(r))
	}
	time.Sleep(2 * time.Second)
	if res, ok := e.entry(id); ok {
		t.Fatalf("an entry came back for a node no longer listed: %s", describe(executor.ExecuteTemplateReply{Node: &res}))
	}
}
