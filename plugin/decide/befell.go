package decide

import "github.com/sparkplug-io/sparkplug/plugin/state"

// Befell is what befell an action of the pass just before, as the act
// side recorded it: a launch (or a companion, or a Workload) refused,
// failed for good, or cut short by an error worth asking again, or a
// spark-submit still running or waiting for a slot. The act side only
// records it; the next pass, at once and on the snapshot the pass before
// saw and acted on, decides what the node reports of it (Decide).
type Befell struct {
	Kind BefellKind
	// Attempt is the attempt whose launch it was; for Rejected, the
	// refusal is counted in the snapshot's Failures[Attempt].
	Attempt int
	// Message is what was said: the API server's, spark-submit's or
	// sparkplug's own words.
	Message string
	// Running is, for NoSlot, how many spark-submits run.
	Running int
}

// BefellKind is what kind of thing befell an action.
type BefellKind string

const (
	// Rejected: the API server, spark-submit or a squatter refused the
	// attempt's submission; it is retried as the restart policy's
	// onSubmissionFailure fields say.
	Rejected BefellKind = "rejected"
	// Unlaunchable: the attempt cannot be launched at all (its objects
	// cannot be built, no Spark distribution to run spark-submit from):
	// the node fails.
	Unlaunchable BefellKind = "unlaunchable"
	// Interrupted: an API error that asking again may cure.
	Interrupted BefellKind = "interrupted"
	// Submitting: the attempt's spark-submit runs on past the wait.
	Submitting BefellKind = "submitting"
	// NoSlot: as many spark-submits run as the plugin allows; the attempt
	// waits for a slot.
	NoSlot BefellKind = "no-slot"
)

// afterAction is what the node reports of what befell an action: the
// plan of the pass after it, which reports this and does nothing else
// (the pass before did what came before the action, and nothing after).
func afterAction(s *Snapshot, p Policy, loop bool) Plan {
	b := s.Befell
	var out state.Outcome
	switch b.Kind {
	case Rejected:
		f := s.Failures[b.Attempt]
		if f.Count == 0 {
			// Not counted (memory was cleared): the refusal stands once.
			f = Failure{Count: 1, Message: b.Message}
		}
		out = afterRefusal(f, p.Body)
	case Unlaunchable:
		out = state.SubmissionFailed(b.Message)
	case Interrupted:
		out = Transient(b.Message)
	case Submitting:
		out = SubmitRunning()
	case NoSlot:
		out = SubmitQueued(b.Running)
	default:
		// A kind this package does not know is a bug: the node says so
		// and is asked about again.
		out = Transient("unknown outcome of an action (" + string(b.Kind) + "): " + b.Message)
	}
	return Plan{Report: true, Outcome: out, JSON: loop}
}
