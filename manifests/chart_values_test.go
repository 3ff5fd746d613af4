package manifests

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// serveFlagsNotInChart are the `sparkplug serve` flags the chart leaves
// out, each with why: the rest are chart values.
var serveFlagsNotInChart = map[string]string{
	"addr":          "the loopback port the agent calls, fixed with the container port",
	"token-file":    "where Argo mounts the agent's token",
	"kubeconfig":    "the sidecar uses its ServiceAccount's token",
	"templates-dir": "a development aid; the image has no such directory",
}

// TestChartCoversServeFlags: every serve flag an operator sets is a chart
// value (serve.<camelCase> in values.yaml and values.schema.json) that
// templates/_helpers.tpl passes as that flag, and the chart passes no flag
// serve does not have. Runs without helm.
func TestChartCoversServeFlags(t *testing.T) {
	src, err := os.ReadFile("../cmd/sparkplug/serve.go")
	if err != nil {
		t.Fatal(err)
	}
	var serve []string
	for _, m := range regexp.MustCompile(`fs\.\w+Var\(&[^,]+, "([a-z0-9-]+)"`).FindAllSubmatch(src, -1) {
		serve = append(serve, string(m[1]))
	}
	if len(serve) < 20 {
		t.Fatalf("found %d serve flags in cmd/sparkplug/serve.go: %q", len(serve), serve)
	}
	helpers, err := os.ReadFile("chart/sparkplug/templates/_helpers.tpl")
	if err != nil {
		t.Fatal(err)
	}
	chart := map[string]string{} // flag -> value key
	for _, m := range regexp.MustCompile(`\(list "([a-z0-9-]+)" \.Values\.serve\.(\w+)\)`).FindAllSubmatch(helpers, -1) {
		chart[string(m[1])] = string(m[2])
	}

	var values struct {
		Serve map[string]any `json:"serve"`
	}
	b, err := os.ReadFile("chart/sparkplug/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Serve struct {
				Properties map[string]any `json:"properties"`
			} `json:"serve"`
		} `json:"properties"`
	}
	b, err = os.ReadFile("chart/sparkplug/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}

	for _, flag := range serve {
		if _, ok := serveFlagsNotInChart[flag]; ok {
			continue
		}
		key, ok := chart[flag]
		if !ok {
			t.Errorf("serve --%s is not passed by the chart (_helpers.tpl), nor listed as left out", flag)
			continue
		}
		if want := camel(flag); !strings.EqualFold(key, want) {
			t.Errorf("--%s comes from serve.%s, want serve.%s", flag, key, want)
		}
		if _, ok := values.Serve[key]; !ok {
			t.Errorf("serve.%s (--%s) is not in values.yaml", key, flag)
		}
		if _, ok := schema.Properties.Serve.Properties[key]; !ok {
			t.Errorf("serve.%s (--%s) is not in values.schema.json", key, flag)
		}
	}
	for flag, key := range chart {
		if !slices.Contains(serve, flag) {
			t.Errorf("the chart passes --%s (serve.%s), which serve does not have", flag, key)
		}
	}
	if len(values.Serve) != len(chart) || len(schema.Properties.Serve.Properties) != len(chart) {
		t.Errorf("values.yaml has %d serve values, the schema %d, the chart passes %d flags",
			len(values.Serve), len(schema.Properties.Serve.Properties), len(chart))
	}
}

// camel is a flag's value key: kube-api-qps is kubeApiQps (compared
// without case, so kubeAPIQPS).
func camel(flag string) string {
	parts := strings.Split(flag, "-")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// kindOf is the kind of a typed object (*v1.ConfigMap: ConfigMap).
func kindOf(o runtime.Object) string {
	s := fmt.Sprintf("%T", o)
	return s[strings.LastIndex(s, ".")+1:]
}

// sortedKeys are a map's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
