package decide

import "time"

// The plans of a node no pass follows (no snapshot is gathered for it):
// its workflow's node status was not read, or its step cannot run at all.

// Unread is the plan for a node of a workflow whose node status sparkplug
// refused to read (why, scope.Refused): nothing is launched. Whether Argo
// fulfilled the node is not known, and Argo applies a result over a
// fulfilled node; but it removes a fulfilled node's entry, then its task,
// in one operation, so a node listed for hold (listedFor, by the passes
// since the first) is not fulfilled: it fails, saying why. Until then
// nothing is reported.
func Unread(why string, listedFor, hold time.Duration) Plan {
	if listedFor < hold {
		return Plan{}
	}
	return Plan{Report: true, Outcome: Refused(why)}
}

// Unrunnable is the plan for a node whose step cannot run at all (err:
// its body or timeout is invalid, or the operator's policy refuses it):
// it fails with the reason, which names the field and the fix.
func Unrunnable(err error) Plan {
	return Plan{Report: true, Outcome: Invalid(err)}
}
