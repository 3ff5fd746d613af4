package kueue

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kueue's names sparkplug uses, as Kueue v0.15 and later define them.
const (
	Group   = "kueue.x-k8s.io"
	Version = "v1beta2"
	// WorkloadKind is the kind of the objects sparkplug creates.
	WorkloadKind = "Workload"

	// LabelQueueName names the LocalQueue a step is queued in, on the
	// step's template metadata (never on the pods).
	LabelQueueName = "kueue.x-k8s.io/queue-name"
	// LabelPriorityClass names the WorkloadPriorityClass of a step.
	LabelPriorityClass = "kueue.x-k8s.io/priority-class"
	// AnnotationWorkload and LabelPodSet are what Kueue's topology-aware
	// scheduling finds a job's pods by; sparkplug stamps them on the
	// driver and the executors of an admitted attempt.
	AnnotationWorkload = "kueue.x-k8s.io/workload"
	LabelPodSet        = "kueue.x-k8s.io/podset"

	// The pod sets of a Spark Workload.
	PodSetDriver   = "driver"
	PodSetExecutor = "executor"

	// Workload condition types.
	ConditionQuotaReserved = "QuotaReserved"
	ConditionAdmitted      = "Admitted"
	ConditionEvicted       = "Evicted"
	ConditionPodsReady     = "PodsReady"
	ConditionFinished      = "Finished"

	// ReasonPreempted is the eviction reason of a preempted Workload.
	ReasonPreempted = "Preempted"
)

// The resources sparkplug reads and writes.
var (
	WorkloadResource              = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "workloads"}
	ResourceFlavorResource        = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "resourceflavors"}
	WorkloadPriorityClassResource = schema.GroupVersionResource{Group: Group, Version: Version, Resource: "workloadpriorityclasses"}
)

// Workload is the part of a kueue.x-k8s.io/v1beta2 Workload sparkplug
// writes and reads.
type Workload struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WorkloadSpec   `json:"spec"`
	Status            WorkloadStatus `json:"status,omitempty"`
}

// WorkloadSpec is a Workload's spec.
type WorkloadSpec struct {
	PodSets          []PodSet          `json:"podSets"`
	QueueName        string            `json:"queueName,omitempty"`
	PriorityClassRef *PriorityClassRef `json:"priorityClassRef,omitempty"`
	// Priority must be set with PriorityClassRef (a CEL rule of the CRD):
	// Kueue's webhook does not resolve it for a Workload made by hand.
	Priority *int32 `json:"priority,omitempty"`
}

// PodSet is a group of alike pods: the driver (count 1), the executors.
type PodSet struct {
	Name     string                 `json:"name"`
	Template corev1.PodTemplateSpec `json:"template"`
	Count    int32                  `json:"count"`
	// MinCount lets Kueue admit fewer pods (partial admission), at least
	// this many; one pod set of a Workload at most.
	MinCount *int32 `json:"minCount,omitempty"`
}

// PriorityClassRef names a WorkloadPriorityClass or a PriorityClass.
type PriorityClassRef struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
}

// WorkloadStatus is what Kueue says of a Workload.
type WorkloadStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	Admission  *Admission         `json:"admission,omitempty"`
}

// Admission is where and how Kueue admitted a Workload.
type Admission struct {
	ClusterQueue      string             `json:"clusterQueue"`
	PodSetAssignments []PodSetAssignment `json:"podSetAssignments"`
}

// PodSetAssignment is the flavors (by resource) and the count admitted
// for one pod set.
type PodSetAssignment struct {
	Name    string                         `json:"name"`
	Flavors map[corev1.ResourceName]string `json:"flavors,omitempty"`
	Count   *int32                         `json:"count,omitempty"`
}

// ResourceFlavorSpec is what an admitted flavor asks of the pods: the
// node labels they must select and the taints they must tolerate.
type ResourceFlavorSpec struct {
	NodeLabels  map[string]string   `json:"nodeLabels,omitempty"`
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// QueueOf is the LocalQueue a step's template asks for: its
// metadata label, else the plugin's default ("" when neither: the step
// is not queued).
func QueueOf(templateLabels map[string]string, defaultQueue string) string {
	if q, ok := templateLabels[LabelQueueName]; ok && q != "" {
		return q
	}
	return defaultQueue
}
