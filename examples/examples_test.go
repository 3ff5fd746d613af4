package examples

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // CronWorkflow time zones, whatever the machine has

	"github.com/argoproj/argo-workflows/v3/pkg/apis/workflow"
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/step"
	"github.com/sparkplug-io/sparkplug/templates"
)

// e2ePlanFile says how the e2e test treats each example (see doc.go).
const (
	e2ePlanFile = "../e2e/testdata/examples-plan.yaml"
	e2eRun      = "run"
	e2eSkip     = "skip"
)

// e2ePlanEntry is one example's entry in e2ePlanFile.
type e2ePlanEntry struct {
	E2E      string   `json:"e2e"`
	Reason   string   `json:"reason,omitempty"`
	Requires []string `json:"requires,omitempty"`
}

// testNamespace is where the tests build and create the examples' objects.
const testNamespace = "examples"

// document is one YAML document of an example file, decoded into Argo's
// types.
type document struct {
	file  string // base name, e.g. spark-pi.yaml
	index int    // position of the document in its file
	raw   []byte // the document as written
	kind  string
	meta  *metav1.ObjectMeta
	// spec is the WorkflowSpec: a Workflow's or WorkflowTemplate's spec, a
	// CronWorkflow's workflowSpec.
	spec *wfv1.WorkflowSpec
	obj  any
}

func (d *document) String() string {
	name := d.meta.Name
	if name == "" {
		name = d.meta.GenerateName
	}
	return fmt.Sprintf("%s#%d %s/%s", d.file, d.index, d.kind, name)
}

// label is the file, and the document's index when it is not the first.
func (d *document) label() string {
	if d.index == 0 {
		return d.file
	}
	return fmt.Sprintf("%s#%d", d.file, d.index)
}

// runName is the name of a Workflow the document runs as.
func (d *document) runName() string {
	switch {
	case d.kind == "CronWorkflow":
		return d.meta.Name + "-1767234600" // <cron>-<scheduled unix time>, as Argo names them
	case d.meta.Name != "":
		return d.meta.Name
	default:
		return d.meta.GenerateName + "x7k2p"
	}
}

// exampleFiles are the YAML files of examples/, sorted.
func exampleFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no examples found")
	}
	slices.Sort(files)
	return files
}

// loadExamples decodes every example file; TestExamplesDecodeStrictly
// reports what does not decode, the other tests stop at it.
func loadExamples(t *testing.T) []*document {
	t.Helper()
	var docs []*document
	for _, f := range exampleFiles(t) {
		d, err := decodeFile(f)
		if err != nil {
			t.Fatalf("%s: %v (see TestExamplesDecodeStrictly)", f, err)
		}
		docs = append(docs, d...)
	}
	return docs
}

func TestExamplesStartWithAComment(t *testing.T) {
	for _, f := range exampleFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var header []string
		for _, line := range strings.Split(string(data), "\n") {
			if !strings.HasPrefix(line, "#") {
				break
			}
			header = append(header, line)
		}
		text := strings.Join(header, "\n")
		switch {
		case len(header) < 3:
			t.Errorf("%s: start with a comment of a few lines: what the example shows and how to run it", f)
		case !strings.Contains(text, "# Run"):
			t.Errorf("%s: the opening comment does not say how to run it (a \"# Run:\" paragraph)", f)
		}
	}
}

// TestExamplesE2EPlan: every example has its entry in the e2e test's
// plan, and every entry is an example: run (only a Workflow), or skip with
// a reason; requires names other example files.
func TestExamplesE2EPlan(t *testing.T) {
	b, err := os.ReadFile(e2ePlanFile)
	if err != nil {
		t.Fatal(err)
	}
	var plan map[string]e2ePlanEntry
	if err := yaml.UnmarshalStrict(b, &plan); err != nil {
		t.Fatalf("%s: %v", e2ePlanFile, err)
	}
	files := exampleFiles(t)
	for f := range plan {
		if !slices.Contains(files, f) {
			t.Errorf("%s: %s is not an example file", e2ePlanFile, f)
		}
	}
	for _, d := range loadExamples(t) {
		e, ok := plan[d.file]
		if !ok {
			t.Errorf("%s: no entry in %s", d, e2ePlanFile)
			continue
		}
		switch e.E2E {
		case e2eRun:
			if e.Reason != "" {
				t.Errorf("%s: %s but with a reason", d, e2eRun)
			}
			if d.kind != workflow.WorkflowKind {
				t.Errorf("%s: only a Workflow can be run by e2e; mark it %s with a reason", d, e2eSkip)
			}
		case e2eSkip:
			if strings.TrimSpace(e.Reason) == "" {
				t.Errorf("%s: %s needs a reason saying why", d, e2eSkip)
			}
		default:
			t.Errorf("%s: e2e is %q; want %q or %q (with a reason)", d, e.E2E, e2eRun, e2eSkip)
		}
		for _, f := range e.Requires {
			if !slices.Contains(files, f) || f == d.file {
				t.Errorf("%s: requires %q, which is not another example file", d, f)
			}
		}
	}
}

