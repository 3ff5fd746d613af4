package scope

import (
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/plugin/identity"
)

// InLoop reports whether the node id of a workflow is a loop's child, or
// an attempt of one: the node whose outputs Argo aggregates for the loop.
// known is false when nodes does not list id (a view that lags).
//
// Argo v3.7 decodes every loop child's outputs.result as JSON when it
// aggregates the loop's outputs, and fails the loop's parent when one is
// not (argo-workflows#10775), so a result for a loop child must be JSON.
func InLoop(nodes wfv1.Nodes, id string) (loop, known bool) {
	n, ok := nodes[id]
	if !ok {
		return false, false
	}
	name := n.Name
	if parent, ok := identity.AttemptParent(name); ok {
		// An attempt: the node Argo aggregates is its Retry parent.
		for _, p := range nodes {
			if p.Type == wfv1.NodeTypeRetry && p.Name == parent {
				name = parent
				break
			}
		}
	}
	return identity.LoopChild(name), true
}
