package execute

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// limit names a time limit or start-up failure sparkplug enforces itself:
// Argo does not stop a plugin node it believes is Running.
type limit string

const (
	limitNone limit = ""
	// limitTimeout: the template's timeout ran out over the whole run (all
	// attempts). Final whatever the restart policy says.
	limitTimeout limit = "Timeout"
	// limitPending: the attempt's driver did not start within the pending
	// timeout. The attempt fails; the restart policy decides what follows.
	limitPending limit = "PendingTimeout"
	// limitCannotStart: the driver waits on a reason that never resolves
	// by itself (a bad image, a missing Secret). Same as limitPending, at once.
	limitCannotStart limit = "CannotStart"
)

// limits applies the time limits to an attempt's assessment. runStart is
// when the run's first driver was created; timeout is the template's
// timeout (0: none); pending is the pending timeout. It returns the
// assessment to judge and the limit that ended the attempt, if any.
func limits(a state.Assessment, head *corev1.Pod, runStart, now time.Time, timeout, pending time.Duration) (state.Assessment, limit) {
	if a.Done {
		return a, limitNone
	}
	fail := func(reason, detail string) state.Assessment {
		return state.Assessment{State: spark.StateFailing, Done: true, Reason: reason, Detail: detail, Executors: a.Executors}
	}
	if timeout > 0 && !runStart.IsZero() && now.Sub(runStart) >= timeout {
		return fail("Timeout", fmt.Sprintf("timed out after %s (the template's timeout); the driver was stopped", timeout)), limitTimeout
	}
	if a.State != spark.StateSubmitted || head == nil {
		return a, limitNone
	}
	if state.IsFatalWaiting(a.Waiting) {
		return fail(a.Waiting, strings.TrimSpace("the driver cannot start: "+a.Detail)), limitCannotStart
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
		return fail("PendingTimeout", detail), limitPending
	}
	return a, limitNone
}
