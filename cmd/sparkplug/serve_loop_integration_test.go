//go:build integration

package main

import (
	"context"
	"strconv"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// setNodes writes the Workflow's node status, as the controller does.
func (e *env) setNodes(nodes wfv1.Nodes) {
	e.t.Helper()
	ctx := context.Background()
	wf, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Get(ctx, e.wf.Name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	wf.Status.Nodes = nodes
	if _, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Update(ctx, wf, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// A loop's child reports its application id as a JSON string, which Argo
// decodes to aggregate the loop: while it runs, when it is done, and when
// the agent asks again after its node left the TaskSet.
func TestALoopChildsResultIsJSON(t *testing.T) {
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

	// Argo records the result and drops the node from the TaskSet; the
	// agent asks once more.
	node.Phase, node.Outputs = wfv1.NodeSucceeded, r.Node.Outputs
	e.setNodes(wfv1.Nodes{id: node})
	e.setTasks(map[string]*wfv1.Template{})
	r = e.eventually(tmpl, "asked again", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	want(r, d, "asked again after the node left the TaskSet")
}
