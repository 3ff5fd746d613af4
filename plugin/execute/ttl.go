package execute

import (
	"context"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Run deletes finished drivers whose timeToLiveSeconds ran out, every
// interval, until ctx is done. Without timeToLiveSeconds a driver lives as
// long as its Workflow, which owns it: Argo's ttlStrategy and podGC
// govern it then.
func (c *Core) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			for _, sc := range c.scopes.Scopes() {
				c.Expire(ctx, sc)
			}
		}
	}
}

// Expire deletes the scope's drivers past their time to live. A driver is
// expired only once Argo recorded its node's result (the node left the
// TaskSet, or its recorded phase is final), so a node that still waits for
// its answer never loses its driver.
func (c *Core) Expire(ctx context.Context, sc *scope.Scope) {
	ts := sc.TaskSet()
	now := c.opts.Now()
	for _, p := range sc.Pods() {
		if !expired(p, now) {
			continue
		}
		node := p.Annotations[spark.AnnotationNodeID]
		if ts != nil {
			if _, listed := ts.Spec.Tasks[node]; listed {
				if res, ok := ts.Status.Nodes[node]; !ok || !res.Phase.Completed() {
					continue
				}
			}
		}
		uid := p.UID
		err := c.clients.Kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			c.log.Error("cannot delete an expired driver", "driver", p.Name, "error", err.Error())
			continue
		}
		c.metrics.Driver("deleted", "expired")
		c.log.Info("driver deleted: its timeToLiveSeconds ran out", "workflow", sc.Workflow.Name, "driver", p.Name)
		c.event(sc.Workflow, corev1.EventTypeNormal, "SparkDriverExpired", "deleted driver "+p.Name+" of node "+node+": timeToLiveSeconds ran out")
	}
}

// expired reports whether a driver pod finished more than its time to
// live ago.
func expired(p *corev1.Pod, now time.Time) bool {
	ttl, err := strconv.ParseInt(p.Annotations[spark.AnnotationTTLSeconds], 10, 64)
	if err != nil || p.Labels[spark.LabelRole] != spark.RoleDriver || p.DeletionTimestamp != nil || !finished(p) {
		return false
	}
	return !now.Before(endedAt(p, now).Add(time.Duration(ttl) * time.Second))
}
