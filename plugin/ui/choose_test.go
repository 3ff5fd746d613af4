package ui

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// dag is workflow etl of namespace jobs: Spark nodes that run (a, b),
// one that succeeded with a History Server page (done), one pending
// (later), each with the template spark.
func dag(phases map[string]wfv1.NodePhase) *wfv1.Workflow {
	wf := &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "etl", Namespace: "jobs", UID: "0f1e2d3c-0000-4000-8000-000000000001"},
		Spec:       wfv1.WorkflowSpec{Templates: []wfv1.Template{{Name: "spark", Plugin: &wfv1.Plugin{Object: wfv1.Object{Value: []byte(`{"spark":{"type":"Scala"}}`)}}}}},
		Status:     wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning, Nodes: wfv1.Nodes{}},
	}
	for i, id := range slices.Sorted(maps.Keys(phases)) {
		phase := phases[id]
		n := wfv1.NodeStatus{ID: id, Name: "etl." + id, DisplayName: id, TemplateName: "spark", Type: wfv1.NodeTypePlugin, Phase: phase, StartedAt: metav1.NewTime(t0.Add(time.Duration(i) * time.Minute))}
		if phase != wfv1.NodePending {
			n.Outputs = &wfv1.Outputs{Parameters: []wfv1.Parameter{
				{Name: spark.OutputDriverPod, Value: wfv1.AnyStringPtr(driver(wf, id).Name)},
				{Name: spark.OutputAttempt, Value: wfv1.AnyStringPtr("1")},
				{Name: spark.OutputHistoryUI, Value: wfv1.AnyStringPtr("https://history.example.com/history/spark-" + id)},
			}}
		}
		if phase == wfv1.NodeSucceeded {
			n.FinishedAt = metav1.NewTime(t0.Add(time.Hour))
		}
		wf.Status.Nodes[id] = n
	}
	return wf
}

// driver is the driver sparkplug launches for node id of wf, running,
// with its UI on port 4041.
func driver(wf *wfv1.Workflow, id string) *corev1.Pod {
	ref := spark.WorkflowRef{Name: wf.Name, Namespace: wf.Namespace, UID: string(wf.UID)}
	names := objects.NamesFor(objects.Run{Workflow: ref, NodeID: id, Attempt: 1})
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: names.DriverPod, Namespace: wf.Namespace,
			Labels:          map[string]string{spark.LabelWorkflowUID: string(wf.UID), spark.LabelRole: spark.RoleDriver, spark.LabelAttempt: "1"},
			Annotations:     map[string]string{spark.AnnotationNodeID: id, spark.AnnotationWorkflowName: wf.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Name: wf.Name, UID: wf.UID}},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: spark.DriverContainerName, Ports: []corev1.ContainerPort{
			{Name: spark.DriverPortName, ContainerPort: 7078}, {Name: spark.UIPortName, ContainerPort: 4041}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: spark.DriverContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
	}
}

// Without NODE, the one running Spark node; with it, that node, which
// must run; every refusal says why in one line.
func TestChoose(t *testing.T) {
	one := dag(map[string]wfv1.NodePhase{"a": wfv1.NodeRunning, "done": wfv1.NodeSucceeded, "later": wfv1.NodePending})
	two := dag(map[string]wfv1.NodePhase{"a": wfv1.NodeRunning, "b": wfv1.NodeRunning})
	none := dag(map[string]wfv1.NodePhase{"done": wfv1.NodeSucceeded})
	for _, tt := range []struct {
		name    string
		wf      *wfv1.Workflow
		arg     string
		want    string
		wantErr string
	}{
		{"the one running", one, "", "a", ""},
		{"named", two, "b", "b", ""},
		{"named by its full name", two, "etl.a", "a", ""},
		{"two running", two, "", "", "workflow etl has 2 running Spark nodes: give one (sparkplug ui etl NODE): etl.a Running, etl.b Running"},
		{"none running", none, "", "", "workflow etl has no running Spark node: etl.done Succeeded"},
		{"no Spark nodes", dag(nil), "", "", "workflow etl has no Spark nodes"},
		{"ended", one, "done", "", "node etl.done is Succeeded, not running: its Spark UI ended with its driver; the application in the Spark History Server: https://history.example.com/history/spark-done"},
		{"not started", one, "later", "", "node etl.later is Pending, not running yet: its Spark UI starts with its driver"},
		{"no such node", one, "x", "", `workflow etl has no node "x"`},
	} {
		n, err := Choose(tt.wf, tt.arg)
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: %v, want %q", tt.name, err, tt.wantErr)
		case tt.wantErr == "" && (err != nil || n.DisplayName != tt.want):
			t.Errorf("%s: %q, %v; want %s", tt.name, n.DisplayName, err, tt.want)
		}
	}
}

// The pod the node reports is forwarded to only when it is sparkplug's
// driver of the node and its container runs.
func TestCheckDriver(t *testing.T) {
	wf := dag(map[string]wfv1.NodePhase{"a": wfv1.NodeRunning})
	n, err := Choose(wf, "a")
	if err != nil {
		t.Fatal(err)
	}
	pod := func(change func(*corev1.Pod)) *corev1.Pod {
		p := driver(wf, "a")
		change(p)
		return p
	}
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"running", pod(func(*corev1.Pod) {}), ""},
		{"deleted", nil, "driver " + driver(wf, "a").Name + " of node etl.a was deleted"},
		{"another's pod", pod(func(p *corev1.Pod) { p.OwnerReferences = nil }), "is not the driver sparkplug launched for node etl.a"},
		{"being deleted", pod(func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: t0} }), "is being deleted"},
		{"waiting", pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
		}), "has not started yet (ContainerCreating): its Spark UI is not up"},
		{"ended", pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}
		}), "has ended (Error)"},
		{"no status", pod(func(p *corev1.Pod) { p.Status = corev1.PodStatus{Phase: corev1.PodPending} }), "has not started yet (Pending)"},
	} {
		err := CheckDriver(wf, n, tt.pod)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	n.RecordedDriver = ""
	if err := CheckDriver(wf, n, nil); err == nil || !strings.Contains(err.Error(), "node etl.a has no driver yet") {
		t.Errorf("no driver reported: %v", err)
	}
}

// The UI's port is the driver container's spark-ui port, else 4040.
func TestUIPort(t *testing.T) {
	wf := dag(map[string]wfv1.NodePhase{"a": wfv1.NodeRunning})
	p := driver(wf, "a")
	if got := UIPort(p); got != 4041 {
		t.Errorf("spark-ui port: %d, want 4041", got)
	}
	p.Spec.Containers[0].Ports = p.Spec.Containers[0].Ports[:1]
	if got := UIPort(p); got != spark.UIPort {
		t.Errorf("no spark-ui port: %d, want %d", got, spark.UIPort)
	}
}
