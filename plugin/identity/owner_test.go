package identity

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestOwnedByWorkflow(t *testing.T) {
	refs := []metav1.OwnerReference{
		{Kind: "Pod", Name: "wf", UID: "u1"},
		{Kind: "Workflow", Name: "wf", UID: "u2"},
	}
	for uid, want := range map[string]bool{"u2": true, "u1": false, "": false, "u3": false} {
		if got := OwnedByWorkflow(refs, uid); got != want {
			t.Errorf("OwnedByWorkflow(%q) = %v, want %v", uid, got, want)
		}
	}
	if OwnedByWorkflow([]metav1.OwnerReference{{Kind: "Workflow"}}, "") {
		t.Error("an owner without a uid matched an empty uid")
	}
}

func TestWorkflowOwnerUID(t *testing.T) {
	refs := []metav1.OwnerReference{
		{Kind: "Workflow", Name: "other", UID: "u1"},
		{Kind: "Workflow", Name: "wf", UID: ""},
		{Kind: "Workflow", Name: "wf", UID: "u2", Controller: ptr.To(true)},
		{Kind: "ConfigMap", Name: "wf", UID: "u3", Controller: ptr.To(true)},
	}
	for _, c := range []struct {
		name       string
		controller bool
		want       string
	}{
		{"", false, "u1"}, {"wf", false, "u2"}, {"wf", true, "u2"}, {"other", true, ""}, {"none", false, ""},
	} {
		if got := WorkflowOwnerUID(refs, c.name, c.controller); got != c.want {
			t.Errorf("WorkflowOwnerUID(%q, %v) = %q, want %q", c.name, c.controller, got, c.want)
		}
	}
}
