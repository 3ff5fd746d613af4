package execute

import (
	"context"
	"fmt"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Argo never tells a plugin that its workflow was stopped, terminated or
// replaced (argo #10476): it marks the plugin's open nodes Failed and
// moves on, and whatever the plugin launched runs on. So sparkplug watches
// the Workflow itself and, when it ends, deletes the drivers that still
// run; their ConfigMaps, Services and executors go with them through
// ownership.

// Sweep deletes the drivers of an ending workflow that have not finished.
// It is safe to call repeatedly and concurrently.
func (c *Core) Sweep(ctx context.Context, sc *scope.Scope, why string) error {
	var errs []error
	for _, p := range sc.Pods() {
		if p.Labels[spark.LabelRole] != spark.RoleDriver || driverpod.Finished(p) || !driverpod.OwnDriver(p, sc.Workflow) {
			continue
		}
		if err := c.deleteDriver(ctx, p); err != nil {
			errs = append(errs, fmt.Errorf("delete driver pod %s: %w", p.Name, err))
			continue
		}
		c.metrics.Driver("deleted", "workflow_ended")
		c.log.Info("driver deleted: its workflow ended", "workflow", sc.Workflow.Name, "namespace", sc.Workflow.Namespace, "driver", p.Name, "why", why)
		c.event(sc.Workflow, corev1.EventTypeNormal, ReasonDriverDeleted,
			fmt.Sprintf("deleted driver %s of node %s: %s", p.Name, p.Annotations[spark.AnnotationNodeID], why))
	}
	if len(errs) > 0 {
		return fmt.Errorf("sweep workflow %s/%s: %v", sc.Workflow.Namespace, sc.Workflow.Name, errs)
	}
	return nil
}

// endingSweepTimeout bounds one sweep of an ending workflow's drivers: a
// slow or unreachable API server must not keep its goroutine forever. A
// driver the sweep could not delete goes with its Workflow, and the
// shutdown sweep (SweepEnding) tries again.
const endingSweepTimeout = time.Minute

// OnWorkflowEnding is the scope registry's callback: it sweeps in the
// background so the informer is never blocked.
func (c *Core) OnWorkflowEnding(sc *scope.Scope, w *wfv1.Workflow) {
	why := endingReason(w)
	c.sweeps.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), endingSweepTimeout)
		defer cancel()
		if err := c.Sweep(ctx, sc, why); err != nil {
			c.log.Error("cannot delete the drivers of an ending workflow", "workflow", sc.Workflow.Name, "error", err.Error())
		}
	})
}

// SweepEnding is the shutdown path (SIGTERM: the agent pod is deleted when
// the workflow ends): every workflow this process serves that is ending,
// or gone, has its running drivers deleted before the process exits.
func (c *Core) SweepEnding(ctx context.Context) error {
	// The sweeps the workflow's end started first: a process that exited
	// under them would lose their deletions' Events (the agent pod, and
	// this process with it, goes as soon as the workflow ends).
	done := make(chan struct{})
	go func() {
		c.sweeps.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	var errs []error
	for _, sc := range c.scopes.Scopes() {
		w, err := c.clients.Workflows.ArgoprojV1alpha1().Workflows(sc.Workflow.Namespace).Get(ctx, sc.Workflow.Name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("get workflow %s/%s: %w", sc.Workflow.Namespace, sc.Workflow.Name, err))
			continue
		}
		if apierrors.IsNotFound(err) {
			w = nil
		}
		why, sweep := sweepReason(w, sc.Workflow.UID)
		if !sweep {
			continue // still running: another agent will serve it
		}
		if err := c.Sweep(ctx, sc, why); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("sweep at shutdown: %v", errs)
	}
	return nil
}

// sweepReason says whether a workflow's drivers are swept at shutdown,
// and why: w is the Workflow as read now (nil: not found), uid the one the
// process served. A Workflow still running is left to the agent that will
// serve it next.
func sweepReason(w *wfv1.Workflow, uid string) (string, bool) {
	switch {
	case w == nil || string(w.UID) != uid:
		return "the workflow was deleted", true
	case scope.Ending(w):
		return endingReason(w), true
	default:
		return "", false
	}
}

func endingReason(w *wfv1.Workflow) string {
	switch {
	case w.DeletionTimestamp != nil:
		return "the workflow is being deleted"
	case w.Spec.Shutdown != "":
		return fmt.Sprintf("the workflow was shut down (%s)", w.Spec.Shutdown)
	default:
		return fmt.Sprintf("the workflow finished (%s)", w.Status.Phase)
	}
}

// deleteDriver deletes driver pod p, that very pod (by uid): one already
// gone, or replaced by a pod of its name, is no error (driverpod.Delete).
func (c *Core) deleteDriver(ctx context.Context, p *corev1.Pod) error {
	_, err := driverpod.Delete(ctx, c.clients.Kube, p)
	return err
}
