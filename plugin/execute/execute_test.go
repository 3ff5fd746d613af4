package execute

import (
	"encoding/json"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// templateOf is a plugin template whose plugin value is value.
func templateOf(value string) *wfv1.Template {
	tmpl := &wfv1.Template{Name: "pi", Plugin: &wfv1.Plugin{}}
	tmpl.Plugin.Value = json.RawMessage(value)
	return tmpl
}

// Every result's message is bounded, whatever grew it.
func TestResultBoundsTheMessage(t *testing.T) {
	o := state.SubmissionFailed("spark-submit exited 1: " + strings.Repeat("java.lang.Exception at ...\n", 2000))
	r := (&Core{}).result(o, nil, false, sparkBody(t, ""), nil)
	if len(r.Message) > spec.MaxMessageBytes || !strings.HasPrefix(r.Message, "SUBMISSION_FAILED: spark-submit exited 1: java.lang.Exception") {
		t.Fatalf("message of %d bytes starting %q", len(r.Message), r.Message[:60])
	}
}
