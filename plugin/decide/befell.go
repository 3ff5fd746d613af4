package decide

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// Befell is what befell an action of the pass just before, as the act
// side recorded it: a launch (or a companion, or a Workload) refused,
// failed for good, or cut short by an error worth asking again, a name
// of the run held by another's object, or a spark-submit still running
// or waiting for a slot. The act side only records it; the next pass, at
// once and on the snapshot the pass before saw and acted on, decides what
// is done of it and what the node reports (Decide).
type Befell struct {
	Kind BefellKind
	// Attempt is the attempt whose launch (or driver) it was; for
	// Rejected, the refusal is counted in the snapshot's
	// Failures[Attempt].
	Attempt int
	// Message is what was said: the API server's, spark-submit's or
	// sparkplug's own words.
	Message string
	// Running is, for NoSlot, how many spark-submits run.
	Running int
	// Driver is, for CompanionRefused and NamesTaken, the attempt's driver
	// that exists: the live one whose companions were checked, or the one
	// the launch had just made; nil: none was made (the driver's own name
	// is held).
	Driver *corev1.Pod
	// Held is, for CompanionRefused, that the companion's name is held by
	// an object not the run's (rather than refused by the API server).
	Held bool
	// Drawn is, for NamesTaken, that the launch ran under names drawn
	// already (objects.Run.NameKey).
	Drawn bool
}

// BefellKind is what kind of thing befell an action.
type BefellKind string

const (
	// Rejected: the API server, spark-submit or a squatter refused the
	// attempt's submission, counted in memory; it is retried as the
	// restart policy's onSubmissionFailure fields say.
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
	// CompanionRefused: an object a driver needs (its ConfigMap, its
	// Service, its PodGroup), missing, was refused for good, or its name
	// is held (Held): checking a live driver's companions, or making
	// those of a driver the launch just made. Nothing was deleted.
	CompanionRefused BefellKind = "companion-refused"
	// NamesTaken: a launch found one of its run's names (the driver's, or
	// a companion's once the driver was made) held by an object not the
	// run's, which is left as it is; the launch withdrew its PodGroup,
	// and nothing else.
	NamesTaken BefellKind = "names-taken"
)

// afterAction is the plan of the pass after an action befell: what is
// done of it, and what the node reports. A refusal, failure, error or
// spark-submit still running is reported, and nothing else done (the pass
// before did what came before the action, and nothing after). A
// companion refused or a name held is a choice: the driver runs on
// without the companion (the rest of the plan before), or it is deleted
// and the submission counted as refused; a launch runs again under names
// drawn now, or its submission is counted as refused (refusal).
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
	case CompanionRefused:
		if !b.Held && keepsRunning(b.Driver) && s.Acted != nil && s.Acted.Ensure && s.Acted.Launch != b.Attempt {
			// It started with what it needed; it runs on. (A driver a
			// launch just made has not.)
			rest := s.Acted.from(actEnsure)
			rest.Waive = b.Message
			return rest
		}
		// Never with another's objects, nor waiting for a start that
		// would not come.
		return refusal(b)
	case NamesTaken:
		if b.Drawn || p.SparkSubmit || s.Acted == nil || s.Acted.Launch != b.Attempt {
			// Not even a drawn name was free, or the launcher takes none.
			return refusal(b)
		}
		rest := s.Acted.from(actLaunch)
		rest.DrawNames, rest.Discard = true, b.Driver
		return rest
	default:
		// A kind this package does not know is a bug: the node says so
		// and is asked about again.
		out = Transient("unknown outcome of an action (" + string(b.Kind) + "): " + b.Message)
	}
	return Plan{Report: true, Outcome: out, JSON: loop}
}

// keepsRunning: a driver whose companion is refused after it started (a
// restarted plugin cannot make its Service again) runs on with what it
// had; one that has not started would never start, and its attempt is a
// refused submission.
func keepsRunning(driver *corev1.Pod) bool {
	return driver != nil && driver.Status.Phase == corev1.PodRunning
}

// refusal is the plan that deletes what befell's driver, if any, and
// counts its attempt's submission as refused; the pass after reports it
// (Rejected).
func refusal(b *Befell) Plan {
	return Plan{Discard: b.Driver, Refuse: b.Attempt, Refusal: b.Message}
}

// actStep is an action of a plan, in the order the act side carries them
// out: what a pass after an action befell may still have to do.
type actStep int

const (
	// actEnsure: making sure of the live driver's companions, and all
	// after it (Workloads created, the launch, PodsReady, the log, the
	// report).
	actEnsure actStep = iota
	// actLaunch: the launch, and all after it.
	actLaunch
)

// from is what is left of pl from step on: what came before (abandon,
// stop, Workloads deleted, and for actLaunch companions and Workloads
// created) was done by the pass that carried pl out.
func (pl Plan) from(step actStep) Plan {
	pl.Abandon, pl.Stop, pl.KueueDequeue, pl.Ensure = false, LimitNone, nil, false
	if step >= actLaunch {
		pl.KueueEnqueue = 0
	}
	return pl
}
