package execute

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// ExpireLeftovers deletes, in each namespace this process serves, the
// drivers past their time to live whose workflow has finished or is gone.
// A workflow's own sidecar stops with the workflow (Argo deletes the agent
// pod), so the drivers of its last steps would otherwise stay until the
// Workflow is deleted; any later workflow's sidecar in the namespace
// expires them. Drivers of workflows that still run are left to their
// own sidecar, which knows whether Argo recorded their results.
func (c *Core) ExpireLeftovers(ctx context.Context) {
	now := c.opts.Now()
	served := map[string]bool{}
	namespaces := map[string]spark.WorkflowRef{}
	for _, sc := range c.scopes.Scopes() {
		served[sc.Workflow.UID] = true
		namespaces[sc.Workflow.Namespace] = sc.Workflow
	}
	for ns, via := range namespaces {
		pods, err := c.clients.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{
			LabelSelector: spark.LabelTTLSeconds + "," + spark.LabelRole + "=" + spark.RoleDriver,
		})
		if err != nil {
			c.log.Error("cannot list drivers with a time to live", "namespace", ns, "error", err.Error())
			continue
		}
		ended := map[string]bool{} // by workflow uid
		for i := range pods.Items {
			p := &pods.Items[i]
			uid := p.Labels[spark.LabelWorkflowUID]
			wf := spark.WorkflowRef{Name: p.Annotations[spark.AnnotationWorkflowName], Namespace: ns, UID: uid}
			if served[uid] || !driverpod.Expired(p, now) || !driverpod.OwnDriver(p, wf) {
				continue
			}
			done, known := ended[uid]
			if !known {
				if done, err = c.workflowEnded(ctx, p); err != nil {
					c.log.Error("cannot tell whether a driver's workflow ended", "driver", p.Name, "error", err.Error())
					continue
				}
				ended[uid] = done
			}
			if !done {
				continue
			}
			c.expire(ctx, wf, p, " after the workflow finished", "seen_by", via.Name)
		}
	}
}

// workflowEnded reports whether the Workflow that launched driver p has
// completed or is gone (another Workflow with its name is not it).
func (c *Core) workflowEnded(ctx context.Context, p *corev1.Pod) (bool, error) {
	name := p.Annotations[spark.AnnotationWorkflowName]
	if name == "" {
		return false, nil
	}
	w, err := c.clients.Workflows.ArgoprojV1alpha1().Workflows(p.Namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, err
	}
	return string(w.UID) != p.Labels[spark.LabelWorkflowUID] || w.Status.Phase.Completed(), nil
}

// Expire deletes the scope's drivers past their time to live. A driver is
// expired only once the Workflow shows its node fulfilled (or the node
// is no longer listed at all), so a node whose result Argo has not
// applied yet never loses the driver its result is derived from.
func (c *Core) Expire(ctx context.Context, sc *scope.Scope) {
	ts, wf := sc.TaskSet(), sc.WorkflowObject()
	now := c.opts.Now()
	for _, p := range sc.Pods() {
		if !driverpod.Expired(p, now) || !driverpod.OwnDriver(p, sc.Workflow) {
			continue
		}
		node := p.Annotations[spark.AnnotationNodeID]
		if ts != nil {
			if _, listed := ts.Spec.Tasks[node]; listed {
				if wf == nil {
					continue
				}
				if n, ok := wf.Status.Nodes[node]; !ok || !n.Fulfilled() {
					continue
				}
			}
		}
		c.expire(ctx, sc.Workflow, p, "")
	}
}

// expire deletes driver p of workflow wf, whose time to live ran out
// (when: what else had to happen first, for the Event), and says so.
func (c *Core) expire(ctx context.Context, wf spark.WorkflowRef, p *corev1.Pod, when string, logArgs ...any) {
	if err := c.deleteDriver(ctx, p); err != nil {
		c.log.Error("cannot delete an expired driver", "driver", p.Name, "error", err.Error())
		return
	}
	c.metrics.Driver("deleted", "expired")
	c.log.Info("driver deleted: its timeToLiveSeconds ran out"+when, append([]any{"workflow", wf.Name, "driver", p.Name}, logArgs...)...)
	c.event(wf, corev1.EventTypeNormal, spark.ReasonDriverExpired, "deleted driver "+p.Name+" of node "+p.Annotations[spark.AnnotationNodeID]+": timeToLiveSeconds ran out"+when)
}
