package examples

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
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
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/build"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/step"
	"github.com/sparkplug-io/sparkplug/templates"
)

// The annotations the e2e runner reads (see doc.go).
const (
	annotationE2E        = "sparkplug.io/e2e"
	annotationSkipReason = "sparkplug.io/e2e-skip-reason"
	annotationRequires   = "sparkplug.io/e2e-requires"
	e2eRun               = "run"
	e2eSkip              = "skip"
)

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

// decodeFile splits a file into its YAML documents and decodes each.
func decodeFile(path string) ([]*document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var docs []*document
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 0; ; i++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		var probe map[string]any
		if err := yaml.Unmarshal(raw, &probe); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(probe) == 0 {
			continue // only comments
		}
		d, err := decodeDocument(raw)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		d.file, d.index = filepath.Base(path), i
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		return nil, errors.New("no YAML documents")
	}
	return docs, nil
}

// decodeDocument decodes a document strictly into the Argo type its kind
// names: droppedFields finds unknown fields by path, also where Argo's own
// JSON decoders (ParallelSteps, ...) would drop them silently, and
// sigs.k8s.io/yaml's strict mode rejects duplicate fields.
func decodeDocument(raw []byte) (*document, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(raw, &tm); err != nil {
		return nil, err
	}
	if tm.APIVersion != wfv1.SchemeGroupVersion.String() {
		return nil, fmt.Errorf("apiVersion %q: examples hold only %s objects", tm.APIVersion, wfv1.SchemeGroupVersion)
	}
	d := &document{raw: raw, kind: tm.Kind}
	switch tm.Kind {
	case workflow.WorkflowKind:
		o := &wfv1.Workflow{}
		d.obj, d.meta, d.spec = o, &o.ObjectMeta, &o.Spec
	case workflow.WorkflowTemplateKind:
		o := &wfv1.WorkflowTemplate{}
		d.obj, d.meta, d.spec = o, &o.ObjectMeta, &o.Spec
	case workflow.CronWorkflowKind:
		o := &wfv1.CronWorkflow{}
		d.obj, d.meta, d.spec = o, &o.ObjectMeta, &o.Spec.WorkflowSpec
	default:
		return nil, fmt.Errorf("kind %q: examples hold only Workflow, WorkflowTemplate and CronWorkflow", tm.Kind)
	}
	// Unknown fields first, by path; then sigs.k8s.io/yaml's strict
	// checks (duplicate fields), which name no path.
	if err := yaml.Unmarshal(raw, d.obj); err != nil {
		return nil, fmt.Errorf("decode %s: %w", tm.Kind, err)
	}
	dropped, err := droppedFields(raw, d.obj)
	if err != nil {
		return nil, err
	}
	if len(dropped) > 0 {
		return nil, fmt.Errorf("decode %s: unknown fields: %s", tm.Kind, strings.Join(dropped, ", "))
	}
	if err := yaml.UnmarshalStrict(raw, d.obj); err != nil {
		return nil, fmt.Errorf("decode %s: %w", tm.Kind, err)
	}
	if d.meta.Name == "" && d.meta.GenerateName == "" {
		return nil, fmt.Errorf("%s has neither metadata.name nor metadata.generateName", tm.Kind)
	}
	return d, nil
}

// droppedFields lists the fields of raw, with a non-empty value, that are
// missing once obj, decoded from raw, is encoded again.
func droppedFields(raw []byte, obj any) ([]string, error) {
	var in, out any
	if err := yaml.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	var dropped []string
	walkDropped("", in, out, &dropped)
	return dropped, nil
}

func walkDropped(path string, in, out any, dropped *[]string) {
	switch in := in.(type) {
	case map[string]any:
		o, _ := out.(map[string]any)
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range in {
				if !yield(k) {
					return
				}
			}
		}) {
			ov, ok := o[k]
			if !ok {
				if !isEmpty(in[k]) {
					*dropped = append(*dropped, path+"."+k)
				}
				continue
			}
			walkDropped(path+"."+k, in[k], ov, dropped)
		}
	case []any:
		o, _ := out.([]any)
		for i, v := range in {
			p := fmt.Sprintf("%s[%d]", path, i)
			if i >= len(o) {
				if !isEmpty(v) {
					*dropped = append(*dropped, p)
				}
				continue
			}
			walkDropped(p, v, o[i], dropped)
		}
	}
}

func isEmpty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case float64:
		return v == 0
	case int64:
		return v == 0
	case string:
		return v == ""
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

func TestExamplesDecodeStrictly(t *testing.T) {
	for _, f := range exampleFiles(t) {
		t.Run(f, func(t *testing.T) {
			if _, err := decodeFile(f); err != nil {
				t.Error(err)
			}
		})
	}
}

