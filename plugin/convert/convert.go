package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/argoproj/argo-workflows/v3/pkg/apis/workflow"
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"gopkg.in/yaml.v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// The Spark operator's API convert reads.
const (
	Group                         = "sparkoperator.k8s.io"
	APIVersion                    = Group + "/v1beta2"
	KindSparkApplication          = "SparkApplication"
	KindScheduledSparkApplication = "ScheduledSparkApplication"
)

// TemplateName is the name of the one template of every workflow convert
// writes, and its entrypoint.
const TemplateName = "spark"

// Argo's and Kubernetes' limits on names.
const (
	// MaxCronWorkflowName is Argo's maxCharsInCronWorkflowName
	// (workflow/validate): its Workflows are named <name>-<unix time>,
	// which must fit in 63 characters.
	MaxCronWorkflowName = 52
	// MaxWorkflowName is Argo's maxCharsInObjectName (workflow/validate):
	// the name is a label value.
	MaxWorkflowName = 63
	// generatedSuffix is how many random characters the API server appends
	// to a generateName.
	generatedSuffix = 5
)

// Options are choices of the person converting.
type Options struct {
	// KeepNames names each Workflow after its SparkApplication
	// (metadata.name). By default a Workflow gets generateName
	// "<name>-": a SparkApplication is one run, a Workflow file is
	// submitted once per run.
	KeepNames bool
	// ServiceAccount is the serviceAccountName of each Workflow (of each
	// CronWorkflow's workflowSpec): the account Argo's agent pod runs as.
	// Empty: none, reported, and the Workflow runs as the namespace's
	// default ServiceAccount.
	ServiceAccount string
}

// Object is a converted object: a *wfv1.Workflow or a *wfv1.CronWorkflow.
type Object interface {
	metav1.Object
	runtime.Object
}

// Finding is something of the input that does not carry over as it was.
type Finding struct {
	// Path is where in the input object, e.g. spec.template.driver.memory,
	// or "" for the whole document.
	Path    string
	Message string
	// Line and Column are where Path is in the input, from 1: the key of a
	// field, or of its nearest enclosing field that the input has (a
	// missing field is reported at its parent); 0 when unknown.
	Line, Column int
	// Fails says that what is written will certainly fail: the plugin
	// fails the step on its spark body, or Argo refuses the CronWorkflow.
	Fails bool
	// Advice says the finding is about running what is written, not about
	// a field of the input: what no field could carry over (the account
	// the runs use, missed runs). sparkplug render leaves it out.
	Advice bool
}

func (f Finding) String() string {
	if f.Path == "" {
		return f.Message
	}
	return f.Path + ": " + f.Message
}

// Result is one object of the input and what it became.
type Result struct {
	// Document is the position of the YAML document in the input, from 1
	// (blank documents, between two separators, do not count), and Line
	// the line its content starts on (after comments), from 1.
	Document, Line int
	// Item is the index in the document's List items, or -1 when the
	// document is the object itself.
	Item int
	// APIVersion, Kind, Namespace and Name are the input's; Name is its
	// generateName when it has no name.
	APIVersion, Kind, Namespace, Name string
	// Object is what was written, or nil when the input was skipped.
	Object   Object
	Findings []Finding

	// node is the input object as YAML nodes, with its comments; nil when
	// it did not parse.
	node *yaml.Node
	// appName is the spark.app.name convert set in the body (withAppName),
	// which MarshalResult writes into the input's body too; "" for none.
	appName string
}

// Fails says whether what was written for r will certainly fail (a
// Finding says so).
func (r Result) Fails() bool {
	return slices.ContainsFunc(r.Findings, func(f Finding) bool { return f.Fails })
}

// Convert reads every YAML document of data, expands Lists, and converts
// each SparkApplication and ScheduledSparkApplication of
// sparkoperator.k8s.io/v1beta2. Other objects are Results with a Finding
// and no Object; documents holding only comments are left out.
func Convert(data []byte, opts Options) []Result {
	var results []Result
	for i, doc := range splitDocuments(data) {
		at := Result{Document: i + 1, Line: doc.line, Item: -1}
		root := parseNode(doc.raw)
		tree, err := decode(doc.raw)
		if err != nil {
			at.Findings = []Finding{{Message: "not valid YAML, skipped: " + err.Error()}}
			results = append(results, at)
			continue
		}
		if tree == nil {
			continue
		}
		obj, ok := tree.(map[string]any)
		if !ok {
			at.Findings = []Finding{{Message: fmt.Sprintf("a %s, not a Kubernetes object; skipped", jsonKind(tree))}}
			results = append(results, at)
			continue
		}
		if kind, _ := obj["kind"].(string); strings.HasSuffix(kind, "List") && obj["items"] != nil {
			items, ok := obj["items"].([]any)
			if !ok {
				at.Kind, at.Findings = kind, []Finding{{Path: "items", Message: "not a list; skipped"}}
				results = append(results, at)
				continue
			}
			for i, item := range items {
				res := at
				res.Item = i
				if m, ok := item.(map[string]any); ok {
					convertObject(&res, m, opts)
				} else {
					res.Findings = []Finding{{Message: fmt.Sprintf("a %s, not a Kubernetes object; skipped", jsonKind(item))}}
				}
				res.node = itemNode(root, i)
				locateFindings(res.Findings, res.node, doc.first)
				results = append(results, res)
			}
			continue
		}
		convertObject(&at, obj, opts)
		at.node = root
		locateFindings(at.Findings, root, doc.first)
		results = append(results, at)
	}
	return results
}

