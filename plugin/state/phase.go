package state

// Phase is an Argo node phase, in Argo's own words (the values of its
// NodePhase). It is sparkplug's own type so that what decides a node's
// phase needs no Argo API package, which links client-go;
// nodestatus.Of turns it into Argo's.
type Phase string

// The phases a Spark node reports, and the two Argo gives nodes it does
// not run (an entry written by someone else may carry them).
const (
	PhasePending   Phase = "Pending"
	PhaseRunning   Phase = "Running"
	PhaseSucceeded Phase = "Succeeded"
	PhaseFailed    Phase = "Failed"
	PhaseError     Phase = "Error"
	PhaseSkipped   Phase = "Skipped"
	PhaseOmitted   Phase = "Omitted"
)

// Fulfilled reports whether a node in the phase is done for Argo: it
// completed (Succeeded, Failed, Error) or was never to run (Skipped,
// Omitted), as Argo's NodePhase.Fulfilled says of a synced node.
func (p Phase) Fulfilled() bool {
	switch p {
	case PhaseSucceeded, PhaseFailed, PhaseError, PhaseSkipped, PhaseOmitted:
		return true
	}
	return false
}

// Completed reports whether a node in the phase completed: Succeeded,
// Failed or Error (Argo's NodePhase.Completed).
func (p Phase) Completed() bool {
	return p == PhaseSucceeded || p == PhaseFailed || p == PhaseError
}
