package cleanup

import (
	"context"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Expire deletes the scope's drivers past their time to live. A driver is
// expired only once the Workflow shows its node fulfilled (or the node
// is no longer listed at all), so a node whose result Argo has not
// applied yet never loses the driver its result is derived from.
func (c *Cleaner) Expire(ctx context.Context, sc *scope.Scope) {
	ts, wf := sc.TaskSet(), sc.WorkflowObject()
	now := c.Now()
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
		if err := c.deleteDriver(ctx, sc.Workflow, p, ReasonExpired, "timeToLiveSeconds ran out"); err != nil {
			c.Log.Error("cannot delete an expired driver", "driver", p.Name, "error", err.Error())
		}
	}
}

// ExpireAll expires the finished drivers of every scope (Expire).
func (c *Cleaner) ExpireAll(ctx context.Context, scopes []*scope.Scope) {
	for _, sc := range scopes {
		c.Expire(ctx, sc)
	}
}
