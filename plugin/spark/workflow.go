package spark

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkflowRef names the Argo Workflow a run belongs to: what a request's
// workflow.metadata says, what a run's names hash and what its objects are
// owned by. It is the one reference type every package passes around.
type WorkflowRef struct{ Name, Namespace, UID string }

// Argo's own words that sparkplug reads (Argo's workflow/common).
const (
	// ArgoLabelCompleted is on a WorkflowTaskSet once its workflow is
	// fulfilled (the workflow-controller's taskset.go), and on a
	// Workflow once it completed.
	ArgoLabelCompleted = "workflows.argoproj.io/completed"
	// ArgoLabelWorkflow names the workflow of an agent pod.
	ArgoLabelWorkflow = "workflows.argoproj.io/workflow"
)

// OwnedByWorkflow is the one rule for "owned by this Workflow": one of
// refs is a Workflow of uid uid (never an empty one).
func OwnedByWorkflow(refs []metav1.OwnerReference, uid string) bool {
	return uid != "" && slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool {
		return r.Kind == "Workflow" && string(r.UID) == uid
	})
}

// WorkflowOwnerUID is the uid of the Workflow among refs, "" when none:
// the one named name when name is set, the controller when controller is.
func WorkflowOwnerUID(refs []metav1.OwnerReference, name string, controller bool) string {
	for _, r := range refs {
		if r.Kind != "Workflow" || r.UID == "" || name != "" && r.Name != name || controller && (r.Controller == nil || !*r.Controller) {
			continue
		}
		return string(r.UID)
	}
	return ""
}