// findings collects the Findings of one object.
type findings []Finding

func (f *findings) add(path, format string, args ...any) {
	*f = append(*f, Finding{Path: path, Message: fmt.Sprintf(format, args...)})
}

// advise adds an Advice Finding.
func (f *findings) advise(path, format string, args ...any) {
	*f = append(*f, Finding{Path: path, Message: fmt.Sprintf(format, args...), Advice: true})
}

// fail adds a Finding that what is written will certainly fail.
func (f *findings) fail(path, format string, args ...any) {
	*f = append(*f, Finding{Path: path, Message: fmt.Sprintf(format, args...), Fails: true})
}

// convertObject fills res from one object of the input.
func convertObject(res *Result, obj map[string]any, opts Options) {
	res.APIVersion, _ = obj["apiVersion"].(string)
	res.Kind, _ = obj["kind"].(string)
	if m, ok := obj["metadata"].(map[string]any); ok {
		res.Namespace, _ = m["namespace"].(string)
		res.Name, _ = m["name"].(string)
		if res.Name == "" {
			res.Name, _ = m["generateName"].(string)
		}
	}
	var f findings
	defer func() { res.Findings = f }()

	group, version, _ := strings.Cut(res.APIVersion, "/")
	known := res.Kind == KindSparkApplication || res.Kind == KindScheduledSparkApplication
	switch {
	case res.APIVersion == APIVersion && known:
	case group == Group && known:
		f.add("apiVersion", "%s %s is not %s, the version whose field names sparkplug reads; skipped (convert it to v1beta2 first)", res.Kind, version, APIVersion)
		return
	case res.Kind == "" && res.APIVersion == "":
		f.add("", "no apiVersion and kind: not a Kubernetes object; skipped")
		return
	default:
		f.add("kind", "a %s (%s), not a SparkApplication or ScheduledSparkApplication of %s; skipped", res.Kind, res.APIVersion, APIVersion)
		return
	}

	meta := convertMeta(obj["metadata"], &f)
	queueLabels := takeKueueLabels(&meta, &f)
	if res.Kind == KindSparkApplication {
		res.Object = sparkApplication(meta, obj["spec"], opts, &f)
		if res.Object != nil && meta.Name != "" {
			res.appName = meta.Name
		}
	} else {
		res.Object = scheduledSparkApplication(meta, obj["spec"], &f)
	}
	if res.Object != nil {
		serviceAccount(res.Object, opts.ServiceAccount, &f)
	}
	if res.Object != nil && queueLabels != nil {
		step := &templatesOf(res.Object)[0]
		step.Metadata.Labels = queueLabels
	}
	for _, k := range sortedKeys(obj) {
		switch k {
		case "apiVersion", "kind", "metadata", "spec":
		case "status":
			if !isEmpty(obj[k]) {
				f.add("status", "dropped: the Spark operator's record of %s does not carry over; Argo keeps its own status on the new object", statusWhat(res.Kind))
			}
		default:
			f.add(k, "not a field of a %s; not carried over", res.Kind)
		}
	}
}

func statusWhat(kind string) string {
	if kind == KindScheduledSparkApplication {
		return "past and next runs (lastRun, nextRun, pastSuccessfulRunNames, ...)"
	}
	return "the application's state, attempts and driver"
}

// Metadata the API server or kubectl set on the old object and set again
// on the new one: dropped without a Finding (the README lists them).
var (
	serverSetMetadata = []string{
		"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp",
		"deletionGracePeriodSeconds", "selfLink", "managedFields",
	}
	toolSetAnnotations = []string{"kubectl.kubernetes.io/last-applied-configuration"}
)

// convertMeta keeps name, generateName, namespace, labels and annotations.
func convertMeta(v any, f *findings) metav1.ObjectMeta {
	var meta metav1.ObjectMeta
	m, ok := v.(map[string]any)
	if !ok {
		if v != nil {
			f.add("metadata", "a %s, not an object; ignored", jsonKind(v))
		}
		return meta
	}
	for _, k := range sortedKeys(m) {
		p := "metadata." + k
		switch k {
		case "name":
			meta.Name = stringField(p, m[k], f)
		case "generateName":
			meta.GenerateName = stringField(p, m[k], f)
		case "namespace":
			meta.Namespace = stringField(p, m[k], f)
		case "labels":
			meta.Labels = stringMap(p, m[k], nil, f)
		case "annotations":
			meta.Annotations = stringMap(p, m[k], toolSetAnnotations, f)
		case "ownerReferences":
			if !isEmpty(m[k]) {
				f.add(p, "dropped: the owners are the Spark operator's objects (a ScheduledSparkApplication?), which the new object does not belong to")
			}
		case "finalizers":
			if !isEmpty(m[k]) {
				f.add(p, "dropped: finalizers are for the controllers of the old object, which do not handle the new one")
			}
		default:
			if !slices.Contains(serverSetMetadata, k) {
				f.add(p, "not carried over")
			}
		}
	}
	return meta
}

