package state

import (
	"fmt"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Message is the one line a person reads in the Argo UI, for example
// "RUNNING 1/3 executors (2 pending)" or
// "FAILED: driver exited 1 (Error): java.lang.IllegalArgumentException: bad input".
// An attempt that is over says COMPLETED or FAILED, not SUCCEEDING or FAILING.
func (a Assessment) Message() string {
	switch a.State {
	case spark.StateSubmitted:
		if a.Waiting != "" {
			return "SUBMITTED: driver pending (" + colon(a.Waiting, a.Detail) + ")"
		}
		return colon("SUBMITTED", a.Detail)
	case spark.StateRunning:
		return colon("RUNNING "+a.Executors.String(), a.Detail)
	case spark.StateSucceeding:
		return colon(string(spark.StateCompleted), a.Detail)
	case spark.StateFailing:
		return colon(string(spark.StateFailed), colon(a.failureHead(), a.Detail))
	case spark.StateUnknown:
		return colon(string(spark.StateUnknown), a.Detail) + "; waiting"
	default:
		// Assess never returns another state; say plainly what was set.
		name := string(a.State)
		if name == "" {
			name = "NEW"
		}
		return colon(name, a.Detail)
	}
}

// failureHead says how the driver ended: by a pod reason, an exit code, or
// a pod reason without an exit code, followed by the reason.
func (a Assessment) failureHead() string {
	var head string
	if f, ok := podFailures[a.Reason]; ok {
		head = f.head
	} else if a.ExitCode != nil {
		head = fmt.Sprintf("driver exited %d", *a.ExitCode)
	} else if a.Reason != "" {
		head = "driver pod failed"
	}
	if a.Reason != "" {
		head += " (" + a.Reason + ")"
	}
	return head
}

// String is "3/3 executors", "2 executors" without a target, with the ones
// not running in parentheses: "1/3 executors (2 pending)".
func (c ExecutorCounts) String() string {
	var s string
	if c.Target > 0 {
		s = fmt.Sprintf("%d/%d %s", c.Running, c.Target, plural(int(c.Target), "executor"))
	} else {
		s = fmt.Sprintf("%d %s", c.Running, plural(c.Running, "executor"))
	}
	var others []string
	for _, n := range []struct {
		count int
		word  string
	}{{c.Pending, "pending"}, {c.Failed, "failed"}, {c.Unknown, "unknown"}} {
		if n.count > 0 {
			others = append(others, fmt.Sprintf("%d %s", n.count, n.word))
		}
	}
	if len(others) > 0 {
		s += " (" + strings.Join(others, ", ") + ")"
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Phase is the Argo node phase of the attempt: SUBMITTED is Pending, RUNNING
// and UNKNOWN (transient: never fail on it) are Running, SUCCEEDING is
// Succeeded, FAILING is Failed. The operator's other states map to what they
// mean; a state no Spark operator has is an Error, so a bug ends the node
// with a message instead of leaving it running forever.
func (a Assessment) Phase() wfv1.NodePhase {
	switch a.State {
	case spark.StateNew, spark.StateSubmitted, spark.StatePendingRerun:
		return wfv1.NodePending
	case spark.StateRunning, spark.StateUnknown:
		return wfv1.NodeRunning
	case spark.StateSucceeding, spark.StateCompleted:
		return wfv1.NodeSucceeded
	case spark.StateFailing, spark.StateFailed, spark.StateSubmissionFailed:
		return wfv1.NodeFailed
	default:
		return wfv1.NodeError
	}
}

// fatalWaiting are the waiting reasons that never fix themselves.
var fatalWaiting = map[string]bool{
	"ErrImagePull":               true,
	"ImagePullBackOff":           true,
	"ErrImageNeverPull":          true,
	"InvalidImageName":           true,
	"CreateContainerConfigError": true,
	"CreateContainerError":       true,
}

// IsFatalWaiting reports whether a container waiting reason (Assessment.Waiting)
// will not resolve by waiting: a bad or unpullable image, or a container
// that cannot be created from its configuration (a missing Secret or
// ConfigMap key). ContainerCreating, PodInitializing and Unschedulable are
// not fatal.
func IsFatalWaiting(reason string) bool {
	return fatalWaiting[reason]
}
