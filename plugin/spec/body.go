package spec

import (
	"encoding/json"
	"fmt"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
)

// PluginName is the key of the spark body in a template's plugin value:
// plugin: {spark: ...}. It is also the plugin's name in plugin.yaml.
const PluginName = "spark"

// BodyOf returns the raw spark body of an Argo template, and whether the
// template is a spark step at all. A plugin value that is not a JSON
// object is an error; a template of another kind or another plugin is
// (nil, false, nil).
func BodyOf(t *wfv1.Template) (json.RawMessage, bool, error) {
	if t == nil || t.Plugin == nil || len(t.Plugin.Value) == 0 {
		return nil, false, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(t.Plugin.Value, &m); err != nil {
		return nil, false, fmt.Errorf("template.plugin is not an object: %w", err)
	}
	raw, ok := m[PluginName]
	return raw, ok, nil
}
