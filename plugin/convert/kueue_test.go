package convert

import (
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/google/go-cmp/cmp"

	"github.com/sparkplug-io/sparkplug/plugin/kueue"
)

// The Spark operator's Kueue labels move from the SparkApplication's
// metadata to the step's template metadata, where sparkplug reads them:
// not the Workflow's labels, nor a CronWorkflow's or its runs'; each with
// a Finding that says where and why. Other labels stay where they were.
func TestKueueLabelsMoveToTheStep(t *testing.T) {
	queueLabels := map[string]string{kueue.LabelQueueName: "lq-spark", kueue.LabelPriorityClass: "batch-low"}
	labels := "\n  labels: {app: etl, " + kueue.LabelQueueName + ": lq-spark, " + kueue.LabelPriorityClass + ": batch-low}"
	findings := map[string]string{
		"metadata.labels." + kueue.LabelQueueName:     "moved to the step's template metadata.labels",
		"metadata.labels." + kueue.LabelPriorityClass: "moved to the step's template metadata.labels",
	}

	res := convertOne(t, sparkApp("\n  name: pi"+labels), Options{ServiceAccount: "spark-workflows"})
	wantFindings(t, res.Findings, findings)
	for _, f := range res.Findings {
		if f.Fails || f.Line == 0 {
			t.Errorf("finding %s: fails %v, line %d; want a note at the label's line", f, f.Fails, f.Line)
		}
		if f.Path == "metadata.labels."+kueue.LabelQueueName && !strings.Contains(f.Message, "spec.podMetadata") {
			t.Errorf("finding %s: want it to say why not spec.podMetadata", f)
		}
	}
	wf := res.Object.(*wfv1.Workflow)
	if !cmp.Equal(wf.Spec.Templates[0].Metadata.Labels, queueLabels) {
		t.Errorf("template labels %v, want %v", wf.Spec.Templates[0].Metadata.Labels, queueLabels)
	}
	if !cmp.Equal(wf.Labels, map[string]string{"app": "etl"}) || wf.Spec.PodMetadata != nil {
		t.Errorf("Workflow labels %v, podMetadata %+v; want app: etl only, and no podMetadata", wf.Labels, wf.Spec.PodMetadata)
	}

	// The queue label alone; no other label: the Workflow has none.
	only := convertOne(t, sparkApp("\n  name: pi\n  labels: {"+kueue.LabelQueueName+": lq-spark}"), Options{ServiceAccount: "spark-workflows"}).Object.(*wfv1.Workflow)
	if only.Labels != nil || !cmp.Equal(only.Spec.Templates[0].Metadata.Labels, map[string]string{kueue.LabelQueueName: "lq-spark"}) {
		t.Errorf("Workflow labels %v, template labels %v", only.Labels, only.Spec.Templates[0].Metadata.Labels)
	}

	// A ScheduledSparkApplication's labels go on each run: the queue
	// label goes on the template the runs share, not the runs.
	doc := strings.Replace(scheduled("  schedule: \"@daily\"\n  concurrencyPolicy: Forbid"), "  name: nightly", "  name: nightly"+labels, 1)
	res = convertOne(t, doc, Options{ServiceAccount: "spark-workflows"})
	wantFindings(t, res.Findings, findings)
	cw := res.Object.(*wfv1.CronWorkflow)
	if !cmp.Equal(cw.Spec.WorkflowSpec.Templates[0].Metadata.Labels, queueLabels) {
		t.Errorf("CronWorkflow template labels %v, want %v", cw.Spec.WorkflowSpec.Templates[0].Metadata.Labels, queueLabels)
	}
	if !cmp.Equal(cw.Labels, map[string]string{"app": "etl"}) || cw.Spec.WorkflowMetadata == nil || !cmp.Equal(cw.Spec.WorkflowMetadata.Labels, map[string]string{"app": "etl"}) {
		t.Errorf("CronWorkflow labels %v, workflowMetadata %+v; want app: etl only", cw.Labels, cw.Spec.WorkflowMetadata)
	}

	// Without them, the template has no metadata.
	plain := convertOne(t, sparkApp("\n  name: pi\n  labels: {app: etl}"), Options{ServiceAccount: "spark-workflows"})
	if len(plain.Findings) != 0 || plain.Object.(*wfv1.Workflow).Spec.Templates[0].Metadata.Labels != nil {
		t.Errorf("findings %v, template labels %v; want none", plain.Findings, plain.Object.(*wfv1.Workflow).Spec.Templates[0].Metadata.Labels)
	}
}
