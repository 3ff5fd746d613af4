package scope

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/sparkplug-io/sparkplug/plugin/scope/scopetest"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// A namespace's Workflow whose nodes are refused is told once per
// reason, whether or not it is followed, and again when the reason
// changes; the followed workflow beside it keeps its nodes.
func TestARefusedWorkflowIsToldOncePerReason(t *testing.T) {
	ctx := context.Background()
	bomb := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "bomb", Namespace: "ns", UID: "uid-bomb"},
		Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning, CompressedNodes: "not base64!"}}
	ok := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "ok", Namespace: "ns", UID: "uid-ok"},
		Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning, Nodes: wfv1.Nodes{"ok-1": {ID: "ok-1", Name: "ok.pi", Type: wfv1.NodeTypePlugin}}}}
	argo := wffake.NewSimpleClientset(bomb, ok)
	kube := fake.NewClientset()
	gate := scopetest.NewGate(0, kube, argo)
	r := NewSharedRegistry(Clients{Kube: kube, Workflows: argo}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var (
		mu   sync.Mutex
		told []string
	)
	r.OnRefused(func(wf *wfv1.Workflow, why string) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, wf.Name+": "+why)
	})
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go r.Run(runCtx)
	s := r.Ensure(spark.WorkflowRef{Namespace: "ns", Name: "ok", UID: "uid-ok"})
	<-s.Synced()
	gate.Wait(t) // the updates below must reach the cache
	waitTold := func(n int) []string {
		t.Helper()
		var got []string
		_ = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			got = append([]string(nil), told...)
			return len(got) >= n, nil
		})
		return got
	}
	if got := waitTold(1); len(got) != 1 || !strings.HasPrefix(got[0], "bomb: its compressed nodes are not readable") {
		t.Fatalf("told %q, want bomb's refusal once", got)
	}
	if w := s.WorkflowObject(); w == nil || len(w.Status.Nodes) != 1 || Refused(w) != "" {
		t.Errorf("the followed workflow beside it: %+v", w)
	}

	// Another update, the same reason: not told again.
	update := func(change func(*wfv1.Workflow)) {
		t.Helper()
		w, err := argo.ArgoprojV1alpha1().Workflows("ns").Get(ctx, "bomb", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		change(w)
		if _, err := argo.ArgoprojV1alpha1().Workflows("ns").Update(ctx, w, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	update(func(w *wfv1.Workflow) { w.Labels = map[string]string{"changed": "1"} })
	update(func(w *wfv1.Workflow) { w.Status.CompressedNodes = compressed(t, podNodes(1, nil))[:8] })
	got := waitTold(2)
	if len(got) != 2 || !strings.HasPrefix(got[1], "bomb: its compressed nodes are not readable") || got[1] == got[0] {
		t.Errorf("told %q, want the first reason once, then the new one", got)
	}
}
