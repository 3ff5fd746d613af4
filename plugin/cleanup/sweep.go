package cleanup

import (
	"context"
	"fmt"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
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

// Sweep deletes the drivers of an ending workflow that have not finished,
// and its Kueue Workloads. It is safe to call repeatedly and
// concurrently.
func (c *Cleaner) Sweep(ctx context.Context, sc *scope.Scope, why string) error {
	var errs []error
	for _, p := range sc.Pods() {
		if p.Labels[spark.LabelRole] != spark.RoleDriver || driverpod.Finished(p) || !driverpod.OwnDriver(p, sc.Workflow) {
			continue
		}
		if err := c.deleteDriver(ctx, sc.Workflow, p, ReasonWorkflowEnded, why); err != nil {
			errs = append(errs, fmt.Errorf("delete driver pod %s: %w", p.Name, err))
		}
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
func (c *Cleaner) sweepWorkloads(ctx context.Context, sc *scope.Scope, why string) []error {
	var errs []error
	for _, w := range sc.KueueWorkloads() {
		if w.GetDeletionTimestamp() != nil || !driverpod.OwnWorkload(w, sc.Workflow) {
			continue
		}
		uid := w.GetUID()
		err := c.Dynamic.Resource(kueue.WorkloadResource).Namespace(w.GetNamespace()).Delete(ctx, w.GetName(),
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			errs = append(errs, fmt.Errorf("delete Kueue Workload %s: %w", w.GetName(), err))
			continue
		}
		c.Log.Info("Kueue workload deleted: its workflow ended", "workflow", sc.Workflow.Name, "namespace", sc.Workflow.Namespace, "workload", w.GetName(), "why", why)
	}
	return errs
}

// endingSweepTimeout bounds one sweep of an ending workflow's drivers: a
// slow or unreachable API server must not keep its goroutine forever. A
// driver the sweep could not delete goes with its Workflow, and the
// shutdown sweep (SweepEnding) tries again.
const endingSweepTimeout = time.Minute

// OnEnding sweeps the scope of Workflow w, which is ending (Ending), in
// the background so the informer that saw it is never blocked; once
// swept, a workflow that ended (Ended) is given to release, if any. A
// stopped one still runs its exit handlers, and is followed until it
// ends; a driver the sweep missed is for the search for leftovers, which
// needs no scope.
func (c *Cleaner) OnEnding(sc *scope.Scope, w *wfv1.Workflow, release func(uid string)) {
	why := EndingReason(w)
	c.sweeps.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), endingSweepTimeout)
		defer cancel()
		if err := c.Sweep(ctx, sc, why); err != nil {
			c.Log.Error("cannot delete the drivers of an ending workflow", "workflow", sc.Workflow.Name, "error", err.Error())
		}
		if release != nil && Ended(w) {
			release(sc.Workflow.UID)
		}
	})
}

// Check asks the API server, once, whether the workflow of sc ended (its
// TaskSet went, or was labelled completed: the cache may not have seen
// the end yet), and says whether it may be released: one that is gone,
// or another now has its name (its drivers go with it through
// ownership); one that ended, once its running drivers were deleted. One
// that still runs, or that the API server cannot tell of, is kept.
func (c *Cleaner) Check(ctx context.Context, sc *scope.Scope) (release bool) {
	ref := sc.Workflow
	ctx, cancel := context.WithTimeout(ctx, endingSweepTimeout)
	defer cancel()
	w, err := c.Workflow(ctx, ref.Namespace, ref.Name)
	state, err := StateOf(w, err, ref.UID)
	switch {
	case err != nil:
		c.Log.Error("cannot tell whether a workflow ended; still following it", "workflow", ref.Name, "namespace", ref.Namespace, "error", err.Error())
		return false
	case state == Gone:
		return true
	case state == EndedState:
		why := "the workflow ended"
		if wf, ok := w.(*wfv1.Workflow); ok {
			why = EndingReason(wf)
		}
		if err := c.Sweep(ctx, sc, why); err != nil {
			c.Log.Error("cannot delete the drivers of an ending workflow", "workflow", ref.Name, "error", err.Error())
		}
		return true
	}
	return false
}

// SweepEnding is the shutdown path (SIGTERM: the agent pod is deleted when
// the workflow ends): of scopes, every workflow that is ending, or gone,
// has its running drivers deleted before the process exits.
func (c *Cleaner) SweepEnding(ctx context.Context, scopes []*scope.Scope) error {
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
	for _, sc := range scopes {
		obj, err := c.Workflow(ctx, sc.Workflow.Namespace, sc.Workflow.Name)
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("get workflow %s/%s: %w", sc.Workflow.Namespace, sc.Workflow.Name, err))
			continue
		}
		w, _ := obj.(*wfv1.Workflow) // nil: not found
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
