//go:build integration

package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/base64"
	"runtime"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// maxControllerHeapGrowth is what a refused Workflow may add to the
// controller's live heap, beside what the other workflow's run adds: its
// bomb inflates to 48 MiB, which the controller once held whole.
const maxControllerHeapGrowth = 16 << 20

// bombNodes is compressedNodes as Argo writes them (base64 of gzip) of
// one node whose message is 48 MiB: 64 KiB compressed.
func bombNodes(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	enc := base64.NewEncoder(base64.StdEncoding, &b)
	zw := gzip.NewWriter(enc)
	w := bufio.NewWriter(zw)
	w.WriteString(`{"bomb-1":{"id":"bomb-1","name":"bomb.pi","type":"Plugin","phase":"Pending","message":"`)
	mib := strings.Repeat("x", 1<<20)
	for range 48 {
		w.WriteString(mib)
	}
	w.WriteString(`"}}`)
	for _, err := range []error{w.Flush(), zw.Close(), enc.Close()} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// liveHeap is the process's live heap after a collection.
func liveHeap() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// A Workflow whose compressed node status is a bomb (one node of 48 MiB)
// is refused alone: the controller, in this process, holds none of it,
// names it in a log line and a SparkWorkflowRefused Event, fails its
// Spark node saying why and launches nothing for it, while another
// workflow's Spark step in the same namespace runs to its end.
func TestControllerRefusesACompressedNodesBombAlone(t *testing.T) {
	// Not parallel: it measures this process's live heap, which the
	// other tests' servers would move (Go runs it before them, alone).
	e := newControllerEnv(t, "controller-bomb")
	r := e.startController("only")
	e.setTasks(map[string]*wfv1.Template{"spark-pi-1": template(t, "pi", sparkPi)})
	e.waitDriverOf("spark-pi-1")

	ctx := context.Background()
	nodes := bombNodes(t)
	before := liveHeap()
	bomb, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Create(ctx, &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "bomb"},
		Spec:       wfv1.WorkflowSpec{Entrypoint: "main"},
		Status:     wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning, StartedAt: metav1.Now(), CompressedNodes: nodes},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.wfc.ArgoprojV1alpha1().WorkflowTaskSets(e.ns).Create(ctx, &wfv1.WorkflowTaskSet{
		ObjectMeta: metav1.ObjectMeta{Name: "bomb",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Name: "bomb", UID: bomb.UID}}},
		Spec: wfv1.WorkflowTaskSetSpec{Tasks: map[string]wfv1.Template{"bomb-1": *template(t, "pi", sparkPi)}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	b := *e
	b.wf = bomb
	res := b.eventuallyNode("bomb-1", "Failed, refused", func(r executor.ExecuteTemplateReply) bool {
		return r.Node.Phase == wfv1.NodeFailed && strings.Contains(r.Node.Message, "sparkplug refused this workflow: one of its nodes' JSON is over 1 MiB")
	})
	b.waitEvent("SparkWorkflowRefused", "one of its nodes' JSON is over 1 MiB")
	if log := r.log.String(); !strings.Contains(log, `msg="workflow refused: its nodes are not read, its Spark steps not run" workflow=bomb`) {
		t.Errorf("no log line names the refused workflow bomb:\n%s", tail(log, 20))
	}
	grew := liveHeap() - before
	t.Logf("the refused workflow's node %s; the live heap grew by %d KiB", describe(res), grew>>10)
	if grew > maxControllerHeapGrowth {
		t.Errorf("the live heap grew by %d MiB with the refused workflow, want at most %d MiB", grew>>20, maxControllerHeapGrowth>>20)
	}

	e.finishDriver("spark-pi-1")
	e.eventuallyNode("spark-pi-1", "Succeeded", succeeded)
	for _, d := range e.drivers() {
		if d.Annotations[spark.AnnotationNodeID] == "bomb-1" {
			t.Errorf("driver %s launched for the refused workflow", d.Name)
		}
	}
}
