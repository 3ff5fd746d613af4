package cleanup

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// A sidecar deletes the drivers of its workflow while the workflow runs,
// and those of a stopped one when its agent pod goes; but Argo deletes
// the agent pod, sidecar and all, when the workflow ends, and the sidecar
// sees no more: the drivers of a workflow's last steps outlive their
// timeToLiveSeconds, and a driver still running when a workflow was
// stopped while its sidecar was down runs on. The search for leftovers
// deletes them: the monitor's or controller's leader over its cache of
// the namespaces' drivers, and, without them, any later sidecar of the
// namespace for the drivers whose time to live ran out. It acts only on
// drivers that pass the ownership rule (driverpod.OwnDriver), and only
// after reading the Workflow from the API server: never on what a cache
// lacks alone, never on a completed label a retried workflow just
// dropped.

// Search is one search for leftovers in one namespace.
type Search struct {
	// Drivers are the candidates.
	Drivers []*corev1.Pod
	// Known is the Workflow of a uid as a cache of the process has it;
	// nil: not known. A known Workflow that has not ended is left alone
	// without an API request.
	Known func(uid string) metav1.Object
	// Followed says whether this process follows the workflow of a uid,
	// and looks after its drivers itself; nil: it follows none.
	Followed func(uid string) bool
	// ExpiredOnly looks only at the drivers whose time to live ran out
	// (a sidecar's search: every other driver is its workflow's own).
	ExpiredOnly bool
}

// Leftovers deletes, of s.Drivers, those no follower of their workflow
// will: whose time to live ran out after their workflow ended or went
// (ReasonExpired), still running after their workflow ended
// (ReasonWorkflowEnded), or whose Workflow is gone
// (ReasonWorkflowDeleted). Each candidate's Workflow is read once a
// search.
func (c *Cleaner) Leftovers(ctx context.Context, s Search) {
	now := c.Now()
	read := map[string]State{} // by workflow uid
	for _, p := range s.Drivers {
		if ctx.Err() != nil {
			return
		}
		wf := driverpod.WorkflowOf(p)
		if p.DeletionTimestamp != nil || !driverpod.OwnDriver(p, wf) {
			continue
		}
		expired := driverpod.Expired(p, now)
		if (s.ExpiredOnly && !expired) || (s.Followed != nil && s.Followed(wf.UID)) {
			continue
		}
		var known metav1.Object
		if s.Known != nil {
			known = s.Known(wf.UID)
		}
		if known != nil && !Ended(known) {
			continue
		}
		if !expired && driverpod.Finished(p) && known != nil {
			continue // finished, kept until its time to live or its workflow goes
		}
		state, ok := read[wf.UID]
		if !ok {
			var err error
			if state, err = c.state(ctx, wf); err != nil {
				c.Log.Error("cannot read a driver's workflow", "namespace", p.Namespace, "workflow", wf.Name, "driver", p.Name, "error", err.Error())
				continue
			}
			read[wf.UID] = state
		}
		reason := Verdict(p, state, now)
		var why string
		switch reason {
		case "":
			continue
		case ReasonExpired:
			why = "timeToLiveSeconds ran out after the workflow finished"
		case ReasonWorkflowEnded:
			why = "its workflow ended while no sidecar watched"
		default:
			why = "its workflow is gone"
		}
		if err := c.deleteDriver(ctx, wf, p, reason, why); err != nil {
			c.Log.Error("cannot delete a driver", "namespace", p.Namespace, "driver", p.Name, "reason", reason, "error", err.Error())
		}
	}
}

// LeftoversOf searches, in each namespace of the scopes, the drivers
// whose time to live ran out, listed from the API server (a sidecar
// caches only its own workflow's objects): those of the workflows the
// scopes follow are left to them (Expire).
func (c *Cleaner) LeftoversOf(ctx context.Context, scopes []*scope.Scope) {
	served := map[string]bool{}
	namespaces := map[string]bool{}
	for _, sc := range scopes {
		served[sc.Workflow.UID] = true
		namespaces[sc.Workflow.Namespace] = true
	}
	for ns := range namespaces {
		pods, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{
			LabelSelector: spark.LabelTTLSeconds + "," + spark.LabelRole + "=" + spark.RoleDriver,
		})
		if err != nil {
			c.Log.Error("cannot list drivers with a time to live", "namespace", ns, "error", err.Error())
			continue
		}
		drivers := make([]*corev1.Pod, len(pods.Items))
		for i := range pods.Items {
			drivers[i] = &pods.Items[i]
		}
		c.Leftovers(ctx, Search{Drivers: drivers, ExpiredOnly: true, Followed: func(uid string) bool { return served[uid] }})
	}
}
