package controller

import (
	"encoding/json"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// taskSet is a TaskSet as Argo's controller makes it: named after its
// Workflow, owned by it, with the given plugin tasks.
func taskSet(plugins map[string]string) *wfv1.WorkflowTaskSet {
	ts := &wfv1.WorkflowTaskSet{
		ObjectMeta: metav1.ObjectMeta{Name: "etl", Namespace: "jobs", UID: "ts-uid",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Name: "etl", UID: "wf-uid"}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "workflow-controller"}}},
		Spec: wfv1.WorkflowTaskSetSpec{Tasks: map[string]wfv1.Template{}},
	}
	for id, body := range plugins {
		ts.Spec.Tasks[id] = wfv1.Template{Name: id, Plugin: &wfv1.Plugin{Object: wfv1.Object{Value: json.RawMessage(body)}}}
	}
	return ts
}

func TestDiscoveryFollowsOnlyWorkflowsWithASparkTask(t *testing.T) {
	for _, c := range []struct {
		name    string
		plugins map[string]string
		spark   bool
	}{
		{"spark", map[string]string{"etl-1": `{"spark":{"type":"Scala"}}`}, true},
		{"spark among others", map[string]string{"etl-1": `{"slack":{}}`, "etl-2": `{"spark":{}}`}, true},
		{"another plugin only", map[string]string{"etl-1": `{"slack":{"text":"hi"}}`}, false},
		{"no task", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			obj, err := slimTaskSet(taskSet(c.plugins))
			if err != nil {
				t.Fatal(err)
			}
			slim := obj.(*wfv1.WorkflowTaskSet)
			if len(slim.Spec.Tasks) != 0 || slim.ManagedFields != nil {
				t.Errorf("the discovery cache keeps tasks or managedFields: %+v", slim)
			}
			wf, spark := workflowOf(slim)
			if spark != c.spark {
				t.Errorf("spark = %v, want %v", spark, c.spark)
			}
			if wf.Name != "etl" || wf.Namespace != "jobs" || wf.UID != "wf-uid" {
				t.Errorf("workflow = %+v, want etl in jobs with uid wf-uid", wf)
			}
		})
	}
}

// Only a TaskSet owned by the Workflow it is named after is followed: a
// TaskSet someone made with another owner, or none, is not the plugin's.
func TestDiscoveryFollowsOnlyATaskSetItsWorkflowOwns(t *testing.T) {
	for name, owners := range map[string][]metav1.OwnerReference{
		"no owner":          nil,
		"another workflow":  {{Kind: "Workflow", Name: "other", UID: "x"}},
		"not a workflow":    {{Kind: "ConfigMap", Name: "etl", UID: "x"}},
		"owner without uid": {{Kind: "Workflow", Name: "etl"}},
	} {
		ts := taskSet(map[string]string{"etl-1": `{"spark":{}}`})
		ts.OwnerReferences = owners
		obj, _ := slimTaskSet(ts)
		if wf, spark := workflowOf(obj.(*wfv1.WorkflowTaskSet)); spark || wf.UID != "" {
			t.Errorf("%s: followed %+v", name, wf)
		}
	}
}

// The controller's core releases ended workflows and keeps the values of
// spark-submit's command line out of its log, which holds every tenant's
// (execute.Options.SharedLog), whatever a caller set.
func TestTheControllersCoreIsShared(t *testing.T) {
	c := DefaultConfig()
	if !c.Core.ReleaseEnded || !c.Core.SharedLog {
		t.Errorf("DefaultConfig: ReleaseEnded %v, SharedLog %v; want both", c.Core.ReleaseEnded, c.Core.SharedLog)
	}
	c.Core.ReleaseEnded, c.Core.SharedLog = false, false
	c.Monitor.Namespaces = []string{"jobs"}
	c.Monitor.LeaderElect = false
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if !c.Core.ReleaseEnded || !c.Core.SharedLog {
		t.Errorf("Validate: ReleaseEnded %v, SharedLog %v; want both", c.Core.ReleaseEnded, c.Core.SharedLog)
	}
}
