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
	"addr":                              "the loopback port the agent calls, fixed with the container port",
	"token-file":                        "where Argo mounts the agent's token",
	"kubeconfig":                        "the sidecar uses its ServiceAccount's token",
	"templates-dir":                     "a development aid; the image has no such directory",
	"pprof-addr":                        "a measuring aid for an engineer, off in any install",
	"pod-name":                          "$POD_NAME, the agent pod's, from the downward API (the container's env)",
	"pod-namespace":                     "$POD_NAMESPACE, the agent pod's, from the downward API (the container's env)",
	"plugin-service-account":            "the chart's ServiceAccount is spark-executor-plugin, the default; serve adds the one its token names",
	"kueue-queue":                       "kueue.defaultQueue, passed only with kueue.enabled (the Kueue RBAC); TestChartKueue",
	"allowed-workload-priority-classes": "kueue.allowedPriorityClasses, with the other Kueue values; TestChartKueue",
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
	// The policy's flags, which render shares.
	policyFlags, err := os.ReadFile("../cmd/sparkplug/policy.go")
	if err != nil {
		t.Fatal(err)
	}
	src = append(src, policyFlags...)
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
	// sparkplug.serveFlags' pairs: (list "flag" $s.key step?).
	for _, m := range regexp.MustCompile(`\(list "([a-z0-9-]+)" \$s\.(\w+) (?:true|false)\)`).FindAllSubmatch(helpers, -1) {
		chart[string(m[1])] = string(m[2])
	}

	values, schema := valuesSection(t, "serve")

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
		if _, ok := values[key]; !ok {
			t.Errorf("serve.%s (--%s) is not in values.yaml", key, flag)
		}
		if _, ok := schema[key]; !ok {
			t.Errorf("serve.%s (--%s) is not in values.schema.json", key, flag)
		}
	}
	for flag, key := range chart {
		if !slices.Contains(serve, flag) {
			t.Errorf("the chart passes --%s (serve.%s), which serve does not have", flag, key)
		}
	}
	if len(values) != len(chart) || len(schema) != len(chart) {
		t.Errorf("values.yaml has %d serve values, the schema %d, the chart passes %d flags",
			len(values), len(schema), len(chart))
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

// monitorFlagsSetByTheChart are the `sparkplug monitor` flags the chart
// sets itself, each with why; monitorValueOf the values named otherwise
// than their flag. The rest are monitor.<camelCase> values.
var (
	monitorFlagsSetByTheChart = map[string]string{
		"namespaces":                "jobNamespaces, or the release's namespace",
		"metrics-addr":              ":9090, the container port metrics the Service targets",
		"health-addr":               ":8081, the container port health the probes ask",
		"leader-elect":              "monitor.leaderElect, always passed",
		"leader-election-id":        "<release>-monitor, the Lease its Role names",
		"leader-election-namespace": "its default, $POD_NAMESPACE: the release's namespace, where the Lease's Role is",
		"kubeconfig":                "the monitor uses its ServiceAccount's token",
	}
	monitorValueOf = map[string]string{
		"metrics-job-start-latency-buckets": "jobStartLatencyBuckets",
	}
)

// TestChartCoversMonitorFlags: every `sparkplug monitor` flag is set by
// the chart or is a chart value (monitor.<camelCase> in values.yaml and
// values.schema.json) that templates/_monitor.tpl passes as that flag,
// and the chart passes no flag monitor does not have. Runs without helm.
func TestChartCoversMonitorFlags(t *testing.T) {
	src, err := os.ReadFile("../cmd/sparkplug/monitor.go")
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, m := range regexp.MustCompile(`fs\.\w*Var\(&[^,]+, "([a-z0-9-]+)"`).FindAllSubmatch(src, -1) {
		flags = append(flags, string(m[1]))
	}
	if len(flags) < 13 {
		t.Fatalf("found %d monitor flags in cmd/sparkplug/monitor.go: %q", len(flags), flags)
	}
	tpl, err := os.ReadFile("chart/sparkplug/templates/_monitor.tpl")
	if err != nil {
		t.Fatal(err)
	}
	chart := map[string]string{} // flag -> value key
	for _, m := range regexp.MustCompile(`\(list "([a-z0-9-]+)" [^\n]*?\$m\.(\w+)`).FindAllSubmatch(tpl, -1) {
		chart[string(m[1])] = string(m[2])
	}
	if len(chart) < 5 {
		t.Fatalf("found %d monitor values passed as flags in _monitor.tpl: %v", len(chart), chart)
	}
	passed := map[string]bool{} // every flag the template writes
	for _, m := range regexp.MustCompile(`"--([a-z0-9-]+)=`).FindAllSubmatch(tpl, -1) {
		passed[string(m[1])] = true
	}
	for f := range chart {
		passed[f] = true
	}

	values, schema := valuesSection(t, "monitor")

	for _, flag := range flags {
		if _, ok := monitorFlagsSetByTheChart[flag]; ok {
			continue
		}
		key, ok := chart[flag]
		if !ok {
			t.Errorf("monitor --%s is not passed by the chart (_monitor.tpl), nor set by it", flag)
			continue
		}
		want := camel(flag)
		if k, ok := monitorValueOf[flag]; ok {
			want = k
		}
		if !strings.EqualFold(key, want) {
			t.Errorf("--%s comes from monitor.%s, want monitor.%s", flag, key, want)
		}
		if _, ok := values[key]; !ok {
			t.Errorf("monitor.%s (--%s) is not in values.yaml", key, flag)
		}
		if _, ok := schema[key]; !ok {
			t.Errorf("monitor.%s (--%s) is not in values.schema.json", key, flag)
		}
	}
	for flag := range passed {
		if !slices.Contains(flags, flag) {
			t.Errorf("the chart passes --%s, which monitor does not have", flag)
		}
	}
	for flag, why := range monitorFlagsSetByTheChart {
		if !slices.Contains(flags, flag) {
			t.Errorf("--%s (%s) is not a monitor flag", flag, why)
		}
	}
}

// valuesSection is one top-level section of the chart's values.yaml and
// the properties values.schema.json declares for it.
func valuesSection(t *testing.T, section string) (values, schema map[string]any) {
	t.Helper()
	var v map[string]any
	b, err := os.ReadFile("chart/sparkplug/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var sc struct {
		Properties map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"properties"`
	}
	b, err = os.ReadFile("chart/sparkplug/values.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	values, _ = v[section].(map[string]any)
	if values == nil || sc.Properties[section].Properties == nil {
		t.Fatalf("values.yaml or values.schema.json has no %s section", section)
	}
	return values, sc.Properties[section].Properties
}
