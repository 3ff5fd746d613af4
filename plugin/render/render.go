package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/convert"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/policy"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
	"github.com/sparkplug-io/sparkplug/plugin/step"
	"github.com/sparkplug-io/sparkplug/plugin/submit"
)

// Placeholders for what only a cluster knows.
const (
	// PlaceholderUID is the workflow uid when Options.UID is empty.
	PlaceholderUID = "00000000-0000-0000-0000-000000000000"
	// PlaceholderDriverUID is the uid the ConfigMap's and Services' owner
	// reference gives the driver pod, which the API server assigns.
	PlaceholderDriverUID = "00000000-0000-0000-0000-00000000d71e"
	// PlaceholderConfKey stands for the random part of the driver
	// ConfigMap's name (objects.Run.ConfKey) that each launch draws.
	PlaceholderConfKey = "00000000"
	// PlaceholderNamespace is the namespace when neither Options nor the
	// document give one.
	PlaceholderNamespace = "default"
	// placeholderWorkflow names the workflow of a body or template given
	// without one.
	placeholderWorkflow = "render"
	// generatedSuffix stands for the five characters Argo appends to a
	// generateName.
	generatedSuffix = "xxxxx"
)

// Options are the run a step is rendered for. Empty fields take a
// placeholder: the workflow's name is Workflow, else the document's
// metadata.name, else its generateName followed by xxxxx, else "render";
// the namespace is Namespace, else the document's, else "default"; the uid
// PlaceholderUID; the node id NodeID, else <workflow>-<fnv32a of the
// template name>, the shape of Argo's node ids; the attempt 1.
type Options struct {
	Workflow  string
	Namespace string
	UID       string
	NodeID    string
	Attempt   int
	// StartedAt is the Workflow's status.startedAt (RFC 3339), which the
	// plugin hashes into a run's names and puts on its objects
	// (objects.Run.Incarnation); empty renders names without it, as
	// releases before node identity made them.
	StartedAt string
	// Parameters set inputs.parameters.<name> and
	// workflow.parameters.<name>, over the values and defaults the file
	// gives.
	Parameters map[string]string
	// Defaults are the plugin's flags a step is rendered under: the
	// launcher of bodies that name none (--launcher; empty is native),
	// --ingress-url-format, ...
	Defaults spec.PluginDefaults
	// Submit are the spark-submit launcher's settings, as serve's flags
	// give them: SparkHome (PlaceholderSparkHome when empty) and
	// RequestTimeout. What only the plugin's pod knows takes placeholders
	// when empty: the Client (PlaceholderClient) and the inherited
	// environment (PlaceholderEnv).
	Submit submit.Options
	// Policy is the plugin's policy a step is checked against, as serve
	// checks it; a refusal is the step's Err.
	Policy policy.Policy
}

// Step is one spark step of the input and what the plugin would do with it.
type Step struct {
	// Template is the Argo template's name; empty for a bare body or a
	// snippet without one.
	Template string
	// Run is the run the objects are built for.
	Run objects.Run
	// Objects are the objects the plugin would create, owned as it owns
	// them once the driver exists; nil when Err is set.
	Objects *objects.Set
	// Submit is set when the step's launcher is spark-submit: the run that
	// creates the driver pod (from its driver pod template file and its
	// conf), as the plugin would exec it, secrets included. Objects.Driver
	// is then what the native launcher would have made, which the driver
	// pod template is built from; the plugin creates only the companions.
	Submit *submit.Command
	// Err is the message the plugin would put on the node.
	Err error
	// From says what the step was made from when the input was no Argo
	// object: a SparkApplication or ScheduledSparkApplication, converted.
	From string
	// Warnings are what the preview could not show as Argo would run it:
	// parameters left unresolved, what convert reported of the input.
	Warnings []string
	// Notes say what the preview shows as written though Argo will
	// resolve it: input parameters the template's callers give.
	Notes []string

	// Line and Column are where in the input Err's first problem is: the
	// field's key (its nearest enclosing field the input has); 0 when
	// unknown, or for an error of no field.
	Line, Column int

	tmpl       wfv1.Template // after substitution
	parameters []string      // the parameters the template declares or names
	// bodyPath is where the spark body is in its document, as a field
	// path (spec.templates[2].plugin.spark); doc is that document.
	bodyPath string
	doc      *convert.Document
}

