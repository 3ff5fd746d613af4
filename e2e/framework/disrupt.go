package framework

// What a test does to a running workflow's agent pod and Workflow: kill
// the plugin sidecar or the agent, as a crash would, or terminate it.

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
)

// RestartPlugin kills the plugin sidecar of the workflow's agent pod with
// SIGKILL and waits until it answers again.
func (w *When) RestartPlugin() *When {
	w.t.Helper()
	if err := w.env.RestartPlugin(w.ctx(), w.wf.Namespace, w.wf.Name); err != nil {
		w.t.Fatalf("restart plugin: %v", err)
	}
	w.t.Log("restarted the plugin (kill -9)")
	return w
}

// RestartSparkplug kills with SIGKILL whatever does the workflow's Spark
// work and waits until it works again: its plugin sidecar in sidecar mode
// (RestartPlugin), the leading sparkplug controller of its namespace in
// controller mode (Env.ControllersFor), started again at once as kubelet
// restarts a crashed container; a leader is back once the dead one's
// Lease runs out (up to 15 s). In controller mode that stops the Spark
// work of every workflow of the namespace meanwhile: a test that runs
// beside others gives its workflow a namespace of its own
// (Env.OwnControllers).
func (w *When) RestartSparkplug() *When {
	w.t.Helper()
	c := w.env.ControllersFor(w.wf.Namespace)
	if c == nil {
		return w.RestartPlugin()
	}
	ctx := w.ctx()
	i, err := c.Leader(ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := c.Kill(i); err != nil {
		w.t.Fatalf("kill sparkplug controller replica %d: %v", i, err)
	}
	if err := c.Start(ctx, i); err != nil {
		w.t.Fatal(err)
	}
	now, err := c.Leader(ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Logf("restarted the leading sparkplug controller, replica %d (kill -9); replica %d leads", i, now)
	return w
}

// KillPlugin kills the plugin sidecar of the workflow's agent pod with
// SIGKILL, if the workflow has one now, and waits until it answers again.
// It reports whether there was one to kill.
func (w *When) KillPlugin() bool {
	w.t.Helper()
	err := w.env.RestartPlugin(w.ctx(), w.wf.Namespace, w.wf.Name)
	if errors.Is(err, ErrNoSidecar) {
		return false
	}
	if err != nil {
		w.t.Fatalf("kill the plugin sidecar: %v", err)
	}
	return true
}

// KillAgent kills the workflow's agent with SIGKILL; it is restarted as
// kubelet restarts a failed container.
func (w *When) KillAgent() *When {
	w.t.Helper()
	if !w.TryKillAgent() {
		w.t.Fatalf("kill the agent of %s: no agent runs", w.wf.Name)
	}
	return w
}

// TryKillAgent kills the workflow's agent with SIGKILL, if one runs now
// (its pod exists and was started), and reports whether it did.
func (w *When) TryKillAgent() bool {
	w.t.Helper()
	pods, err := w.env.Kube.CoreV1().Pods(w.wf.Namespace).List(w.ctx(), metav1.ListOptions{
		LabelSelector: labels.Set{"workflows.argoproj.io/workflow": w.wf.Name, "workflows.argoproj.io/component": "agent"}.String(),
	})
	if err != nil {
		w.t.Fatalf("find the agent pod of %s: %v", w.wf.Name, err)
	}
	if len(pods.Items) != 1 {
		return false
	}
	err = w.env.Agents.KillAgent(w.wf.Namespace, pods.Items[0].Name)
	if errors.Is(err, argo.ErrNoAgent) || errors.Is(err, argo.ErrNotStarted) {
		return false
	}
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Log("killed the agent (kill -9)")
	return true
}

// Stop stops the workflow as `argo stop` does (its exit handlers still
// run).
func (w *When) Stop() *When {
	w.t.Helper()
	patch := []byte(`{"spec":{"shutdown":"Stop"}}`)
	if _, err := w.env.Workflows.ArgoprojV1alpha1().Workflows(w.wf.Namespace).Patch(w.ctx(), w.wf.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		w.t.Fatalf("stop %s: %v", w.wf.Name, err)
	}
	w.t.Log("stopped the workflow")
	return w
}

// Terminate terminates the workflow as `argo terminate` does.
func (w *When) Terminate() *When {
	w.t.Helper()
	patch := []byte(`{"spec":{"shutdown":"Terminate"}}`)
	if _, err := w.env.Workflows.ArgoprojV1alpha1().Workflows(w.wf.Namespace).Patch(w.ctx(), w.wf.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		w.t.Fatalf("terminate %s: %v", w.wf.Name, err)
	}
	w.t.Log("terminated the workflow")
	return w
}
