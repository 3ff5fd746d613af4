package render

import (
	"slices"
	"strings"
	"testing"
)

// A SparkApplication is rendered as the Workflow convert makes of it, and
// convert's reports that are not about the body become warnings.
func TestRenderSparkApplication(t *testing.T) {
	app := `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: pi, namespace: data}
spec:
  type: Scala
  image: spark:3.5.3
  mainClass: A
  mainApplicationFile: local:///a.jar
  driver: {memroy: 1g}
status: {applicationState: {state: COMPLETED}}
`
	steps, err := Render([]byte(app), newBuilder(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 {
		t.Fatalf("%d steps", len(steps))
	}
	st := steps[0]
	if st.From != "SparkApplication data/pi, as the Workflow sparkplug convert writes" || st.Template != "spark" || st.Run.Workflow.Name != "pi-xxxxx" {
		t.Errorf("from %q, template %q, workflow %q", st.From, st.Template, st.Run.Workflow.Name)
	}
	if st.Err == nil || !strings.Contains(st.Err.Error(), `spark.driver.memroy`) {
		t.Errorf("err %v, want the body's problem", st.Err)
	}
	if len(st.Warnings) != 1 || !strings.HasPrefix(st.Warnings[0], "convert: status: dropped") {
		t.Errorf("warnings %q, want only convert's note on status", st.Warnings)
	}
}

// A -p that no step declares or names is unknown; one a tag names, or a
// template or the workflow declares, is not.
func TestUnknownParameters(t *testing.T) {
	wf := `kind: Workflow
metadata: {name: w}
spec:
  arguments: {parameters: [{name: env, value: prod}]}
  templates:
  - name: a
    inputs: {parameters: [{name: day}]}
    plugin: {spark: {type: Scala, image: x:1, mainClass: A, mainApplicationFile: "local:///{{inputs.parameters.jar}}"}}
`
	o := Options{Parameters: map[string]string{"env": "x", "day": "x", "jar": "a.jar", "dya": "x", "zone": "x"}}
	steps, err := Render([]byte(wf), newBuilder(t), o)
	if err != nil {
		t.Fatal(err)
	}
	if got := UnknownParameters(steps, o); !slices.Equal(got, []string{"dya", "zone"}) {
		t.Errorf("unknown %q", got)
	}
	if len(steps[0].Warnings) != 0 {
		t.Errorf("warnings %q with every parameter given", steps[0].Warnings)
	}
}