// Render finds every spark step in input and builds its objects with b. The
// error is about the input itself (not YAML, no spark step); a step's own
// problem is in its Err.
func Render(input []byte, b *objects.Builder, o Options) ([]Step, error) {
	docs, err := documents(input)
	if err != nil {
		return nil, err
	}
	var steps []Step
	for i, d := range docs {
		found, err := stepsOf(d.json, o)
		if err != nil {
			if len(docs) > 1 {
				return nil, fmt.Errorf("document %d: %w", i+1, err)
			}
			return nil, err
		}
		for j := range found {
			found[j].doc = d.yaml
		}
		steps = append(steps, found...)
	}
	if len(steps) == 0 {
		return nil, errors.New("no spark step found: give a spark body, a `plugin: {spark: ...}` template, a Workflow, WorkflowTemplate or CronWorkflow with one, or a SparkApplication or ScheduledSparkApplication (a step called through templateRef is rendered from its WorkflowTemplate's file)")
	}
	for i := range steps {
		buildStep(b, &steps[i], o)
		locate(&steps[i])
	}
	return steps, nil
}

// stepsOf reads one document.
func stepsOf(raw []byte, o Options) ([]Step, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("want a YAML object, got %s", kindOf(raw))
	}
	var kind struct {
		Kind string `json:"kind"`
	}
	_ = json.Unmarshal(raw, &kind)
	_, hasPlugin := probe["plugin"]
	_, hasSpark := probe[spec.PluginName]

	switch {
	case kind.Kind != "":
		return workflowSteps(kind.Kind, raw, o)
	case hasPlugin:
		var t wfv1.Template
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("decode the template: %w", err)
		}
		if _, ok := sparkBody(&t); !ok {
			return nil, errors.New("the template's plugin has no spark body")
		}
		return []Step{at(prepare(t, metav1.ObjectMeta{}, nil, nil, o), "plugin."+spec.PluginName)}, nil
	case hasSpark && len(probe) == 1:
		return []Step{at(prepare(templateFor(probe[spec.PluginName]), metav1.ObjectMeta{}, nil, nil, o), spec.PluginName)}, nil
	default:
		return []Step{prepare(templateFor(raw), metav1.ObjectMeta{}, nil, nil, o)}, nil
	}
}

// templateFor wraps a bare body in the template Argo would send for it.
func templateFor(body json.RawMessage) wfv1.Template {
	value, _ := json.Marshal(map[string]json.RawMessage{spec.PluginName: body})
	return wfv1.Template{Plugin: &wfv1.Plugin{Object: wfv1.Object{Value: value}}}
}

// workflowSteps reads a Workflow, a WorkflowTemplate, a
// ClusterWorkflowTemplate or a CronWorkflow: every template with a spark
// body, in order.
func workflowSteps(kind string, raw []byte, o Options) ([]Step, error) {
	var meta metav1.ObjectMeta
	var ws *wfv1.WorkflowSpec
	templates := "spec.templates"
	switch kind {
	case "Workflow":
		var w wfv1.Workflow
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, fmt.Errorf("decode the Workflow: %w", err)
		}
		meta, ws = w.ObjectMeta, &w.Spec
	case "WorkflowTemplate":
		var w wfv1.WorkflowTemplate
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, fmt.Errorf("decode the WorkflowTemplate: %w", err)
		}
		meta, ws = w.ObjectMeta, &w.Spec
	case "ClusterWorkflowTemplate":
		var w wfv1.ClusterWorkflowTemplate
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, fmt.Errorf("decode the ClusterWorkflowTemplate: %w", err)
		}
		meta, ws = w.ObjectMeta, &w.Spec
	case "CronWorkflow":
		var w wfv1.CronWorkflow
		if err := json.Unmarshal(raw, &w); err != nil {
			return nil, fmt.Errorf("decode the CronWorkflow: %w", err)
		}
		meta, ws, templates = w.ObjectMeta, &w.Spec.WorkflowSpec, "spec.workflowSpec.templates"
	case convert.KindSparkApplication, convert.KindScheduledSparkApplication:
		return operatorSteps(raw, o)
	default:
		return nil, fmt.Errorf("kind %s: want a Workflow, WorkflowTemplate, ClusterWorkflowTemplate, CronWorkflow, SparkApplication or ScheduledSparkApplication, or no kind for a spark body or template", kind)
	}
	globals := map[string]string{}
	for _, p := range ws.Arguments.Parameters {
		if p.Value != nil {
			globals["workflow.parameters."+p.Name] = p.Value.String()
		}
	}
	var steps []Step
	for i, t := range ws.Templates {
		if _, ok := sparkBody(&t); ok {
			st := prepare(t, meta, globals, givenInputs(kind, ws, t), o)
			steps = append(steps, at(st, fmt.Sprintf("%s[%d].plugin.%s", templates, i, spec.PluginName)))
		}
	}
	return steps, nil
}

