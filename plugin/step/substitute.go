package step

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
)

// tagPattern is a simple Argo template tag, {{...}}.
var tagPattern = regexp.MustCompile(`\{\{[^{}]*\}\}`)

// Substitute replaces the tags of t whose key is in vars the way Argo's
// simple template replacement does (util/template/simple_template.go): on
// the template's JSON, with the value's special characters escaped for a
// JSON string and no quotes added. So a tag written as a YAML string (it
// must be: `x: {{...}}` is a YAML map) stays a JSON string after
// substitution, whatever the field's type.
//
// Other tags ({{item}}, {{tasks.x.outputs.result}}, expressions) are left
// as they are, as Argo leaves them until it can resolve them. Unresolved
// lists the tags left that Argo resolves before it runs the template
// ({{inputs.*}}, {{workflow.parameters.*}}): Argo fails a template that
// still has one; a preview may show them as they are.
func Substitute(t *wfv1.Template, vars map[string]string) (sub wfv1.Template, unresolved []string, err error) {
	b, err := json.Marshal(t)
	if err != nil {
		return wfv1.Template{}, nil, fmt.Errorf("encode template %s: %w", t.Name, err)
	}
	out := tagPattern.ReplaceAllStringFunc(string(b), func(tag string) string {
		key := strings.TrimSpace(tag[2 : len(tag)-2])
		v, ok := vars[key]
		if !ok {
			if strings.HasPrefix(key, "inputs.") || strings.HasPrefix(key, "workflow.parameters.") {
				unresolved = append(unresolved, tag)
			}
			return tag
		}
		q := strconv.Quote(v)
		return q[1 : len(q)-1]
	})
	if err := json.Unmarshal([]byte(out), &sub); err != nil {
		return wfv1.Template{}, nil, fmt.Errorf("template %s after substitution: %w", t.Name, err)
	}
	return sub, unresolved, nil
}

// SubstituteAll is Substitute as Argo applies it before it runs a
// template: a tag left that Argo must resolve is an error.
func SubstituteAll(t *wfv1.Template, vars map[string]string) (wfv1.Template, error) {
	sub, unresolved, err := Substitute(t, vars)
	if err != nil {
		return wfv1.Template{}, err
	}
	if len(unresolved) > 0 {
		return wfv1.Template{}, fmt.Errorf("template %s: failed to resolve %s (declare them in inputs.parameters or spec.arguments)", t.Name, strings.Join(unresolved, ", "))
	}
	return sub, nil
}
