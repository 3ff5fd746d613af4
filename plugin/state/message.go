package state

import (
	"fmt"
	"strings"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/redact"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// Outcome is what a node is told about a Spark run: the state its message
// opens with, the Argo phase, and the words that follow. It is data: Events
// and metrics read State and Phase, and Message renders the one line a
// person reads, in one place, so nothing parses a message back.
type Outcome struct {
	// State is the word the message opens with (SUBMITTED, RUNNING,
	// COMPLETED, FAILED, PENDING_RERUN, SUBMISSION_FAILED, UNKNOWN); empty
	// for a step that never got as far as Spark (an invalid body).
	State spark.State
	// Phase is the Argo node phase.
	Phase Phase
	// Counts follows the state after a space: "RUNNING 3/3 executors".
	Counts string
	// Elapsed follows the counts after a comma, when not 0: how long the
	// driver has run, already rounded down to the progress interval
	// (Elapsed): "RUNNING 3/3 executors, 4m30s".
	Elapsed time.Duration
	// Progress follows the elapsed time after a comma, when not empty:
	// Spark's own progress of the running job, from the driver's REST API
	// ("RUNNING 3/3 executors, 4m30s, stage 4/7, 1,200/3,000 tasks").
	Progress string
	// Detail follows after a colon: "FAILED: driver exited 1 (Error)".
	Detail string
	// The parts that end the message, in this order (Message): each typed,
	// none a free string that a caller appends to.
	//
	// Waits: the state is not known for now ("; waiting").
	Waits bool
	// Attempt is the attempt the outcome is about, when the restart
	// policy can rerun: " (attempt 2/3)", " (attempt 2)" without a limit.
	Attempt Attempt
	// Archive: the driver's log is being stored ("; archiving the driver
	// log", "...before stopping the driver").
	Archive Archiving
	// LogNotArchived is why the driver's log could not be stored:
	// "; driver log not archived: <why>".
	LogNotArchived string
	// ExitCode is the exit code of the driver container the outcome is
	// about, once it terminated: the node's outputs.exitCode. nil while it
	// has not terminated, when it never ran, and when sparkplug stopped it
	// (a limit ended the attempt, not the driver).
	ExitCode *int32
}

// Message is the one line a person reads in the Argo UI, for example
// "RUNNING 1/3 executors (2 pending), 4m30s" or
// "FAILED: driver exited 1 (Error): java.lang.IllegalArgumentException: bad input".
func (o Outcome) Message() string {
	head := string(o.State)
	if o.Counts != "" {
		head += " " + o.Counts
	}
	if o.Elapsed > 0 {
		head += ", " + FormatElapsed(o.Elapsed)
	}
	if o.Progress != "" {
		head += ", " + o.Progress
	}
	return colon(head, o.Detail) + o.tail()
}

// Line is the message a node shows, the one place an outcome becomes
// the words Argo copies into the Workflow object: whatever grew them (an
// API server's or spark-submit's words) they stay bounded, and show no
// secret those words quote (redacted before they are cut, so that no cut
// hides a secret's shape). nodestatus.Of makes the node's result of it.
func (o Outcome) Line() string {
	return spec.Truncate(redact.Value(o.Message()), spec.MaxMessageBytes)
}

// tail renders the parts that end the message.
func (o Outcome) tail() string {
	var b strings.Builder
	if o.Waits {
		b.WriteString("; waiting")
	}
	b.WriteString(o.Attempt.String())
	b.WriteString(string(o.Archive))
	if o.LogNotArchived != "" {
		b.WriteString("; driver log not archived: " + o.LogNotArchived)
	}
	return b.String()
}

// Attempt is "attempt N/Of" (Of: how many attempts the policy allows in
// all; 0: no limit); the zero Attempt says nothing.
type Attempt struct {
	N  int
	Of int32
}

// String is " (attempt 2/3)", " (attempt 2)" without a limit, "" for none.
func (a Attempt) String() string {
	switch {
	case a.N == 0:
		return ""
	case a.Of == 0:
		return fmt.Sprintf(" (attempt %d)", a.N)
	}
	return fmt.Sprintf(" (attempt %d/%d)", a.N, a.Of)
}

// Archiving is what a message says of a driver log being stored.
type Archiving string

const (
	NotArchiving Archiving = ""
	// ArchivingLog: the driver ended; its log is stored before the final
	// result.
	ArchivingLog Archiving = "; archiving the driver log"
	// ArchivingBeforeStop: Kueue took the quota back; the log is stored,
	// then the driver stops.
	ArchivingBeforeStop Archiving = "; archiving the driver log before stopping the driver"
)

// SubmissionFailed is the outcome of a driver that cannot be submitted,
// for good: the API server refused it, or its objects cannot be built.
func SubmissionFailed(detail string) Outcome {
	return Outcome{State: spark.StateSubmissionFailed, Phase: PhaseFailed, Detail: detail}
}

// Message is Outcome().Message().
func (a Assessment) Message() string { return a.Outcome().Message() }

// Outcome is what the attempt tells its node. An attempt that is over says
// COMPLETED or FAILED, not SUCCEEDING or FAILING.
func (a Assessment) Outcome() Outcome {
	o := Outcome{State: a.State, Phase: a.Phase(), Detail: a.Detail, ExitCode: a.ExitCode}
	switch a.State {
	case spark.StateSubmitted:
		if a.Waiting != "" {
			o.Detail = "driver pending (" + colon(a.Waiting, a.Detail) + ")"
		}
	case spark.StateRunning:
		o.Counts, o.Elapsed = a.Executors.String(), a.Elapsed
	case spark.StateSucceeding:
		o.State = spark.StateCompleted
	case spark.StateFailing:
		o.State = spark.StateFailed
		o.Detail = colon(a.failureHead(), a.Detail)
	case spark.StateUnknown:
		o.Waits = true
	case spark.StateNew:
		// Assess never returns another state; say plainly what was set.
		o.State = "NEW"
	}
	return o
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
func (a Assessment) Phase() Phase {
	switch a.State {
	case spark.StateNew, spark.StateSubmitted, spark.StatePendingRerun:
		return PhasePending
	case spark.StateRunning, spark.StateUnknown:
		return PhaseRunning
	case spark.StateSucceeding, spark.StateCompleted:
		return PhaseSucceeded
	case spark.StateFailing, spark.StateFailed, spark.StateSubmissionFailed:
		return PhaseFailed
	default:
		return PhaseError
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
