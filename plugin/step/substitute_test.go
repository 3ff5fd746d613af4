package step

import (
	"encoding/json"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/google/go-cmp/cmp"
)

// The substitution must be Argo's: a parameter in a string field arrives
// as that string, escaped for JSON.
func TestSubstituteAsArgoDoes(t *testing.T) {
	tmpl := &wfv1.Template{Name: "t", Plugin: &wfv1.Plugin{Object: wfv1.Object{Value: json.RawMessage(
		`{"spark":{"mainClass":"{{inputs.parameters.c}}","arguments":["{{ inputs.parameters.a }}","{{item}}"]}}`)}}}
	sub, err := SubstituteAll(tmpl, map[string]string{"inputs.parameters.c": "a.B", "inputs.parameters.a": `say "hi"` + "\n"})
	if err != nil {
		t.Fatal(err)
	}
	raw, _, err := BodyOf(&sub)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"mainClass":"a.B","arguments":["say \"hi\"\n","{{item}}"]}`
	if diff := cmp.Diff(want, string(raw)); diff != "" {
		t.Errorf("substituted body (-want +got):\n%s", diff)
	}
	if _, err := SubstituteAll(tmpl, nil); err == nil || !strings.Contains(err.Error(), "failed to resolve {{inputs.parameters.c}}") {
		t.Errorf("unresolved input: %v, want failed to resolve", err)
	}
}

// Substitute leaves the tags it does not know and lists those Argo must
// resolve before it runs the template; {{item}} and task outputs are not
// among them.
func TestSubstituteListsTheUnresolved(t *testing.T) {
	tmpl := &wfv1.Template{Name: "t", Plugin: &wfv1.Plugin{Object: wfv1.Object{Value: json.RawMessage(
		`{"spark":{"mainClass":"{{inputs.parameters.c}}","image":"{{workflow.parameters.image}}","arguments":["{{item}}","{{tasks.a.outputs.result}}","{{workflow.name}}"],"executor":{"instances":"{{inputs.parameters.n}}"}}}`)}}}
	sub, unresolved, err := Substitute(tmpl, map[string]string{"workflow.name": "wf", "inputs.parameters.n": "3"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(unresolved, " "); got != "{{inputs.parameters.c}} {{workflow.parameters.image}}" {
		t.Errorf("unresolved %q", got)
	}
	raw, _, _ := BodyOf(&sub)
	want := `{"mainClass":"{{inputs.parameters.c}}","image":"{{workflow.parameters.image}}","arguments":["{{item}}","{{tasks.a.outputs.result}}","wf"],"executor":{"instances":"3"}}`
	if diff := cmp.Diff(want, string(raw)); diff != "" {
		t.Errorf("substituted body (-want +got):\n%s", diff)
	}
}
