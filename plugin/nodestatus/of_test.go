package nodestatus

import (
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// An outcome's result carries its phase as Argo's, its line redacted and
// bounded, and no outputs.
func TestOfRendersTheOutcome(t *testing.T) {
	o := state.Outcome{State: spark.StateSubmissionFailed, Phase: state.PhaseFailed, Detail: "create pod: --db-password=leak01 " + strings.Repeat("x", 10000)}
	r := Of(o)
	if r.Phase != wfv1.NodeFailed || r.Message != o.Line() || strings.Contains(r.Message, "leak01") || len(r.Message) > spec.MaxMessageBytes {
		t.Errorf("result %s %.120q (%d bytes); want Failed with the outcome's line", r.Phase, r.Message, len(r.Message))
	}
	if r.Outputs != nil {
		t.Errorf("outputs %+v; the act side adds them", r.Outputs)
	}
}
