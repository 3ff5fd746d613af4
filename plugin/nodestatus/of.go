package nodestatus

import (
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// Of is the node result an outcome renders to: its phase, in Argo's
// type, and its line (state.Outcome.Line: redacted, then bounded).
// Outputs are the act side's to add.
func Of(o state.Outcome) wfv1.NodeResult {
	return wfv1.NodeResult{Phase: wfv1.NodePhase(o.Phase), Message: o.Line()}
}
