package render

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/policy"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/step"
	"github.com/sparkplug-io/sparkplug/templates"
)

const body = `type: Scala
image: spark:3.5.3
mainClass: org.apache.spark.examples.SparkPi
mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
`

func indent(s, by string) string {
	return by + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+by) + "\n"
}

func newBuilder(t *testing.T) *objects.Builder {
	t.Helper()
	b, err := objects.New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every kind of input names its steps and runs as documented.
func TestRenderFindsTheSteps(t *testing.T) {
	tests := []struct {
		name      string
		input     string
		opts      Options
		templates []string
		workflow  string
		namespace string
		node      string
	}{
		{"a bare body", body, Options{}, []string{""}, "render", "default", "render-2166136261"},
		{"the plugin value", "spark:\n" + indent(body, "  "), Options{}, []string{""}, "render", "default", ""},
		{"a plugin snippet", "plugin:\n  spark:\n" + indent(body, "    "), Options{}, []string{""}, "render", "default", ""},
		{"a template", "name: pi\nplugin:\n  spark:\n" + indent(body, "    "), Options{Workflow: "w", Namespace: "ns", NodeID: "w-1"}, []string{"pi"}, "w", "ns", "w-1"},
		{"a Workflow with two spark steps", `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: two-, namespace: data}
spec:
  entrypoint: main
  templates:
    - name: main
      dag: {tasks: [{name: a, template: a}, {name: b, template: b}]}
    - name: a
      plugin:
        spark:
` + indent(body, "          ") + `    - name: b
      plugin:
        spark:
` + indent(body, "          "), Options{}, []string{"a", "b"}, "two-xxxxx", "data", ""},
		{"several documents", "name: one\nplugin:\n  spark:\n" + indent(body, "    ") + "---\n---\n" + `apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {name: nightly}
spec:
  schedules: ["0 2 * * *"]
  workflowSpec:
    entrypoint: two
    templates:
      - name: two
        plugin:
          spark:
` + indent(body, "            "), Options{}, []string{"one", "two"}, "", "default", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := Render([]byte(tt.input), newBuilder(t), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, st := range steps {
				names = append(names, st.Template)
				if st.Err != nil {
					t.Errorf("step %q: %v", st.Template, st.Err)
					continue
				}
				r := st.Run
				if tt.workflow != "" && r.Workflow.Name != tt.workflow || r.Workflow.Namespace != tt.namespace || r.Workflow.UID != PlaceholderUID && tt.opts.UID == "" {
					t.Errorf("run %+v, want workflow %s in %s", r, tt.workflow, tt.namespace)
				}
				if tt.node != "" && r.NodeID != tt.node {
					t.Errorf("node %s, want %s", r.NodeID, tt.node)
				}
				if refs := st.Objects.ConfigMap.OwnerReferences; len(refs) != 1 || refs[0].UID != PlaceholderDriverUID || refs[0].Name != st.Objects.Driver.Name {
					t.Errorf("configmap owners %+v, want the driver with the placeholder uid", refs)
				}
			}
			if strings.Join(names, ",") != strings.Join(tt.templates, ",") {
				t.Errorf("steps %q, want %q", names, tt.templates)
			}
		})
	}
}

// The template key is the one the plugin computes from the template the
// agent sends, so the labels match a real run's.
func TestRenderUsesThePluginsTemplateKey(t *testing.T) {
	input := "name: pi\nplugin:\n  spark:\n" + indent(body, "    ")
	steps, err := Render([]byte(input), newBuilder(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON([]byte(input))
	if err != nil {
		t.Fatal(err)
	}
	var tmpl wfv1.Template
	if err := json.Unmarshal(js, &tmpl); err != nil {
		t.Fatal(err)
	}
	want, err := step.Key(&tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if steps[0].Run.TemplateKey != want {
		t.Errorf("template key %s, want %s", steps[0].Run.TemplateKey, want)
	}
}

// Parameters are substituted from their defaults, spec.arguments and the
// options, as Argo would; the substituted template is what gets keyed.
func TestRenderSubstitutesParameters(t *testing.T) {
	input := `apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: lib}
spec:
  arguments:
    parameters: [{name: image, value: "spark:3.5.3"}]
  templates:
    - name: job
      inputs:
        parameters:
          - {name: executors, default: "2"}
          - {name: class}
      plugin:
        spark:
          type: Scala
          image: "{{workflow.parameters.image}}"
          mainClass: "{{inputs.parameters.class}}"
          mainApplicationFile: local:///app.jar
          arguments: ["{{workflow.name}}", "{{tasks.x.outputs.result}}"]
          executor:
            instances: "{{inputs.parameters.executors}}"
`
	steps, err := Render([]byte(input), newBuilder(t), Options{Parameters: map[string]string{"class": "com.example.Main"}})
	if err != nil {
		t.Fatal(err)
	}
	st := steps[0]
	if st.Err != nil {
		t.Fatal(st.Err)
	}
	c := st.Objects.ConfigMap.Data["spark.properties"]
	for _, want := range []string{"spark.executor.instances=2", `spark.kubernetes.container.image=spark\:3.5.3`} {
		if !strings.Contains(c, want) {
			t.Errorf("spark.properties lacks %s:\n%s", want, c)
		}
	}
	args := strings.Join(st.Objects.Driver.Spec.Containers[0].Args, " ")
	if want := "--class com.example.Main local:///app.jar lib {{tasks.x.outputs.result}}"; !strings.HasSuffix(args, want) {
		t.Errorf("driver args %q: want the class, the workflow's name and the unresolved task tag kept (%s)", args, want)
	}
}

// An invalid body gives exactly the plugin's message; a body the builder
// refuses gives the plugin's SUBMISSION_FAILED message.
func TestRenderReportsThePluginsMessage(t *testing.T) {
	bad := "type: Scala\nimage: x:1\nmainClass: A\nmainApplicationFile: local:///a.jar\ndriver: {memory: 12zz}\n"
	steps, err := Render([]byte(bad), newBuilder(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := yaml.YAMLToJSON([]byte(bad))
	_, want := spec.Parse(js)
	if want == nil || steps[0].Err == nil || steps[0].Err.Error() != want.Error() {
		t.Errorf("error %v, want the plugin's %v", steps[0].Err, want)
	}
	// At the field of the first problem, as convert reports: line 5,
	// memory's key.
	if got := Errors("body.yaml", steps).Error(); got != "body.yaml:5:10: "+want.Error() {
		t.Errorf("Errors = %q, want the file, line and column, then the message alone for a single step", got)
	}
	var out bytes.Buffer
	if err := Write(&out, steps); err != nil || out.Len() != 0 {
		t.Errorf("an invalid step wrote %q (%v)", out.String(), err)
	}

	two := "name: good\nplugin:\n  spark:\n" + indent(body, "    ") + "---\nname: bad\nplugin:\n  spark:\n" + indent(bad, "    ")
	steps, err = Render([]byte(two), newBuilder(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The second document starts on line 9 of the input; the flow
	// mapping's memory is on line 16, column 14.
	if got := Errors("two.yaml", steps).Error(); got != "two.yaml:16:14: template bad: "+want.Error() {
		t.Errorf("Errors = %q, want the failing template named, at its field", got)
	}
}

func TestRenderRejectsInputsWithoutASparkStep(t *testing.T) {
	tests := []struct{ name, input, want string }{
		{"not YAML", "a: [", "read YAML"},
		{"a list", "- a\n- b\n", "want a YAML object, got a list"},
		{"another kind", "apiVersion: v1\nkind: Pod\n", "kind Pod: want a Workflow"},
		{"another plugin", "name: x\nplugin:\n  slack: {}\n", "the template's plugin has no spark body"},
		{"a Workflow without spark", "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: w}\nspec:\n  templates: [{name: a, container: {image: x}}]\n", "no spark step found"},
		{"empty", "", "no spark step found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render([]byte(tt.input), newBuilder(t), Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Render error %v, want %q", err, tt.want)
			}
		})
	}
}

// The output is YAML documents that decode into the objects, without what
// only the API server fills.
func TestWriteIsAYAMLStreamOfTheObjects(t *testing.T) {
	input := `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: w}
spec:
  templates:
    - name: ui
      plugin:
        spark:
` + indent(body, "          ") + "          sparkUIOptions: {servicePort: 80}\n"
	steps, err := Render([]byte(input), newBuilder(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Write(&out, steps); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(out.String(), "---\n")
	if len(docs) != 4 || !strings.HasPrefix(docs[0], "# template: ui\n# run: workflow w ") {
		t.Fatalf("%d documents:\n%s", len(docs), out.String())
	}
	if strings.Contains(out.String(), "creationTimestamp") || strings.Contains(out.String(), "status:") {
		t.Error("the output has fields only the API server fills")
	}
	var svc corev1.Service
	if err := yaml.UnmarshalStrict([]byte(docs[3]), &svc); err != nil || !strings.HasSuffix(svc.Name, "-ui-svc") || svc.Spec.Ports[0].Port != 80 {
		t.Errorf("the UI Service: %+v (%v)", svc, err)
	}
}

// render checks the plugin's policy as serve does: the plugin's own
// ServiceAccount always, the options as given; a refused step prints
// nothing.
func TestRenderChecksThePolicy(t *testing.T) {
	base := "type: Scala\nimage: x:1\nmainClass: A\nmainApplicationFile: local:///a.jar\n"
	for _, tc := range []struct {
		name, body string
		policy     policy.Policy
		want       string
	}{
		{"the plugin's account", base + "driver: {serviceAccount: spark-executor-plugin}\n", policy.Policy{},
			"refused by the plugin's policy: spark.driver.serviceAccount: ServiceAccount spark-executor-plugin is the plugin's own"},
		{"a Service type not allowed", base + "sparkUIOptions: {serviceType: LoadBalancer}\n", policy.Policy{ServiceTypes: []string{"ClusterIP"}},
			"spark.sparkUIOptions.serviceType: a Service of type LoadBalancer is not one the plugin allows (ClusterIP) (policy rule allowed-service-types)"},
		{"allowed", base + "driver: {serviceAccount: spark}\nsparkUIOptions: {serviceType: NodePort}\n", policy.Policy{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps, err := Render([]byte(tc.body), newBuilder(t), Options{Policy: tc.policy})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			werr := Write(&out, steps)
			if tc.want == "" {
				if steps[0].Err != nil || werr != nil || out.Len() == 0 {
					t.Fatalf("refused: %v %v", steps[0].Err, werr)
				}
				return
			}
			if steps[0].Err == nil || !strings.Contains(steps[0].Err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", steps[0].Err, tc.want)
			}
			if werr != nil || out.Len() != 0 {
				t.Fatalf("a refused step wrote %q (%v)", out.String(), werr)
			}
		})
	}
}

// An input parameter a template declares without a value is Argo's to
// resolve when every caller passes it (or the template is a
// WorkflowTemplate's, whose callers must): the preview shows it as written
// with a note, and no warning. One caller that does not pass it, an
// undeclared parameter, or a bare template keep the warning: Argo would
// fail the step.
func TestRenderWarnsOnlyOfParametersNoCallerGives(t *testing.T) {
	workflow := func(kind, calls string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: ` + kind + `
metadata: {generateName: w-}
spec:
  entrypoint: main
  templates:
    - name: main
` + calls + `
    - name: job
      inputs:
        parameters: [{name: slices}]
      plugin:
        spark:
          type: Scala
          image: spark:3.5.3
          mainClass: org.apache.spark.examples.SparkPi
          mainApplicationFile: local:///app.jar
          arguments: ["{{inputs.parameters.slices}}", "{{inputs.parameters.undeclared}}"]
`
	}
	dag := `      dag:
        tasks:
          - {name: a, template: job, arguments: {parameters: [{name: slices, value: "10"}]}}
          - {name: b, template: job, arguments: {parameters: [{name: slices, value: "{{tasks.a.outputs.result}}"}]}}
`
	steps := `      steps:
        - - {name: a, template: job, arguments: {parameters: [{name: slices, value: "10"}]}}
          - {name: b, template: job}
`
	const declared, undeclared = "{{inputs.parameters.slices}}", "{{inputs.parameters.undeclared}}"
	for _, tc := range []struct {
		name, input string
		// warned: the tags the warning names; noted: those a note names.
		warned, noted []string
	}{
		{"every DAG task passes it", workflow("Workflow", dag), []string{undeclared}, []string{declared}},
		{"a step does not pass it", workflow("Workflow", steps), []string{declared, undeclared}, nil},
		{"no caller", workflow("Workflow", "      steps: []"), []string{declared, undeclared}, nil},
		{"a WorkflowTemplate's", workflow("WorkflowTemplate", "      steps: []"), []string{undeclared}, []string{declared}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Render([]byte(tc.input), newBuilder(t), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("%d steps", len(got))
			}
			st := got[0]
			warnings, notes := strings.Join(st.Warnings, "\n"), strings.Join(st.Notes, "\n")
			for _, tag := range []string{declared, undeclared} {
				if w := slices.Contains(tc.warned, tag); w != strings.Contains(warnings, tag) {
					t.Errorf("%s in a warning: %v, want %v; warnings:\n%s", tag, !w, w, warnings)
				}
				if n := slices.Contains(tc.noted, tag); n != strings.Contains(notes, tag) {
					t.Errorf("%s in a note: %v, want %v; notes:\n%s", tag, !n, n, notes)
				}
			}
			var out bytes.Buffer
			if err := Write(&out, got); err != nil {
				t.Fatal(err)
			}
			for _, n := range st.Notes {
				if !strings.Contains(out.String(), "# note: "+n+"\n") {
					t.Errorf("the output does not show the note %q:\n%s", n, out.String())
				}
			}
		})
	}
}
