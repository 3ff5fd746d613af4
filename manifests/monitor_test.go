package manifests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/monitor"
)

// manifests/monitor (sparkplug monitor for kustomize) and
// manifests/monitoring (its ServiceMonitor, alerts and dashboard).
const (
	monitorDir         = "monitor"
	monitoringRuleFile = "monitoring/prometheusrule.yaml"
	// The dashboard's source is the chart's file; monitoring/ has a copy
	// (TestChartGoldenMonitoringFiles keeps them equal).
	dashboardFile = "chart/sparkplug/files/grafana-dashboard.json"
)

// promRuleSpec is the part of a PrometheusRule's spec the tests read.
type promRuleSpec struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert  string            `json:"alert"`
			Expr   string            `json:"expr"`
			For    string            `json:"for"`
			Labels map[string]string `json:"labels"`
		} `json:"rules"`
	} `json:"groups"`
}

// TestMonitorRBAC pins manifests/monitor's Roles, rule for rule and verb
// for verb, to what sparkplug monitor (plugin/monitor) calls: its
// informers on pods, Workflows' metadata and Events, the Workflow it
// reads before deleting a driver (by uid, never read one by one), the
// Events it records on Workflows, and its Lease. No Secrets, nothing cluster-scoped, nothing
// it does not call. The chart's monitor Roles are these (the chart tests).
func TestMonitorRBAC(t *testing.T) {
	roles := map[string][]rbacv1.PolicyRule{}
	var sas, bindings []string
	for _, o := range decodeDocs(t, monitorDir+"/rbac.yaml") {
		switch o := o.(type) {
		case *corev1.ServiceAccount:
			sas = append(sas, o.Name)
		case *rbacv1.Role:
			roles[o.Name] = o.Rules
		case *rbacv1.RoleBinding:
			bindings = append(bindings, o.Name)
			want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "sparkplug-monitor"}}
			if diff := cmp.Diff(want, o.Subjects); diff != "" {
				t.Errorf("RoleBinding %s subjects (-want +got):\n%s", o.Name, diff)
			}
			if o.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: o.Name}) {
				t.Errorf("RoleBinding %s binds %+v", o.Name, o.RoleRef)
			}
		default:
			t.Errorf("unexpected %T in %s/rbac.yaml", o, monitorDir)
		}
	}
	want := map[string][]rbacv1.PolicyRule{
		"sparkplug-monitor": {
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch", "delete"}},
			{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"list", "watch", "create", "patch"}},
		},
		"sparkplug-monitor-leader-election": {
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{"sparkplug-monitor"}, Verbs: []string{"get", "update"}},
		},
	}
	if diff := cmp.Diff(want, roles); diff != "" {
		t.Errorf("Roles (-want +%s/rbac.yaml):\n%s", monitorDir, diff)
	}
	if !slices.Equal(sas, []string{"sparkplug-monitor"}) {
		t.Errorf("ServiceAccounts %q", sas)
	}
	slices.Sort(bindings)
	if !slices.Equal(bindings, sortedKeys(want)) {
		t.Errorf("RoleBindings %q, want one per Role", bindings)
	}
}

// TestMonitorKustomizations: manifests/monitor and manifests/monitoring
// list their files, and manifests/ itself leaves the monitor out.
func TestMonitorKustomizations(t *testing.T) {
	for dir, want := range map[string][]string{
		monitorDir:   {"rbac.yaml", "deployment.yaml", "service.yaml", "networkpolicy.yaml"},
		"monitoring": {"servicemonitor.yaml", "prometheusrule.yaml"},
	} {
		var k struct {
			Resources          []string `json:"resources"`
			ConfigMapGenerator []struct {
				Name  string   `json:"name"`
				Files []string `json:"files"`
			} `json:"configMapGenerator"`
		}
		b, err := os.ReadFile(dir + "/kustomization.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, &k); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(k.Resources, want) {
			t.Errorf("%s: resources %q, want %q", dir, k.Resources, want)
		}
		if dir == "monitoring" && (len(k.ConfigMapGenerator) != 1 ||
			!slices.Equal(k.ConfigMapGenerator[0].Files, []string{"sparkplug.json=grafana-dashboard.json"})) {
			t.Errorf("monitoring: configMapGenerator %+v, want the dashboard as sparkplug.json", k.ConfigMapGenerator)
		}
	}
}

// TestMonitorImageIsThePlugins: manifests/monitor runs the release's image,
// the one plugin.yaml's sidecar runs, with `sparkplug monitor`.
func TestMonitorImageIsThePlugins(t *testing.T) {
	var d appsv1.Deployment
	decodeFile(t, monitorDir+"/deployment.yaml", &d)
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(d.Spec.Template.Spec.Containers))
	}
	c := d.Spec.Template.Spec.Containers[0]
	if want := loadPlugin(t).Spec.Sidecar.Container.Image; c.Image != want {
		t.Errorf("image %q, want plugin.yaml's %q", c.Image, want)
	}
	if len(c.Args) == 0 || c.Args[0] != "monitor" {
		t.Errorf("args %q, want monitor first", c.Args)
	}
}