// TestExamplesCarryNothingTestOnly: users copy the examples as they are,
// so none carries an annotation or label of sparkplug's own tests (their
// plan is in e2ePlanFile).
func TestExamplesCarryNothingTestOnly(t *testing.T) {
	for _, d := range loadExamples(t) {
		for _, m := range []map[string]string{d.meta.Annotations, d.meta.Labels} {
			for k := range m {
				if strings.HasPrefix(k, "sparkplug.io/e2e") || strings.Contains(k, "test") {
					t.Errorf("%s: %s is for sparkplug's tests, not for users' copies", d, k)
				}
			}
		}
		if bytes.Contains(d.raw, []byte("sparkplug.io/e2e")) {
			t.Errorf("%s names sparkplug.io/e2e, which is for sparkplug's tests", d)
		}
	}
}

// rendered is a spark call's body, parsed, and the objects it builds.
type rendered struct {
	call call
	body *spec.SparkApplicationSpec
	objs *objects.Set
}

// render parses a call's spark body and builds the objects of its first
// attempt as the plugin does (package step). The node id is
// <workflow>-<fnv32a of the path>, shaped like Argo's.
func render(b *objects.Builder, c call) (*rendered, error) {
	st, _, err := step.Parse(&c.tmpl, spec.PluginDefaults{})
	if err != nil {
		return nil, err
	}
	name := c.run.runName()
	h := fnv.New32a()
	h.Write([]byte(c.path))
	wf := spark.WorkflowRef{Name: name, Namespace: testNamespace, UID: "5b0c7a6e-7f0e-4f7b-9c33-0d1e2f3a4b5c"}
	objs, err := st.Build(b, wf, fmt.Sprintf("%s-%d", name, h.Sum32()), 1)
	if err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	return &rendered{call: c, body: st.Body, objs: objs}, nil
}

func newBuilder(t *testing.T) *objects.Builder {
	t.Helper()
	b, err := objects.New(templates.FS)
	if err != nil {
		t.Fatalf("objects.New(templates.FS): %v", err)
	}
	return b
}

// The path a real step takes: Argo substitutes the parameters, the plugin
// takes plugin.spark, spec.Parse decodes, defaults and validates it, and
// the builder makes the driver pod, ConfigMap and Service.
func TestExamplesSparkBodiesParseAndBuild(t *testing.T) {
	calls, _ := sparkCalls(loadExamples(t))
	b := newBuilder(t)
	for _, c := range calls {
		t.Run(c.path, func(t *testing.T) {
			r, err := render(b, c)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("driver pod %s", r.objs.Driver.Name)
		})
	}
}

// An invalid body must fail the render, as it fails the step.
func TestRenderRejectsAnInvalidBody(t *testing.T) {
	body := strings.Replace(piBody, "driver: {", "driver: {memory: 12zz, ", 1)
	calls, errs := sparkCalls(mustDecode(t, sparkStep(`{name: c, value: a.B}`), library(`{name: c}`, body)))
	if len(errs) > 0 || len(calls) != 1 {
		t.Fatalf("calls %d, errors %v", len(calls), errs)
	}
	if _, err := render(newBuilder(t), calls[0]); err == nil || !strings.Contains(err.Error(), "spark.driver.memory") {
		t.Errorf("render: %v; want the invalid spark.driver.memory", err)
	}
}

