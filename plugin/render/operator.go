package render

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/sparkplug-io/sparkplug/plugin/convert"
)

// operatorSteps reads a Spark operator SparkApplication or
// ScheduledSparkApplication as `sparkplug convert` writes it, a Workflow
// or a CronWorkflow, and takes that one's steps. What convert reports,
// but for the body's problems (the step's Err says those) and its advice
// on running the object (its account, missed runs), becomes each step's
// Warnings.
func operatorSteps(raw []byte, o Options) ([]Step, error) {
	results := convert.Convert(raw, convert.Options{})
	if len(results) != 1 {
		return nil, fmt.Errorf("convert gave %d objects, want 1", len(results))
	}
	r := results[0]
	var notes []string
	for _, f := range r.Findings {
		if !f.Advice && !strings.HasPrefix(f.Message, "the plugin would fail the step") {
			notes = append(notes, "convert: "+f.String())
		}
	}
	if r.Object == nil {
		return nil, fmt.Errorf("%s %s cannot be converted: %s", r.Kind, r.Name, strings.Join(notes, "; "))
	}
	converted, err := json.Marshal(r.Object)
	if err != nil {
		return nil, fmt.Errorf("encode the converted %s: %w", r.Kind, err)
	}
	kind := r.Object.GetObjectKind().GroupVersionKind().Kind
	steps, err := workflowSteps(kind, converted, o)
	if err != nil {
		return nil, err
	}
	name := r.Name
	if r.Namespace != "" {
		name = r.Namespace + "/" + name
	}
	body := "spec"
	if r.Kind == convert.KindScheduledSparkApplication {
		body = "spec.template"
	}
	for i := range steps {
		steps[i].bodyPath = body // in the input, not in what convert wrote
		steps[i].From = fmt.Sprintf("%s %s, as the %s sparkplug convert writes", r.Kind, name, kind)
		steps[i].Warnings = append(notes, steps[i].Warnings...)
	}
	return steps, nil
}

// parameterTag matches a tag naming an input or workflow parameter.
var parameterTag = regexp.MustCompile(`\{\{\s*(?:inputs|workflow)\.parameters\.([^\s{}]+)\s*\}\}`)

// parameterNames are the parameters a template declares (its inputs, the
// workflow's arguments in globals) or names in a tag.
func parameterNames(raw []byte, declared []string, globals map[string]string) []string {
	names := slices.Clone(declared)
	for k := range globals {
		names = append(names, strings.TrimPrefix(k, "workflow.parameters."))
	}
	for _, m := range parameterTag.FindAllSubmatch(raw, -1) {
		names = append(names, string(m[1]))
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// UnknownParameters are the names of o.Parameters (-p) that no step
// declares or names: most likely misspelled, since they change nothing.
func UnknownParameters(steps []Step, o Options) []string {
	var unknown []string
	for name := range o.Parameters {
		found := false
		for _, st := range steps {
			if slices.Contains(st.parameters, name) {
				found = true
				break
			}
		}
		if !found {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	return unknown
}

// unresolvedWarning says which tags a preview left as they are.
func unresolvedWarning(tags []string) string {
	slices.Sort(tags)
	tags = slices.Compact(tags)
	return fmt.Sprintf("%s not resolved, shown as written: Argo would fail the step; declare a value or default, or give -p NAME=VALUE", strings.Join(tags, ", "))
}