// givenInputs are the input parameters of template t, declared without a
// value or default, that its callers give, each with who gives it: in a
// WorkflowTemplate or ClusterWorkflowTemplate every one (the template is
// its callers' to call, through templateRef, and Argo refuses a call
// without them); in a Workflow or CronWorkflow those that every step and
// DAG task calling t passes, and, for the entrypoint, the workflow's
// arguments. Argo resolves them before the step runs: a preview shows
// them as written, and that is no reason for a warning.
func givenInputs(kind string, ws *wfv1.WorkflowSpec, t wfv1.Template) map[string]string {
	var open []string
	for _, p := range t.Inputs.Parameters {
		if p.Value == nil && p.Default == nil {
			open = append(open, p.Name)
		}
	}
	if len(open) == 0 {
		return nil
	}
	given := map[string]string{}
	if kind == "WorkflowTemplate" || kind == "ClusterWorkflowTemplate" {
		for _, n := range open {
			given[n] = "the callers of the " + kind
		}
		return given
	}
	// Each caller: its name and the parameters it passes.
	type call struct {
		name   string
		passed []wfv1.Parameter
	}
	var calls []call
	for _, c := range ws.Templates {
		if c.DAG != nil {
			for _, task := range c.DAG.Tasks {
				if task.Template == t.Name && task.TemplateRef == nil {
					calls = append(calls, call{"task " + task.Name, task.Arguments.Parameters})
				}
			}
		}
		for _, group := range c.Steps {
			for _, st := range group.Steps {
				if st.Template == t.Name && st.TemplateRef == nil {
					calls = append(calls, call{"step " + st.Name, st.Arguments.Parameters})
				}
			}
		}
	}
	if ws.Entrypoint == t.Name {
		calls = append(calls, call{"the workflow's arguments", ws.Arguments.Parameters})
	}
	if len(calls) == 0 {
		return nil
	}
	for _, n := range open {
		var by []string
		for _, c := range calls {
			if !slices.ContainsFunc(c.passed, func(p wfv1.Parameter) bool { return p.Name == n }) {
				by = nil
				break
			}
			by = append(by, c.name)
		}
		if by != nil {
			given[n] = strings.Join(by, ", ")
		}
	}
	return given
}

