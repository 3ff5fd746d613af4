package spark

import (
	"encoding/json"
	"fmt"
)

// PluginName is the key of the spark body in a template's plugin value,
// plugin: {spark: ...}, and the plugin's name in plugin.yaml.
const PluginName = "spark"

// PluginBody is the one rule for which templates are spark steps: the
// template's plugin value (raw JSON) has the key PluginName. It returns
// that key's raw body. An absent or null value is not a spark step; a
// value that is not a JSON object is an error. The sidecar (step.BodyOf)
// and the acknowledger (package ack) both decide by it.
func PluginBody(value json.RawMessage) (json.RawMessage, bool, error) {
	if len(value) == 0 {
		return nil, false, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(value, &m); err != nil {
		return nil, false, fmt.Errorf("template.plugin is not an object: %w", err)
	}
	raw, ok := m[PluginName]
	return raw, ok, nil
}