// A deliberately broken document must fail the strict decode, or the test
// above proves nothing.
func TestDecodeRejectsBrokenDocuments(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"unknown field", `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: x-}
spec: {entrypoint: a, templates: [{name: a, pluginn: {spark: {}}}]}`, "unknown fields: .spec.templates[0].pluginn"},
		{"duplicate field", `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: x-}
spec: {entrypoint: a, entrypoint: b, templates: [{name: a, suspend: {}}]}`, `key "entrypoint" already set`},
		{"unknown field inside a step's arguments", `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: x-}
spec:
  entrypoint: a
  templates:
    - name: a
      steps: [[{name: b, template: c, arguments: {parameters: [{name: p, valeu: "1"}]}}]]
    - name: c
      suspend: {}`, `.spec.templates[0].steps[0][0].arguments.parameters[0].valeu`},
		{"wrong type", `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: x-}
spec: {entrypoint: a, parallelism: many, templates: [{name: a, suspend: {}}]}`, "parallelism"},
		{"another kind", `
apiVersion: v1
kind: ConfigMap
metadata: {name: x}`, "examples hold only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeDocument([]byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("decode: %v, want an error containing %q", err, tt.want)
			}
		})
	}
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

func TestExamplesE2EAnnotations(t *testing.T) {
	files := exampleFiles(t)
	for _, d := range loadExamples(t) {
		a := d.meta.Annotations
		switch a[annotationE2E] {
		case e2eRun:
			if a[annotationSkipReason] != "" {
				t.Errorf("%s: %s is %s but has %s", d, annotationE2E, e2eRun, annotationSkipReason)
			}
			if d.kind != workflow.WorkflowKind {
				t.Errorf("%s: only a Workflow can be run by e2e; mark it %s with a reason", d, e2eSkip)
			}
		case e2eSkip:
			if strings.TrimSpace(a[annotationSkipReason]) == "" {
				t.Errorf("%s: %s: %s needs %s saying why", d, annotationE2E, e2eSkip, annotationSkipReason)
			}
		default:
			t.Errorf("%s: annotation %s is %q; want %q or %q (with %s)", d, annotationE2E, a[annotationE2E], e2eRun, e2eSkip, annotationSkipReason)
		}
		if req, ok := a[annotationRequires]; ok {
			for _, f := range strings.Split(req, ",") {
				if f = strings.TrimSpace(f); !slices.Contains(files, f) || f == d.file {
					t.Errorf("%s: %s names %q, which is not another example file", d, annotationRequires, f)
				}
			}
		}
	}
}

// call is one way a template with a spark body is reached: from a
// Workflow's entrypoint through steps, DAG tasks and templateRefs, or, when
// no example reaches it, on its own with its inputs' defaults. tmpl is the
// template after Argo's parameter substitution: what the plugin receives.
type call struct {
	// path is the file and how the template was reached, e.g.
	// workflow-template-usage.yaml:main.pi->spark-jobs.spark-submit
	path string
	run  *document // the document that runs as a Workflow
	tmpl wfv1.Template
}

// maxDepth bounds the walk through nested templates.
const maxDepth = 10