// templatesOf are the templates of a Workflow or CronWorkflow.
func templatesOf(obj Object) []wfv1.Template {
	if cw, ok := obj.(*wfv1.CronWorkflow); ok {
		return cw.Spec.WorkflowSpec.Templates
	}
	return obj.(*wfv1.Workflow).Spec.Templates
}

func stringField(path string, v any, f *findings) string {
	s, ok := v.(string)
	if !ok && v != nil {
		f.add(path, "a %s, not a string; ignored", jsonKind(v))
	}
	return s
}

// stringMap reads labels or annotations, leaving out the keys of drop.
func stringMap(path string, v any, drop []string, f *findings) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		if v != nil {
			f.add(path, "a %s, not a map of strings; ignored", jsonKind(v))
		}
		return nil
	}
	out := map[string]string{}
	for _, k := range sortedKeys(m) {
		if slices.Contains(drop, k) {
			continue
		}
		s, ok := m[k].(string)
		if !ok {
			f.add(path+"."+k, "a %s, not a string; ignored", jsonKind(m[k]))
			continue
		}
		out[k] = s
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// sparkApplication is the Workflow running one SparkApplication.
func sparkApplication(meta metav1.ObjectMeta, specValue any, opts Options, f *findings) Object {
	body, ok := sparkBody("spec", specValue, f)
	if !ok {
		return nil
	}
	if meta.Name != "" {
		body = withAppName(body, meta.Name, f)
	}
	wf := &wfv1.Workflow{
		TypeMeta:   metav1.TypeMeta{APIVersion: wfv1.SchemeGroupVersion.String(), Kind: workflow.WorkflowKind},
		ObjectMeta: meta,
		Spec:       workflowSpec(body),
	}
	name := meta.Name
	switch {
	case name == "" && meta.GenerateName == "":
		f.add("metadata.name", "missing; the Workflow gets generateName %q", TemplateName+"-")
		wf.GenerateName = TemplateName + "-"
	case name == "":
		// generateName only: the API server names each run.
	case opts.KeepNames:
		wf.GenerateName = ""
		if short := shorten(name, MaxWorkflowName); short != name {
			f.add("metadata.name", "%d characters, more than the %d Argo allows a Workflow; shortened to %q", len(name), MaxWorkflowName, short)
			wf.Name = short
		}
	default:
		// A SparkApplication is one run; its Workflow is submitted once
		// per run, each named by the API server (which shortens a long
		// generateName itself).
		wf.Name, wf.GenerateName = "", name+"-"
	}
	return wf
}

// sparkBody is the spark body: the value at path as JSON, unchanged, and
// a Finding per problem the plugin would fail the step on. ok is false
// when there is no body to write.
func sparkBody(path string, v any, f *findings) (json.RawMessage, bool) {
	switch v.(type) {
	case nil:
		f.fail(path, "missing: the spark body is empty, the plugin would fail the step")
		return json.RawMessage(`{}`), true
	case map[string]any:
	default:
		f.add(path, "a %s, not an object; skipped", jsonKind(v))
		return nil, false
	}
	body, err := json.Marshal(v)
	if err != nil {
		f.add(path, "cannot be written as JSON: %v; skipped", err)
		return nil, false
	}
	operatorServiceAccounts(path, v.(map[string]any), f)
	if _, err := spec.Parse(body); err != nil {
		var invalid *spec.InvalidError
		if !errors.As(err, &invalid) {
			f.fail(path, "the plugin would fail the step: %v", err)
			return body, true
		}
		for _, e := range invalid.Errs {
			f.fail(path+strings.TrimPrefix(e.Field, "spark"), "the plugin would fail the step: %s", e.ErrorBody())
		}
		if invalid.More > 0 {
			f.fail(path, "the plugin would fail the step on %d more problems", invalid.More)
		}
	}
	return body, true
}

// workflowSpec is one template running body, the entrypoint.
func workflowSpec(body json.RawMessage) wfv1.WorkflowSpec {
	value, _ := json.Marshal(map[string]json.RawMessage{spec.PluginName: body})
	return wfv1.WorkflowSpec{
		Entrypoint: TemplateName,
		Templates:  []wfv1.Template{{Name: TemplateName, Plugin: &wfv1.Plugin{Object: wfv1.Object{Value: value}}}},
	}
}

// shorten returns name when it has at most max characters, else its first
// characters, a dash and 8 hex digits of its SHA-256, max in all: the same
// name always gives the same result, two long names sharing a prefix do
// not.
func shorten(name string, max int) string {
	if len(name) <= max {
		return name
	}
	suffix := hashSuffix(name)
	return strings.TrimRight(name[:max-len(suffix)-1], "-.") + "-" + suffix
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// isEmpty says whether a JSON value is null, false, 0, "", [] or {}.
func isEmpty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case json.Number:
		return v.String() == "0"
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "list"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
