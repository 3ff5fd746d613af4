package monitor

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// The labels Argo puts on a Workflow made from a CronWorkflow, a
// WorkflowTemplate (workflowTemplateRef) or a ClusterWorkflowTemplate,
// and those it keeps the workflow's state in.
const (
	argoLabelCronWorkflow            = "workflows.argoproj.io/cron-workflow"
	argoLabelWorkflowTemplate        = "workflows.argoproj.io/workflow-template"
	argoLabelClusterWorkflowTemplate = "workflows.argoproj.io/cluster-workflow-template"
	argoLabelPhase                   = "workflows.argoproj.io/phase"
)

// The labels every spark_* family has before those of --metrics-labels.
// A workflow's or a pod's name is never one: a label per run would grow
// without bound.
const (
	labelNamespace        = "namespace"
	labelWorkflowTemplate = "workflow_template"
)

// unknownValue is a --metrics-labels label's value when the pod lacks the
// label, as the Spark operator's.
const unknownValue = "Unknown"

// labeler derives the label values of a pod's, or a workflow's, series.
type labeler struct {
	// given are --metrics-labels as given, names the Prometheus label
	// names made of them.
	given, names []string
	// workflow is the metadata of the Workflow of uid in namespace ns, as
	// the monitor's cache has it; nil when it does not know it.
	workflow func(ns, uid string) *metav1.ObjectMeta
}

// newLabeler checks --metrics-labels: each must make a Prometheus label
// name, and none may repeat or take the name of a label the monitor sets.
func newLabeler(metricsLabels []string, workflow func(ns, uid string) *metav1.ObjectMeta) (labeler, error) {
	l := labeler{workflow: workflow}
	taken := map[string]string{labelNamespace: "the monitor's own label", labelWorkflowTemplate: "the monitor's own label"}
	for _, given := range metricsLabels {
		name := labelName(given)
		switch {
		case name == "" || strings.HasPrefix(name, "__"):
			return l, fmt.Errorf("%q makes no Prometheus label name", given)
		case taken[name] != "":
			return l, fmt.Errorf("%q is the label %s, which is already %s", given, name, taken[name])
		}
		taken[name] = fmt.Sprintf("--metrics-labels %q", given)
		l.given = append(l.given, given)
		l.names = append(l.names, name)
	}
	return l, nil
}

// labelName makes a label key a Prometheus label name as the Spark
// operator does (util.CreateValidMetricNameLabel: '-' becomes '_'), and
// likewise every other character Prometheus refuses ('.', '/'), which
// the operator passes on and Prometheus then rejects.
func labelName(key string) string {
	b := []byte(key)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' && i > 0) {
			b[i] = '_'
		}
	}
	return string(b)
}

// labelNames are the label names of every spark_* family.
func (l labeler) labelNames() []string {
	return append([]string{labelNamespace, labelWorkflowTemplate}, l.names...)
}

// forPod are the label values of a pod's series: its namespace, the
// template its workflow was made from, and its labels of --metrics-labels.
func (l labeler) forPod(p *corev1.Pod) []string {
	var wf *metav1.ObjectMeta
	if l.workflow != nil {
		wf = l.workflow(p.Namespace, p.Labels[spark.LabelWorkflowUID])
	}
	return l.values(p.Namespace, wf, p.Labels)
}

// forWorkflow are the label values of a workflow's series (a submission
// that made no pod): the extra labels are the Workflow's own.
func (l labeler) forWorkflow(ns, uid string) []string {
	var wf *metav1.ObjectMeta
	if l.workflow != nil {
		wf = l.workflow(ns, uid)
	}
	var labels map[string]string
	if wf != nil {
		labels = wf.Labels
	}
	return l.values(ns, wf, labels)
}

func (l labeler) values(ns string, wf *metav1.ObjectMeta, labels map[string]string) []string {
	out := []string{ns, templateOf(wf)}
	for i, name := range l.names {
		out = append(out, lookup(labels, l.given[i], name))
	}
	return out
}

// templateOf is the CronWorkflow, WorkflowTemplate or
// ClusterWorkflowTemplate a Workflow was made from, in that order (a
// CronWorkflow that runs a WorkflowTemplate names the schedule, the more
// specific); "" for none, or for a workflow the monitor does not know.
func templateOf(wf *metav1.ObjectMeta) string {
	if wf == nil {
		return ""
	}
	for _, k := range []string{argoLabelCronWorkflow, argoLabelWorkflowTemplate, argoLabelClusterWorkflowTemplate} {
		if v := wf.Labels[k]; v != "" {
			return v
		}
	}
	return ""
}

// lookup is the value of the label given (as --metrics-labels spelled it),
// else of the first label, by key, whose name is the same label name
// (app-type for app_type, as the operator matches them), else "Unknown".
func lookup(labels map[string]string, given, name string) string {
	if v, ok := labels[given]; ok {
		return v
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if labelName(k) == name {
			return labels[k]
		}
	}
	return unknownValue
}