// prepare substitutes the template's parameters and names its run.
func prepare(t wfv1.Template, meta metav1.ObjectMeta, globals, given map[string]string, o Options) Step {
	wf := spark.WorkflowRef{Name: o.Workflow, Namespace: o.Namespace, UID: o.UID}
	if wf.Name == "" {
		switch {
		case meta.Name != "":
			wf.Name = meta.Name
		case meta.GenerateName != "":
			wf.Name = meta.GenerateName + generatedSuffix
		default:
			wf.Name = placeholderWorkflow
		}
	}
	if wf.Namespace == "" {
		wf.Namespace = meta.Namespace
	}
	if wf.Namespace == "" {
		wf.Namespace = PlaceholderNamespace
	}
	if wf.UID == "" {
		wf.UID = PlaceholderUID
	}
	node := o.NodeID
	if node == "" {
		h := fnv.New32a()
		h.Write([]byte(t.Name))
		node = wf.Name + "-" + strconv.FormatUint(uint64(h.Sum32()), 10)
	}
	st := Step{Template: t.Name, Run: objects.Run{Workflow: wf, NodeID: node, Attempt: max(o.Attempt, 1), Incarnation: o.StartedAt, ConfKey: PlaceholderConfKey}}

	vars := map[string]string{
		"workflow.name":      wf.Name,
		"workflow.namespace": wf.Namespace,
		"workflow.uid":       wf.UID,
	}
	for k, v := range globals {
		vars[k] = v
	}
	for _, p := range t.Inputs.Parameters {
		switch {
		case p.Value != nil:
			vars["inputs.parameters."+p.Name] = p.Value.String()
		case p.Default != nil:
			vars["inputs.parameters."+p.Name] = p.Default.String()
		}
	}
	for k, v := range o.Parameters {
		vars["inputs.parameters."+k] = v
		vars["workflow.parameters."+k] = v
	}
	var declared []string
	for _, p := range t.Inputs.Parameters {
		declared = append(declared, p.Name)
	}
	raw, _ := json.Marshal(t)
	st.parameters = parameterNames(raw, declared, globals)
	// A preview shows the tags it cannot resolve as they are.
	sub, unresolved, err := step.Substitute(&t, vars)
	if err != nil {
		st.Err = err
		return st
	}
	// Inputs the callers give are Argo's to resolve, not a failure.
	unresolved = slices.DeleteFunc(unresolved, func(tag string) bool {
		name, ok := strings.CutPrefix(strings.TrimSpace(tag[2:len(tag)-2]), "inputs.parameters.")
		by, given := given[name]
		if ok && given {
			st.Notes = append(st.Notes, fmt.Sprintf("%s is given by %s; shown as written (-p %s=VALUE shows a value)", tag, by, name))
		}
		return ok && given
	})
	if len(unresolved) > 0 {
		st.Warnings = append(st.Warnings, unresolvedWarning(unresolved))
	}
	slices.Sort(st.Notes)
	st.Notes = slices.Compact(st.Notes)
	st.tmpl = sub
	return st
}

// buildStep does what the plugin does with a step's template (package
// step: parse the body, key the template, build the objects), makes the
// spark-submit run of a step with that launcher, and, once the driver
// exists, hands the others to it. Its errors are the plugin's messages for
// the node.
func buildStep(b *objects.Builder, st *Step, o Options) {
	if st.Err != nil {
		return
	}
	ps, _, err := step.Parse(&st.tmpl, o.Defaults)
	if err != nil {
		st.Err = err
		return
	}
	st.Run.TemplateKey = ps.Key
	// A step queued with Kueue by its label shows its Workload (the
	// plugin's --kueue-queue default is not known here).
	ps.SetKueueQueue("")
	st.Run.KueueQueue = ps.KueueQueue
	objs, err := b.Build(ps.Body, st.Run)
	if err != nil {
		st.Err = errors.New(state.SubmissionFailed("build driver objects: " + err.Error()).Message())
		return
	}
	if err := policy.CheckPriorityClass(o.Policy, ps.KueueQueue, st.tmpl.Metadata.Labels); err != nil {
		st.Err = err
		return
	}
	if err := policy.Check(o.Policy, ps.Body, objs); err != nil {
		st.Err = err
		return
	}
	if ps.Body.LauncherFor(o.Defaults.Launcher) == spec.LauncherSparkSubmit {
		cmd, err := submitCommand(o.Submit, ps.Body, st.Run, objs)
		if err != nil {
			st.Err = errors.New(state.SubmissionFailed(err.Error()).Message())
			return
		}
		st.Submit = &cmd
	}
	driver := objs.Driver.DeepCopy()
	driver.UID = types.UID(PlaceholderDriverUID)
	objects.OwnedBy(objs, driver)
	st.Objects = objs
}

// sparkBody is the spark body of a template; a malformed plugin value is
// no spark step.
func sparkBody(t *wfv1.Template) (json.RawMessage, bool) {
	raw, ok, err := step.BodyOf(t)
	return raw, ok && err == nil
}

func kindOf(raw []byte) string {
	switch t := bytes.TrimSpace(raw); {
	case len(t) > 0 && t[0] == '[':
		return "a list"
	case len(t) > 0 && t[0] == '"':
		return "a string"
	default:
		return "a scalar"
	}
}
