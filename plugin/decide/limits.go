package decide

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// Limit names a time limit or start-up failure sparkplug enforces itself:
// Argo does not stop a plugin node it believes is Running.
type Limit string

const (
	LimitNone Limit = ""
	// LimitTimeout: the template's timeout ran out over the whole run (all
	// attempts). Final whatever the restart policy says.
	LimitTimeout Limit = "Timeout"
	// LimitPending: the attempt's driver did not start within the pending
	// timeout. The attempt fails; the restart policy decides what follows.
	LimitPending Limit = "PendingTimeout"
	// LimitCannotStart: the driver waits on a reason that never resolves
	// by itself (a bad image, a missing Secret). Same as LimitPending, at once.
	LimitCannotStart Limit = "CannotStart"
	// LimitPreempted: Kueue preempted the attempt's Workload and the step
	// requeues (sparkplug.kueue.onPreemption Requeue, the default): the
	// driver gives the quota back and a new attempt queues, whatever the
	// restart policy says.
	LimitPreempted Limit = "KueuePreempted"
	// LimitEvicted: Kueue evicted the attempt's Workload otherwise (timed
	// out waiting for its pods, stopped its queue, deactivated it), or
	// preempted a step that does not requeue: the driver gives the quota
	// back and the node fails.
	LimitEvicted Limit = "KueueEvicted"
)

// limits applies the time limits to an attempt's assessment. runStart is
// when the run started (timeoutFrom); timeout is the template's
// timeout (0: none); pending is the pending timeout. It returns the
// assessment to judge and the limit that ended the attempt, if any.
func limits(a state.Assessment, head *corev1.Pod, runStart, now time.Time, timeout, pending time.Duration) (state.Assessment, Limit) {
	if a.Done {
		return a, LimitNone
	}
	fail := func(reason, detail string) state.Assessment {
		return state.Assessment{State: spark.StateFailing, Done: true, Reason: reason, Detail: detail, Executors: a.Executors}
	}
	if timeout > 0 && !runStart.IsZero() && now.Sub(runStart) >= timeout {
		return fail("Timeout", fmt.Sprintf("timed out after %s (the template's timeout); the driver was stopped", timeout)), LimitTimeout
	}
	if a.State != spark.StateSubmitted || head == nil {
		return a, LimitNone
	}
	if state.IsFatalWaiting(a.Waiting) {
		return fail(a.Waiting, strings.TrimSpace("the driver cannot start: "+a.Detail)), LimitCannotStart
	}
	if waited := now.Sub(head.CreationTimestamp.Time); pending > 0 && !head.CreationTimestamp.IsZero() && waited >= pending {
		why := a.Waiting
		if why == "" {
			why = a.Detail
		}
		detail := fmt.Sprintf("the driver did not start within %s (spark.sparkplug.pendingTimeout)", pending)
		if why != "" {
			detail += "; it was waiting: " + why
		}
		return fail("PendingTimeout", detail), LimitPending
	}
	return a, LimitNone
}

// timeoutFrom is when the template's timeout of the node of s counts
// from: when its run started (runStart), or, where the Workflow does not
// say when the node started, when its oldest Kueue Workload of the
// incarnation was made, if that was before; zero when nothing says.
// Waiting in Kueue's queue is part of the run.
func timeoutFrom(s *Snapshot) time.Time {
	start := runStart(s, s.Run)
	for _, w := range s.Workloads {
		if w.Current && !w.Created.IsZero() && (start.IsZero() || w.Created.Before(start)) {
			start = w.Created
		}
	}
	return start
}