// sparkCalls follows every Workflow and CronWorkflow from its entrypoint,
// as Argo would, and returns every spark template it reaches, plus those
// no example reaches. errs are references that do not resolve and
// parameters Argo could not substitute.
func sparkCalls(docs []*document) (calls []call, errs []error) {
	libraries := map[string]*document{}
	for _, d := range docs {
		if d.kind == workflow.WorkflowTemplateKind {
			libraries[d.meta.Name] = d
		}
	}
	reached := map[*wfv1.Template]bool{}

	var visit func(path string, run, owner *document, tmpl *wfv1.Template, args map[string]string, strict bool, globals map[string]string, depth int)
	visit = func(path string, run, owner *document, tmpl *wfv1.Template, args map[string]string, strict bool, globals map[string]string, depth int) {
		if depth > maxDepth {
			errs = append(errs, fmt.Errorf("%s: templates nest deeper than %d (a loop?)", path, maxDepth))
			return
		}
		reached[tmpl] = true
		inputs, err := resolveInputs(tmpl, args, strict)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			return
		}
		scope := merged(globals, inputs)
		sub, err := step.SubstituteAll(tmpl, scope)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			return
		}
		switch _, ok, err := spec.BodyOf(&sub); {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
		case ok:
			calls = append(calls, call{path: path, run: run, tmpl: sub})
		}
		for _, cs := range childSteps(&sub) {
			stepPath := path + "." + cs.name
			childOwner, child, err := resolveTemplate(owner, cs, libraries)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", stepPath, err))
				continue
			}
			stepArgs := map[string]string{}
			for _, p := range cs.args.Parameters {
				if p.Value == nil {
					errs = append(errs, fmt.Errorf("%s: argument %s has no value", stepPath, p.Name))
					continue
				}
				stepArgs[p.Name] = p.Value.String()
			}
			target := child.Name
			if childOwner != owner {
				target = childOwner.meta.Name + "." + child.Name
			}
			visit(stepPath+"->"+target, run, childOwner, child, stepArgs, true, globals, depth+1)
		}
	}

	for _, d := range docs {
		if d.kind == workflow.WorkflowTemplateKind {
			continue
		}
		globals := map[string]string{}
		args := map[string]string{}
		for _, p := range d.spec.Arguments.Parameters {
			if p.Value == nil {
				errs = append(errs, fmt.Errorf("%s: spec.arguments.parameters %s has no value", d, p.Name))
				continue
			}
			globals["workflow.parameters."+p.Name] = p.Value.String()
			args[p.Name] = p.Value.String()
		}
		entry := templateNamed(d.spec, d.spec.Entrypoint)
		if entry == nil {
			errs = append(errs, fmt.Errorf("%s: entrypoint %q names no template", d, d.spec.Entrypoint))
			continue
		}
		// The workflow's arguments are its entrypoint's inputs; those the
		// entrypoint does not declare are only global parameters.
		visit(d.label()+":"+entry.Name, d, d, entry, args, false, globals, 0)
	}

	// Spark templates no Workflow reaches run with their defaults.
	for _, d := range docs {
		for i := range d.spec.Templates {
			tmpl := &d.spec.Templates[i]
			if _, ok, _ := spec.BodyOf(tmpl); !ok || reached[tmpl] {
				continue
			}
			if d.kind == workflow.WorkflowTemplateKind {
				errs = append(errs, fmt.Errorf("%s: template %s is called by no example Workflow; call it from one (its calls are what the tests check)", d, tmpl.Name))
				continue
			}
			visit(d.label()+":"+tmpl.Name+"(unreached;defaults)", d, d, tmpl, nil, true, nil, 0)
		}
	}
	return calls, errs
}

