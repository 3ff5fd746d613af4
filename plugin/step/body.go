package step

import (
	"encoding/json"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// BodyOf returns the raw spark body of an Argo template, and whether the
// template is a spark step at all, by spark.PluginBody's rule. A plugin
// value that is not a JSON object is an error; a template of another kind
// or another plugin is (nil, false, nil).
func BodyOf(t *wfv1.Template) (json.RawMessage, bool, error) {
	if t == nil || t.Plugin == nil {
		return nil, false, nil
	}
	return spark.PluginBody(t.Plugin.Value)
}
