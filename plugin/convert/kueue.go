package convert

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/kueue"
)

// The labels of the Spark operator's Kueue integration (alpha),
// kueue.LabelQueueName and kueue.LabelPriorityClass, queue a
// SparkApplication in a LocalQueue with a WorkloadPriorityClass; sparkplug
// reads the same labels on the step's template.

// kueueMoved are the Findings of the Kueue labels moved.
var kueueMoved = map[string]string{
	kueue.LabelQueueName: "moved to the step's template metadata.labels (templates[0].metadata.labels), where sparkplug reads it: " +
		"sparkplug queues the step in this LocalQueue by creating the Kueue Workload itself, one per attempt, driver and executors " +
		"admitted together. Not on the Workflow, which Kueue does not queue, and never in spec.podMetadata: Argo copies that onto " +
		"the agent pod, which Kueue would then gate. Needs sparkplug's Kueue RBAC (docs/steps.md, Kueue)",
	kueue.LabelPriorityClass: "moved to the step's template metadata.labels (templates[0].metadata.labels), beside the queue " +
		"label: the WorkloadPriorityClass of the step's Kueue Workload",
}

// takeKueueLabels removes the Kueue labels from meta (the new object's
// labels, and a CronWorkflow's runs') and returns them, for the step's
// template metadata.labels, with a Finding for each: sparkplug creates the
// Workload itself, from the template's labels.
func takeKueueLabels(meta *metav1.ObjectMeta, f *findings) map[string]string {
	var taken map[string]string
	for _, k := range []string{kueue.LabelQueueName, kueue.LabelPriorityClass} {
		v, ok := meta.Labels[k]
		if !ok {
			continue
		}
		if taken == nil {
			taken = map[string]string{}
		}
		taken[k] = v
		delete(meta.Labels, k)
		f.add("metadata.labels."+k, "%s", kueueMoved[k])
	}
	if len(meta.Labels) == 0 {
		meta.Labels = nil
	}
	return taken
}