func merged(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// resolveInputs gives every input parameter its value as Argo does
// (ProcessArgs in workflow/common): the caller's argument, else value,
// else default; a parameter with none is an error. With strict, an argument
// the template does not declare is an error too (Argo ignores it; in an
// example it is a typo). The result is keyed inputs.parameters.<name>.
func resolveInputs(tmpl *wfv1.Template, args map[string]string, strict bool) (map[string]string, error) {
	out := map[string]string{}
	declared := map[string]bool{}
	var errs []error
	for _, p := range tmpl.Inputs.Parameters {
		declared[p.Name] = true
		v, ok := args[p.Name]
		switch {
		case ok:
		case p.Value != nil:
			v = p.Value.String()
		case p.Default != nil:
			v = p.Default.String()
		default:
			errs = append(errs, fmt.Errorf("inputs.parameters.%s was not supplied", p.Name))
			continue
		}
		out["inputs.parameters."+p.Name] = v
	}
	if strict {
		for _, name := range slices.Sorted(func(yield func(string) bool) {
			for k := range args {
				if !yield(k) {
					return
				}
			}
		}) {
			if !declared[name] {
				errs = append(errs, fmt.Errorf("argument %s: template %s has no input parameter %s", name, tmpl.Name, name))
			}
		}
	}
	return out, errors.Join(errs...)
}

// childStep is a step or a DAG task: what names the next template.
type childStep struct {
	name     string
	template string
	ref      *wfv1.TemplateRef
	args     wfv1.Arguments
}

func childSteps(tmpl *wfv1.Template) []childStep {
	var out []childStep
	for _, group := range tmpl.Steps {
		for _, s := range group.Steps {
			out = append(out, childStep{s.Name, s.Template, s.TemplateRef, s.Arguments})
		}
	}
	if tmpl.DAG != nil {
		for _, task := range tmpl.DAG.Tasks {
			out = append(out, childStep{task.Name, task.Template, task.TemplateRef, task.Arguments})
		}
	}
	return out
}

// resolveTemplate finds the template a step names: in the same object, or
// through templateRef in a WorkflowTemplate of examples/.
func resolveTemplate(owner *document, s childStep, libraries map[string]*document) (*document, *wfv1.Template, error) {
	switch {
	case s.ref != nil:
		if s.ref.ClusterScope {
			return nil, nil, fmt.Errorf("templateRef %s/%s: examples ship no ClusterWorkflowTemplate", s.ref.Name, s.ref.Template)
		}
		lib, ok := libraries[s.ref.Name]
		if !ok {
			return nil, nil, fmt.Errorf("templateRef %s: no WorkflowTemplate of that name in examples/", s.ref.Name)
		}
		t := templateNamed(lib.spec, s.ref.Template)
		if t == nil {
			return nil, nil, fmt.Errorf("templateRef %s/%s: WorkflowTemplate %s (%s) has no template %s", s.ref.Name, s.ref.Template, s.ref.Name, lib.file, s.ref.Template)
		}
		return lib, t, nil
	case s.template != "":
		t := templateNamed(owner.spec, s.template)
		if t == nil {
			return nil, nil, fmt.Errorf("template %q: %s has no template of that name", s.template, owner)
		}
		return owner, t, nil
	}
	return nil, nil, errors.New("names neither template nor templateRef")
}

func templateNamed(s *wfv1.WorkflowSpec, name string) *wfv1.Template {
	for i := range s.Templates {
		if s.Templates[i].Name == name {
			return &s.Templates[i]
		}
	}
	return nil
}

func TestExamplesTemplatesResolve(t *testing.T) {
	calls, errs := sparkCalls(loadExamples(t))
	for _, err := range errs {
		t.Error(err)
	}
	if len(calls) == 0 {
		t.Error("no example reaches a spark template")
	}
}

// rendered is a spark call's body, parsed, and the objects it builds.
type rendered struct {
	call call
	body *spec.SparkApplicationSpec
	objs *build.Objects
}

// render parses a call's spark body and builds the objects of its first
// attempt as the plugin does (package step). The node id is
// <workflow>-<fnv32a of the path>, shaped like Argo's.
func render(b *build.Builder, c call) (*rendered, error) {
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

func newBuilder(t *testing.T) *build.Builder {
	t.Helper()
	b, err := build.New(templates.FS)
	if err != nil {
		t.Fatalf("build.New(templates.FS): %v", err)
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

// mustDecode decodes inline YAML documents for the tests of the harness.
func mustDecode(t *testing.T, docs ...string) []*document {
	t.Helper()
	var out []*document
	for i, doc := range docs {
		d, err := decodeDocument([]byte(doc))
		if err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		d.file = fmt.Sprintf("doc%d.yaml", i)
		out = append(out, d)
	}
	return out
}

// sparkStep is a Workflow whose entrypoint calls template `job` of
// WorkflowTemplate `lib` with the given step arguments.
func sparkStep(arguments string) string {
	return `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: w-}
spec:
  entrypoint: main
  templates:
    - name: main
      steps: [[{name: s, templateRef: {name: lib, template: job}, arguments: {parameters: [` + arguments + `]}}]]`
}

// library is WorkflowTemplate `lib` with template `job`: inputs and body as
// given.
func library(inputs, body string) string {
	return `
apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: lib}
spec:
  templates:
    - name: job
      inputs: {parameters: [` + inputs + `]}
      plugin:
        spark: ` + body
}

const piBody = `{type: Scala, mode: cluster, image: spark:3.5.3, mainClass: "{{inputs.parameters.c}}", mainApplicationFile: "local:///x.jar", driver: {serviceAccount: spark}}`

// The walk must report what Argo would refuse, or the examples' passing it
// proves nothing.
func TestSparkCallsReportBrokenReferences(t *testing.T) {
	tests := []struct {
		name string
		docs []string
		want string
	}{
		{"no such WorkflowTemplate", []string{sparkStep(`{name: c, value: a.B}`)}, "no WorkflowTemplate of that name"},
		{"no such template", []string{sparkStep(`{name: c, value: a.B}`), strings.Replace(library(`{name: c}`, piBody), "name: job", "name: other", 1)}, "has no template job"},
		{"required input not supplied", []string{sparkStep(``), library(`{name: c}`, piBody)}, "inputs.parameters.c was not supplied"},
		{"argument the template does not declare", []string{sparkStep(`{name: c, value: a.B}, {name: cc, value: x}`), library(`{name: c}`, piBody)}, "has no input parameter cc"},
		{"placeholder of an undeclared input", []string{sparkStep(``), library(``, piBody)}, "failed to resolve {{inputs.parameters.c}}"},
		{"library template no Workflow calls", []string{library(`{name: c, default: a.B}`, piBody)}, "called by no example Workflow"},
		{"entrypoint names no template", []string{strings.Replace(sparkStep(``), "entrypoint: main", "entrypoint: mian", 1)}, `entrypoint "mian" names no template`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := sparkCalls(mustDecode(t, tt.docs...))
			if err := errors.Join(errs...); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("errors: %v; want one containing %q", err, tt.want)
			}
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
