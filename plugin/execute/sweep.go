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
	"github.com/sparkplug-io/sparkplug/plugin/kube"
	"github.com/sparkplug-io/sparkplug/plugin/kueue"
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
		c.event(sc.Workflow, corev1.EventTypeNormal, spark.ReasonDriverDeleted,
			fmt.Sprintf("deleted driver %s of node %s: %s", p.Name, p.Annotations[spark.AnnotationNodeID], why))
	}
	errs = append(errs, c.sweepWorkloads(ctx, sc, why)...)
	if len(errs) > 0 {
		return fmt.Errorf("sweep workflow %s/%s: %v", sc.Workflow.Namespace, sc.Workflow.Name, errs)
	}
	return nil
}

// sweepWorkloads deletes the Kueue Workloads of an ending workflow, each
// by its uid, so the quota of its queued and running steps goes back at
// once (the Workflow owns them, but a stopped Workflow stays). Only the
// Workloads this process watches are known: a queued step started the
// watch.
func (c *Core) sweepWorkloads(ctx context.Context, sc *scope.Scope, why string) []error {
	var errs []error
	for _, w := range sc.Workloads() {
		if w.GetDeletionTimestamp() != nil || !driverpod.OwnWorkload(w, sc.Workflow) {
			continue
		}
		uid := w.GetUID()
		err := c.clients.Dynamic.Resource(kueue.WorkloadResource).Namespace(w.GetNamespace()).Delete(ctx, w.GetName(),
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("delete Kueue Workload %s: %w", w.GetName(), err))
			continue
		}
		c.log.Info("Kueue workload deleted: its workflow ended", "workflow", sc.Workflow.Name, "namespace", sc.Workflow.Namespace, "workload", w.GetName(), "why", why)
	}
	return errs
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
		// A finished or deleted workflow needs nothing more; a stopped
		// one still runs its exit handlers, and is followed until it
		// finishes. A driver the sweep missed is the cleanup's
		// (ExpireLeftovers, the monitor's), which needs no scope.
		if c.opts.ReleaseEnded && (w.Status.Phase.Completed() || w.DeletionTimestamp != nil) {
			c.Release(sc.Workflow.UID)
		}
	})
}

// Ended is told that the workflow with uid may have ended (its TaskSet
// went, or was labelled completed): a workflow that is gone, or another
// now has its name, is released (its drivers go with it through
// ownership); one that finished or is being deleted has its running
// drivers deleted first; one that still runs is kept. It asks the API
// server, once: the cache may not have seen the end yet.
func (c *Core) Ended(ctx context.Context, uid string) {
	fl := c.flowOf(uid)
	if fl == nil {
		return
	}
	ref := fl.scope.Workflow
	ctx, cancel := context.WithTimeout(ctx, endingSweepTimeout)
	defer cancel()
	w, err := c.clients.Workflows.ArgoprojV1alpha1().Workflows(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) || (err == nil && string(w.UID) != uid):
		c.Release(uid)
	case err != nil:
		c.log.Error("cannot tell whether a workflow ended; still following it", "workflow", ref.Name, "namespace", ref.Namespace, "error", err.Error())
	case w.Status.Phase.Completed() || w.DeletionTimestamp != nil:
		if err := c.Sweep(ctx, fl.scope, endingReason(w)); err != nil {
			c.log.Error("cannot delete the drivers of an ending workflow", "workflow", ref.Name, "error", err.Error())
		}
		c.Release(uid)
	}
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
// gone, or replaced by a pod of its name, is no error (kube.DeletePod).
func (c *Core) deleteDriver(ctx context.Context, p *corev1.Pod) error {
	_, err := kube.DeletePod(ctx, c.clients.Kube, p)
	return err
}
