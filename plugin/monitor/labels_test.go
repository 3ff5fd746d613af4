package monitor

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

func TestLabelName(t *testing.T) {
	for in, want := range map[string]string{
		"app_type":               "app_type",
		"app-type":               "app_type", // the operator's CreateValidMetricNameLabel
		"app.kubernetes.io/name": "app_kubernetes_io_name",
		"9lives":                 "_lives",
		"Team":                   "Team",
	} {
		if got := labelName(in); got != want {
			t.Errorf("labelName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNewLabelerRefuses(t *testing.T) {
	for _, tc := range []struct {
		labels []string
		want   string
	}{
		{[]string{"namespace"}, "already the monitor's own label"},
		{[]string{"workflow-template"}, "already the monitor's own label"},
		{[]string{"app-type", "app_type"}, `already --metrics-labels "app-type"`},
		{[]string{""}, "makes no Prometheus label name"},
		{[]string{"__name__"}, "makes no Prometheus label name"},
	} {
		_, err := newLabeler(tc.labels, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("newLabeler(%q) = %v, want %q", tc.labels, err, tc.want)
		}
	}
}

func TestLabelValues(t *testing.T) {
	workflows := map[string]*metav1.ObjectMeta{
		"cron": {Labels: map[string]string{argoLabelCronWorkflow: "nightly", argoLabelWorkflowTemplate: "etl", "team": "data"}},
		"tmpl": {Labels: map[string]string{argoLabelWorkflowTemplate: "etl"}},
		"ctpl": {Labels: map[string]string{argoLabelClusterWorkflowTemplate: "shared"}},
		"bare": {Labels: map[string]string{}},
	}
	l, err := newLabeler([]string{"app_type", "team"}, func(ns, uid string) *metav1.ObjectMeta { return workflows[uid] })
	if err != nil {
		t.Fatal(err)
	}
	if got := l.labelNames(); !slices.Equal(got, []string{"namespace", "workflow_template", "app_type", "team"}) {
		t.Errorf("labelNames = %q", got)
	}
	p := func(uid string, labels map[string]string) *corev1.Pod {
		labels[spark.LabelWorkflowUID] = uid
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "jobs", Labels: labels}}
	}
	cases := []struct {
		name string
		got  []string
		want []string
	}{
		{"a CronWorkflow's run names the CronWorkflow", l.forPod(p("cron", map[string]string{"app-type": "etl", "team": "ml"})), []string{"jobs", "nightly", "etl", "ml"}},
		{"a WorkflowTemplate's run", l.forPod(p("tmpl", map[string]string{"app_type": "batch"})), []string{"jobs", "etl", "batch", "Unknown"}},
		{"a ClusterWorkflowTemplate's run", l.forPod(p("ctpl", map[string]string{})), []string{"jobs", "shared", "Unknown", "Unknown"}},
		{"a workflow of no template", l.forPod(p("bare", map[string]string{})), []string{"jobs", "", "Unknown", "Unknown"}},
		{"a workflow the cache does not know", l.forPod(p("nope", map[string]string{})), []string{"jobs", "", "Unknown", "Unknown"}},
		{"the label as given wins over one of the same name", l.forPod(p("bare", map[string]string{"app-type": "a", "app_type": "b"})), []string{"jobs", "", "b", "Unknown"}},
		{"a workflow's series take the Workflow's labels", l.forWorkflow("jobs", "cron"), []string{"jobs", "nightly", "Unknown", "data"}},
		{"an unknown workflow's", l.forWorkflow("jobs", "nope"), []string{"jobs", "", "Unknown", "Unknown"}},
	}
	for _, tc := range cases {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}