// TestMonitoringMetricsExist: every metric the alerts and the dashboard
// query is one sparkplug monitor exports, by the names of the collectors
// it registers (monitor.MetricNames; a histogram's or summary's _bucket,
// _sum and _count series are its family's).
func TestMonitoringMetricsExist(t *testing.T) {
	exported := map[string]bool{}
	for _, n := range monitor.MetricNames() {
		exported[n] = true
	}
	if len(exported) < 10 {
		t.Fatalf("monitor exports %d metrics: %q", len(exported), monitor.MetricNames())
	}
	used := map[string][]string{} // metric -> where
	for where, expr := range queries(t) {
		for _, m := range promQLMetrics(expr) {
			used[m] = append(used[m], where)
		}
	}
	// The alerts and the dashboard query most of what is exported: an
	// extractor that finds nothing would pass anything.
	if len(used) < 15 {
		t.Fatalf("found %d metrics in the queries: %q", len(used), sortedKeys(used))
	}
	for m, where := range used {
		if exported[m] {
			continue
		}
		family, ok := "", false
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if f, cut := strings.CutSuffix(m, suffix); cut && exported[f] {
				family, ok = f, true
			}
		}
		if !ok {
			slices.Sort(where)
			t.Errorf("%s is not exported by sparkplug monitor; used in %q", m, where)
		} else if family+"_count" == m && strings.HasSuffix(family, "_count") {
			t.Errorf("%s: %s is a counter, it has no _count series", m, family)
		}
	}
}

// queries are the PromQL expressions of the alerts and the dashboard, by
// where they are.
func queries(t *testing.T) map[string]string {
	t.Helper()
	q := map[string]string{}
	var rule struct {
		Kind string       `json:"kind"`
		Spec promRuleSpec `json:"spec"`
	}
	b, err := os.ReadFile(monitoringRuleFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &rule); err != nil {
		t.Fatal(err)
	}
	if rule.Kind != "PrometheusRule" {
		t.Errorf("%s: kind %q", monitoringRuleFile, rule.Kind)
	}
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || strings.TrimSpace(r.Expr) == "" {
				t.Errorf("%s: a rule without alert or expr: %+v", monitoringRuleFile, r)
			}
			q[monitoringRuleFile+" "+r.Alert] = r.Expr
		}
	}
	if len(q) < 6 {
		t.Errorf("%s: %d alerts", monitoringRuleFile, len(q))
	}

	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr  string `json:"expr"`
				RefID string `json:"refId"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	b, err = os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	n := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			q[dashboardFile+" "+p.Title+" "+tg.RefID] = tg.Expr
			n++
		}
	}
	for _, v := range dash.Templating.List {
		var query struct {
			Query string `json:"query"`
		}
		if json.Unmarshal(v.Query, &query) == nil && query.Query != "" {
			q[dashboardFile+" $"+v.Name] = query.Query
		}
	}
	if n < 15 {
		t.Errorf("%s: %d queries", dashboardFile, n)
	}
	return q
}

var (
	// promQLString is a quoted string of PromQL (a label value).
	promQLString = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`")
	// promQLMatchers are the label matchers of a selector, {...}, once
	// the strings are out of them.
	promQLMatchers = regexp.MustCompile(`\{[^{}]*\}`)
	// promQLIdent is an identifier of PromQL: a metric, label, function
	// or keyword.
	promQLIdent = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
)

// promQLMetrics are the metric names of sparkplug's (spark_*,
// sparkplug_*) that a PromQL expression selects: its identifiers with one
// of those prefixes, outside quoted strings and label matchers. What is
// left of the other identifiers, functions, keywords and the label names
// of by, without, on and group_left, never have those prefixes. A metric
// selected by {__name__="..."} alone is missed; the queries use none.
func promQLMetrics(expr string) []string {
	expr = promQLString.ReplaceAllString(expr, `""`)
	expr = promQLMatchers.ReplaceAllString(expr, `{}`)
	var names []string
	for _, m := range promQLIdent.FindAllString(expr, -1) {
		if strings.HasPrefix(m, "spark_") || strings.HasPrefix(m, "sparkplug_") {
			if !slices.Contains(names, m) {
				names = append(names, m)
			}
		}
	}
	return names
}

func TestPromQLMetrics(t *testing.T) {
	for _, c := range []struct {
		expr string
		want []string
	}{
		{`sum by (namespace) (increase(spark_application_failure_count[10m]))`, []string{"spark_application_failure_count"}},
		{`histogram_quantile(0.95, sum by (le) (rate(spark_application_start_latency_seconds_histogram_bucket{namespace=~"$namespace"}[5m])))`,
			[]string{"spark_application_start_latency_seconds_histogram_bucket"}},
		{`absent(sparkplug_build_info{job="sparkplug-monitor"}) or sparkplug_monitor_leader != 1`, []string{"sparkplug_build_info", "sparkplug_monitor_leader"}},
		{`spark_a / spark_b and on (namespace) max_over_time(spark_c[1m]) unless spark_a`, []string{"spark_a", "spark_b", "spark_c"}},
		{`up{job="spark_not_a_metric", sparkplug_label="x"} and {__name__="spark_quoted"}`, nil},
		{"spark_x{a='spark_y',b=`spark_z`}\n  >bool on(namespace) group_left sparkplug_y", []string{"spark_x", "sparkplug_y"}},
		{`label_values(spark_application_count{namespace=~"$namespace"}, workflow_template)`, []string{"spark_application_count"}},
	} {
		if got := promQLMetrics(c.expr); !slices.Equal(got, c.want) {
			t.Errorf("promQLMetrics(%s) = %q, want %q", c.expr, got, c.want)
		}
	}
}

// objects decodes YAML documents (helm template, kubectl kustomize) into
// unstructured objects, the Prometheus Operator's kinds included, keyed
// "Kind namespace/name".
func objects(t *testing.T, docs []byte) map[string]*unstructured.Unstructured {
	t.Helper()
	m := map[string]*unstructured.Unstructured{}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(docs)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return m
		}
		if err != nil {
			t.Fatal(err)
		}
		var o map[string]any
		if err := yaml.Unmarshal(doc, &o); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		if o == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: o}
		key := u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
		if _, ok := m[key]; ok {
			t.Errorf("%s twice", key)
		}
		m[key] = u
	}
}
