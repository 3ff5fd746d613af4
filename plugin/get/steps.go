package get

import (
	"sort"
	"strconv"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/logs"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// APIVersion and ListKind name the structure -o json and -o yaml print:
// a list object with the steps as items. Fields are only ever added to
// it; none is renamed or removed without a new APIVersion.
const (
	APIVersion = "sparkplug.io/v1alpha1"
	ListKind   = "SparkStepList"
)

// List is what -o json and -o yaml print.
type List struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Items      []Step `json:"items"`
}

// NewList is the List of steps.
func NewList(steps []Step) List {
	if steps == nil {
		steps = []Step{}
	}
	return List{APIVersion: APIVersion, Kind: ListKind, Items: steps}
}

// Step is one Spark node of a Workflow. Times are RFC 3339, in UTC.
type Step struct {
	Namespace string `json:"namespace"`
	Workflow  string `json:"workflow"`
	// Node is the node's display name (step), NodeName its full name
	// (wf.step, wf[0].step), NodeID Argo's node id.
	Node     string `json:"node"`
	NodeName string `json:"nodeName"`
	NodeID   string `json:"nodeID"`
	// Phase is Argo's node phase; Pending when Argo set none yet.
	Phase   string `json:"phase"`
	Message string `json:"message,omitempty"`
	// ApplicationID, DriverPod, Attempt, SparkUI and HistoryUI are the
	// node's outputs of those names, when it reported them.
	ApplicationID string `json:"applicationID,omitempty"`
	DriverPod     string `json:"driverPod,omitempty"`
	Attempt       int    `json:"attempt,omitempty"`
	SparkUI       string `json:"sparkUI,omitempty"`
	HistoryUI     string `json:"historyUI,omitempty"`
	// DriverStatus is the driver pod's status in one word
	// (DriverStatus), read only for -o wide, json and yaml; empty
	// without a driver.
	DriverStatus string `json:"driverStatus,omitempty"`
	StartedAt    string `json:"startedAt,omitempty"`
	FinishedAt   string `json:"finishedAt,omitempty"`
	// Created is the Workflow's creation: a step's age when it has not
	// started.
	Created string `json:"workflowCreatedAt,omitempty"`
}

// key identifies a step across the reads of --watch.
func (s Step) key() string { return s.Namespace + "/" + s.Workflow + "/" + s.NodeID }

// Steps are wf's Spark nodes as steps, in the order they started.
func Steps(wf *wfv1.Workflow) []Step {
	var out []Step
	for _, n := range logs.SparkNodes(wf, nil) {
		s := wf.Status.Nodes[n.ID]
		phase := string(s.Phase)
		if phase == "" {
			phase = string(wfv1.NodePending)
		}
		step := Step{
			Namespace: wf.Namespace, Workflow: wf.Name,
			Node: n.DisplayName, NodeName: n.Name, NodeID: n.ID,
			Phase: phase, Message: oneLine(s.Message),
			ApplicationID: Parameter(s.Outputs, spark.OutputApplicationID),
			DriverPod:     Parameter(s.Outputs, spark.OutputDriverPod),
			SparkUI:       Parameter(s.Outputs, spark.OutputSparkUI),
			HistoryUI:     Parameter(s.Outputs, spark.OutputHistoryUI),
			StartedAt:     stamp(s.StartedAt.Time),
			FinishedAt:    stamp(s.FinishedAt.Time),
			Created:       stamp(wf.CreationTimestamp.Time),
		}
		step.Attempt, _ = strconv.Atoi(Parameter(s.Outputs, spark.OutputAttempt))
		if step.DriverPod != "" && step.Attempt < 1 {
			step.Attempt = 1
		}
		out = append(out, step)
	}
	return out
}

// Sort orders steps by namespace, then workflow, keeping the order of
// each workflow's steps (the order they started).
func Sort(steps []Step) {
	sort.SliceStable(steps, func(i, j int) bool {
		if steps[i].Namespace != steps[j].Namespace {
			return steps[i].Namespace < steps[j].Namespace
		}
		return steps[i].Workflow < steps[j].Workflow
	})
}

// The one-word statuses of a driver that is no longer the node's.
const (
	// DriverDeleted: the pod the node names does not exist, or is not
	// the one sparkplug launched for the workflow (another pod took its
	// name).
	DriverDeleted = "Deleted"
	// DriverTerminating: the pod is being deleted.
	DriverTerminating = "Terminating"
)

// DriverStatus is a driver pod's status in one word, as kubectl's STATUS
// column says it: Terminating, else the reason its driver container
// waits or ended with, else the pod's phase. A pod that is not the
// workflow's own driver (driverpod.OwnDriver) is DriverDeleted; so is nil.
func DriverStatus(p *corev1.Pod, wf spark.WorkflowRef) string {
	if p == nil || !driverpod.OwnDriver(p, wf) {
		return DriverDeleted
	}
	if p.DeletionTimestamp != nil {
		return DriverTerminating
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != spark.DriverContainerName {
			continue
		}
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			return w.Reason
		}
		if t := cs.State.Terminated; t != nil && t.Reason != "" {
			return t.Reason
		}
	}
	if p.Status.Phase == "" {
		return string(corev1.PodPending)
	}
	return string(p.Status.Phase)
}

// maxMessage bounds a message in -o json and yaml: sparkplug's own are
// shorter, but a node's message is whatever Argo's controller wrote.
const maxMessage = 1024

func oneLine(s string) string {
	return spec.Truncate(strings.Join(strings.Fields(s), " "), maxMessage)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// Parameter is the value of a node's output parameter name, "" when it
// has none.
func Parameter(o *wfv1.Outputs, name string) string {
	if o == nil {
		return ""
	}
	for _, p := range o.Parameters {
		if p.Name == name && p.Value != nil {
			return p.Value.String()
		}
	}
	return ""
}
