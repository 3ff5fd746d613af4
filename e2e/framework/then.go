package framework

import (
	"context"
	"fmt"
	"sort"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Then holds the checks of a test.
type Then struct {
	t *testing.T
	w *When
}

// When returns to acting.
func (th *Then) When() *When { return th.w }

func (th *Then) refresh() *wfv1.Workflow {
	th.t.Helper()
	wf, err := th.w.env.Workflows.ArgoprojV1alpha1().Workflows(th.w.wf.Namespace).Get(context.Background(), th.w.wf.Name, metav1.GetOptions{})
	if err != nil {
		th.t.Fatalf("get workflow: %v", err)
	}
	th.w.wf = wf
	th.w.record(wf)
	return wf
}

// ExpectWorkflow checks the workflow.
func (th *Then) ExpectWorkflow(f func(t *testing.T, md *metav1.ObjectMeta, status *wfv1.WorkflowStatus)) *Then {
	th.t.Helper()
	wf := th.refresh()
	f(th.t, &wf.ObjectMeta, &wf.Status)
	return th
}

// ExpectNode checks the one node whose display name is displayName.
func (th *Then) ExpectNode(displayName string, f func(t *testing.T, n *wfv1.NodeStatus)) *Then {
	th.t.Helper()
	wf := th.refresh()
	var found []wfv1.NodeStatus
	for _, n := range wf.Status.Nodes {
		if isNode(wf, &n, displayName) {
			found = append(found, n)
		}
	}
	if len(found) != 1 {
		th.t.Fatalf("%d nodes named %s, want 1", len(found), displayName)
	}
	f(th.t, &found[0])
	return th
}

// ExpectPluginNodes checks every plugin node of the workflow.
func (th *Then) ExpectPluginNodes(f func(t *testing.T, nodes []wfv1.NodeStatus)) *Then {
	th.t.Helper()
	wf := th.refresh()
	var nodes []wfv1.NodeStatus
	for _, n := range wf.Status.Nodes {
		if n.Type == wfv1.NodeTypePlugin {
			nodes = append(nodes, n)
		}
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].DisplayName < nodes[j].DisplayName })
	f(th.t, nodes)
	return th
}

// ExpectHistory checks the states the node with displayName went through
// while the fixture waited.
func (th *Then) ExpectHistory(displayName string, f func(t *testing.T, states []NodeState)) *Then {
	th.t.Helper()
	var states []NodeState
	for _, h := range th.w.history {
		if h.displayName == displayName || (displayName == RootNode && h.root) {
			states = append(states, h.states...)
		}
	}
	f(th.t, states)
	return th
}

// ExpectDrivers checks the workflow's driver pods.
func (th *Then) ExpectDrivers(f func(t *testing.T, drivers []corev1.Pod)) *Then {
	th.t.Helper()
	drivers, err := th.w.env.Drivers(context.Background(), th.w.wf)
	if err != nil {
		th.t.Fatal(err)
	}
	f(th.t, drivers)
	return th
}

// Drivers returns the driver pods sparkplug launched for wf, by name.
func (e *Env) Drivers(ctx context.Context, wf *wfv1.Workflow) ([]corev1.Pod, error) {
	return e.sparkPods(ctx, wf, spark.RoleDriver)
}

// Executors returns the executor pods of wf's drivers, by name.
func (e *Env) Executors(ctx context.Context, wf *wfv1.Workflow) ([]corev1.Pod, error) {
	return e.sparkPods(ctx, wf, spark.RoleExecutor)
}

func (e *Env) sparkPods(ctx context.Context, wf *wfv1.Workflow, role string) ([]corev1.Pod, error) {
	pods, err := e.Kube.CoreV1().Pods(wf.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.Set{spark.LabelWorkflowUID: string(wf.UID), spark.LabelRole: role}.String(),
	})
	if err != nil {
		return nil, fmt.Errorf("list %s pods of %s: %w", role, wf.Name, err)
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	return pods.Items, nil
}
