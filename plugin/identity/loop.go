package identity

import (
	"regexp"
)

// Argo names the children of a withItems, withParam or withSequence loop
// "<step>(<index>:<item>)", with the item's parentheses removed
// (generateNodeName in the controller), and the attempts of a node with a
// retryStrategy "<node>(<attempt>)".
var (
	loopSuffix    = regexp.MustCompile(`\(\d+:[^()]*\)$`)
	attemptSuffix = regexp.MustCompile(`\(\d+\)$`)
)

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
