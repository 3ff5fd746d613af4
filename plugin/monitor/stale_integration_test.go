//go:build integration

package monitor

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sparkplug-io/sparkplug/plugin/cleanup"
)

// A search for leftovers judges each driver on what a cache saw of it,
// which may be behind: a driver seen running that finished since (its
// result recorded, its workflow ended after) is kept; one seen running
// that changed since but still runs is deleted. The search runs as the
// monitor's ServiceAccount against the real API server, which checks the
// delete's preconditions.
func TestAStaleViewNeverDeletesADriverThatFinished(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, "stale")
	wf := e.workflow("stopped", nil)
	finished := e.driver(wf, "stopped-1", 1, body(""))
	e.setStatus(finished, runningNow)
	changed := e.driver(wf, "stopped-2", 1, body(""))
	e.setStatus(changed, runningNow)
	var seen []*corev1.Pod
	for _, p := range []*corev1.Pod{finished, changed} {
		got, err := testCluster.Client.CoreV1().Pods(e.ns).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, got)
	}
	e.setStatus(finished, exited(0, 0))
	e.setStatus(changed, scheduledNow)
	e.complete(wf, wfv1.WorkflowFailed)

	cfg, err := clientcmd.BuildConfigFromFlags("", e.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var deleted []string
	c := cleanup.New(cleanup.Config{
		Kube:     kubernetes.NewForConfigOrDie(cfg),
		Workflow: cleanup.TypedWorkflows(wfclient.NewForConfigOrDie(cfg)),
		Deleted:  func(reason string) { deleted = append(deleted, reason) },
		Log:      slog.New(slog.DiscardHandler),
	})
	c.Leftovers(ctx, cleanup.Search{Drivers: seen})
	if !e.exists(finished) {
		t.Error("a driver seen running that finished since was deleted")
	}
	if e.exists(changed) {
		t.Error("a driver still running when its workflow ended, changed since it was seen, was kept")
	}
	if want := []string{cleanup.ReasonWorkflowEnded}; !slices.Equal(deleted, want) {
		t.Errorf("deletions counted %q, want %q", deleted, want)
	}
}