// A parameter in an integer field reaches the plugin as a string ("3"),
// since Argo substitutes into the template's JSON text; the plugin accepts
// it, in the typed field as in sparkConf.
func TestParameterInAnIntegerField(t *testing.T) {
	b := newBuilder(t)
	for _, tt := range []struct{ name, body string }{
		{"executor.instances", strings.Replace(piBody, "driver: {", `executor: {instances: "{{inputs.parameters.executors}}"}, driver: {`, 1)},
		{"sparkConf spark.executor.instances", strings.Replace(piBody, "driver: {", `sparkConf: {spark.executor.instances: "{{inputs.parameters.executors}}"}, driver: {`, 1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls, errs := sparkCalls(mustDecode(t, sparkStep(`{name: c, value: a.B}, {name: executors, value: "3"}`), library(`{name: c}, {name: executors}`, tt.body)))
			if len(errs) > 0 || len(calls) != 1 {
				t.Fatalf("calls %d, errors %v", len(calls), errs)
			}
			r, err := render(b, calls[0])
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if got := r.objs.ConfigMap.Data["spark.properties"]; !strings.Contains(got, "spark.executor.instances=3") {
				t.Errorf("spark.properties has no spark.executor.instances=3:\n%s", got)
			}
		})
	}
}

func TestCronWorkflowsSchedules(t *testing.T) {
	for _, d := range loadExamples(t) {
		cron, ok := d.obj.(*wfv1.CronWorkflow)
		if !ok {
			continue
		}
		s := cron.Spec
		schedules := s.Schedules
		if s.Schedule != "" {
			t.Errorf("%s: spec.schedule is deprecated since Argo 3.6; use schedules", d)
			schedules = append(schedules, s.Schedule)
		}
		if len(schedules) == 0 {
			t.Errorf("%s: no schedules", d)
		}
		for _, sch := range schedules {
			if f := strings.Fields(sch); len(f) != 5 && !strings.HasPrefix(sch, "@") {
				t.Errorf("%s: schedule %q: want 5 fields (minute hour day month weekday) or a @descriptor", d, sch)
			}
		}
		if s.Timezone != "" {
			if _, err := time.LoadLocation(s.Timezone); err != nil {
				t.Errorf("%s: timezone: %v", d, err)
			}
		}
		if p := s.ConcurrencyPolicy; p != "" && !slices.Contains([]wfv1.ConcurrencyPolicy{wfv1.AllowConcurrent, wfv1.ForbidConcurrent, wfv1.ReplaceConcurrent}, p) {
			t.Errorf("%s: concurrencyPolicy %q: want Allow, Forbid or Replace", d, p)
		}
	}
}

// readme is the repository's README.md.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The README's Spark step is the spark-pi example, so what users read is
// what the tests run.
func TestReadmeSparkPiIsTheExample(t *testing.T) {
	text := readme(t)
	start := strings.Index(text, "```yaml\n")
	if start < 0 {
		t.Fatal("README.md has no yaml block")
	}
	block := text[start+len("```yaml\n"):]
	block = block[:strings.Index(block, "```")]
	docs, err := decodeDocument([]byte(block))
	if err != nil {
		t.Fatalf("README.md's first yaml block: %v", err)
	}
	file, err := decodeFile("spark-pi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(docs.spec, file[0].spec); diff != "" {
		t.Errorf("README.md's SparkPi and examples/spark-pi.yaml differ in spec (-README +example):\n%s", diff)
	}
}

// The README's Examples section lists every example file, and only those.
func TestReadmeListsEveryExample(t *testing.T) {
	text := readme(t)
	start := strings.Index(text, "\n## Examples\n")
	if start < 0 {
		t.Fatal(`README.md has no "## Examples" section`)
	}
	section := text[start+1:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	files := exampleFiles(t)
	for _, f := range files {
		if !strings.Contains(section, "examples/"+f) {
			t.Errorf("README.md's Examples section does not list examples/%s", f)
		}
	}
	for _, m := range regexp.MustCompile(`examples/([A-Za-z0-9._-]+\.yaml)`).FindAllStringSubmatch(section, -1) {
		if !slices.Contains(files, m[1]) {
			t.Errorf("README.md's Examples section lists examples/%s, which does not exist", m[1])
		}
	}
}
