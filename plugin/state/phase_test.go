package state

import (
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
)

// The phases are Argo's words, and fulfilled where Argo's are (of a
// synced node).
func TestPhasesAreArgos(t *testing.T) {
	for ours, argo := range map[Phase]wfv1.NodePhase{
		PhasePending: wfv1.NodePending, PhaseRunning: wfv1.NodeRunning, PhaseSucceeded: wfv1.NodeSucceeded,
		PhaseFailed: wfv1.NodeFailed, PhaseError: wfv1.NodeError, PhaseSkipped: wfv1.NodeSkipped, PhaseOmitted: wfv1.NodeOmitted,
		"": "", "Unknown": "Unknown",
	} {
		if string(ours) != string(argo) {
			t.Errorf("phase %q is Argo's %q", ours, argo)
		}
		if got, want := ours.Fulfilled(), argo.Fulfilled(nil); got != want {
			t.Errorf("%q fulfilled = %v, Argo says %v", ours, got, want)
		}
		if got, want := ours.Completed(), argo.Completed(); got != want {
			t.Errorf("%q completed = %v, Argo says %v", ours, got, want)
		}
	}
}
