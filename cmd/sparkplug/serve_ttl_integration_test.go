//go:build integration

package main

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/sidecar"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// A driver with timeToLiveSeconds of a workflow whose sidecar is gone
// (Argo deletes the agent pod when the workflow ends) is expired by the
// sidecar of a later workflow in the namespace, once its workflow has
// finished, and not before.
func TestTimeToLiveOutlivesTheWorkflowsOwnSidecar(t *testing.T) {
	t.Parallel()
	ns := "ttl-leftovers"
	e := newEnv(t, ns, func(o *sidecar.Config) { o.LeftoverInterval = 300 * time.Millisecond })
	ctx := context.Background()
	nightly, err := e.wfc.ArgoprojV1alpha1().Workflows(ns).Create(ctx, &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec:       wfv1.WorkflowSpec{Entrypoint: "main"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The nightly workflow's own sidecar launches its last step's driver,
	// which finishes; then the sidecar goes.
	old := &env{t: t, ns: ns, wf: nightly, wfc: e.wfc, requests: &atomic.Int64{}}
	last := template(t, "last", sparkPi+"timeToLiveSeconds: 1\n")
	old.setTasks(map[string]*wfv1.Template{"nightly-1": last})
	var stop func()
	old.url, stop = startStoppableServer(t, e)
	old.execute(last)
	d := e.onlyDriver()
	if d.Labels[spark.LabelTTLSeconds] != "1" {
		t.Fatalf("driver labels %v lack the time to live", d.Labels)
	}
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	stop()

	// A later workflow's sidecar serves the namespace.
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	time.Sleep(2 * time.Second)
	if e.deleted(d.Name) {
		t.Fatal("the driver of a workflow that still runs was expired by another workflow's sidecar")
	}
	old.updateWorkflow(func(w *wfv1.Workflow) { w.Status.Phase = wfv1.WorkflowSucceeded })
	e.waitDeleted(d.Name, "its workflow finished and its time to live ran out")
}

func TestTimeToLiveDeletesFinishedDriversOnceRecorded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ttl")
	tmpl := template(t, "spark-pi", sparkPi+"timeToLiveSeconds: 1\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	if d.Annotations[spark.AnnotationTTLSeconds] != "1" {
		t.Fatalf("driver annotations %v lack the ttl", d.Annotations)
	}
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	r := e.eventually(tmpl, "succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	// Written into the TaskSet, not yet applied by Argo's controller to
	// the Workflow: the driver, which the result is derived from, stays
	// past its ttl.
	time.Sleep(2 * time.Second)
	if e.deleted(d.Name) {
		t.Fatal("the driver was deleted before Argo recorded its node's result")
	}
	// The controller applies the entry: the node is fulfilled.
	e.updateWorkflow(func(w *wfv1.Workflow) {
		n := w.Status.Nodes["node-1"]
		n.Phase, n.Message, n.Outputs = r.Node.Phase, r.Node.Message, r.Node.Outputs
		w.Status.Nodes["node-1"] = n
	})
	e.waitDeleted(d.Name, "after its ttl and the recorded result")
}
