package examples

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	_ "time/tzdata" // CronWorkflow time zones, whatever the machine has

	"github.com/argoproj/argo-workflows/v3/pkg/apis/workflow"
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/plugin/step"
)

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
		switch _, ok, err := step.BodyOf(&sub); {
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
			if _, ok, _ := step.BodyOf(tmpl); !ok || reached[tmpl] {
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
