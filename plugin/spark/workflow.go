package spark

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

// Whether an object is owned by a Workflow is identity.OwnedByWorkflow:
// this package stays on the standard library alone (the acknowledger
// imports it).
