//go:build integration

package main

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

func TestIdenticalTasksGetTheirOwnDrivers(t *testing.T) {
	e := newEnv(t, "identical")
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"wf-a": tmpl, "wf-b": tmpl})
	e.execute(tmpl)
	e.execute(tmpl)
	drivers := e.drivers()
	if len(drivers) != 2 {
		t.Fatalf("%d drivers for two identical tasks, want 2", len(drivers))
	}
	nodes := map[string]bool{}
	for _, d := range drivers {
		nodes[d.Annotations[spark.AnnotationNodeID]] = true
	}
	if !nodes["wf-a"] || !nodes["wf-b"] {
		t.Fatalf("drivers belong to %v, want wf-a and wf-b", nodes)
	}
	// The first to finish is handed out once; the second node gets the other.
	e.setDriverStatus(drivers[0].Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	first := e.eventually(tmpl, "first result", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	// The agent records it for one of the nodes; say wf-b received it.
	e.recordResult("wf-b", first)
	// While Argo still lists wf-b, the request may be wf-b's own, asked
	// again by a restarted agent, and Argo would write the answer over
	// wf-b's result: nothing is answered (a node without a phase), and the
	// agent asks again.
	r := e.eventually(tmpl, "no answer while the recorded node is listed", func(r executor.ExecuteTemplateReply) bool {
		return r.Node != nil && r.Node.Phase == "" && r.Requeue != nil
	})
	if r.Node.Outputs != nil {
		t.Fatalf("unanswered reply with outputs: %s", describe(r))
	}
	// Argo removes the fulfilled node; the request is wf-a's.
	e.setTasks(map[string]*wfv1.Template{"wf-a": tmpl})
	r = e.eventually(tmpl, "wf-a answered again", func(r executor.ExecuteTemplateReply) bool { return r.Node != nil && r.Node.Phase != "" })
	if r.Node.Phase.Completed() || param(r, "driver-pod") == param(first, "driver-pod") {
		t.Fatalf("second node while the other driver has not finished: %s; want it still waiting on the other driver", describe(r))
	}
	e.setDriverStatus(drivers[1].Name, terminated(corev1.PodFailed, 1, "Error", "boom"))
	second := e.eventually(tmpl, "second result", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase.Completed() })
	if param(second, "driver-pod") == param(first, "driver-pod") {
		t.Fatalf("both nodes got driver %s", param(first, "driver-pod"))
	}
	if n := len(e.drivers()); n != 2 {
		t.Fatalf("%d drivers at the end, want 2", n)
	}
}

func TestRestartedPluginContinuesWithTheSameDriver(t *testing.T) {
	ns := "restart"
	e := newEnv(t, ns)
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	// A second server process (a restarted sidecar) over the same cluster.
	again := &env{t: t, ns: ns, wf: e.wf, wfc: e.wfc, requests: &atomic.Int64{}}
	again.url = startAnotherServer(t, e)
	again.execute(tmpl)
	if n := len(e.drivers()); n != 1 {
		t.Fatalf("after a restart: %d drivers, want 1", n)
	}
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	r := again.eventually(tmpl, "Succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	if param(r, "driver-pod") != d.Name {
		t.Fatalf("restarted plugin answered from %s, want %s", param(r, "driver-pod"), d.Name)
	}
}

func TestDriverDeletedBySomeoneElseFailsNotFound(t *testing.T) {
	e := newEnv(t, "deleted")
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	r := e.execute(tmpl)
	e.recordResult("node-1", r) // the agent records the Pending reply with its outputs
	d := e.onlyDriver()
	if err := testCluster.Client.CoreV1().Pods(e.ns).Delete(context.Background(), d.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	r = e.eventually(tmpl, "Failed not found", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeFailed })
	if !strings.Contains(r.Node.Message, "not found") {
		t.Fatalf("message %q, want driver pod not found", r.Node.Message)
	}
	if n := len(e.drivers()); n != 0 {
		t.Fatalf("a deleted driver was silently recreated: %d drivers", n)
	}
}
