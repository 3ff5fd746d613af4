package identity

import (
	"regexp"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
)

// Argo names the children of a withItems, withParam or withSequence loop
// "<step>(<index>:<item>)", with the item's parentheses removed
// (generateNodeName in the controller), and the attempts of a node with a
// retryStrategy "<node>(<attempt>)".
var (
	loopSuffix    = regexp.MustCompile(`\(\d+:[^()]*\)$`)
	attemptSuffix = regexp.MustCompile(`\(\d+\)$`)
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
	if parent, ok := AttemptParent(name); ok {
		// An attempt: the node Argo aggregates is its Retry parent.
		for _, p := range nodes {
			if p.Type == wfv1.NodeTypeRetry && p.Name == parent {
				name = parent
				break
			}
		}
	}
	return LoopChild(name), true
}

// AttemptParent is the name of the node whose attempt a node named name
// would be (its Retry parent, when it has one), and whether name has an
// attempt's suffix at all.
func AttemptParent(name string) (string, bool) {
	if !attemptSuffix.MatchString(name) {
		return "", false
	}
	return attemptSuffix.ReplaceAllString(name, ""), true
}

// LoopChild reports whether a node named name is a loop's child, by its
// name alone.
func LoopChild(name string) bool { return loopSuffix.MatchString(name) }
