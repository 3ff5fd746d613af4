package identity

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
