package logs

import (
	"strconv"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

const wfUID = "0f1e2d3c-0000-4000-8000-000000000001"

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func sparkTmpl(name string) wfv1.Template {
	return wfv1.Template{Name: name, Plugin: &wfv1.Plugin{Object: wfv1.Object{Value: []byte(`{"spark":{"type":"Scala"}}`)}}}
}

// testWorkflow is a workflow "wf" with two spark templates (spark, etl),
// another plugin's template (slack) and a container template (main).
func testWorkflow() *wfv1.Workflow {
	return &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "wf", Namespace: "ns", UID: wfUID},
		Spec: wfv1.WorkflowSpec{Templates: []wfv1.Template{
			{Name: "main", Container: &corev1.Container{Image: "busybox"}},
			sparkTmpl("spark"), sparkTmpl("etl"),
			{Name: "slack", Plugin: &wfv1.Plugin{Object: wfv1.Object{Value: []byte(`{"slack":{"text":"hi"}}`)}}},
		}},
		Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning, Nodes: wfv1.Nodes{}},
	}
}

// addNode adds a node started at t0+startedMin minutes (never, when
// negative).
func addNode(wf *wfv1.Workflow, id, name, display, tmpl string, typ wfv1.NodeType, phase wfv1.NodePhase, startedMin int) *wfv1.NodeStatus {
	n := wfv1.NodeStatus{ID: id, Name: name, DisplayName: display, TemplateName: tmpl, Type: typ, Phase: phase}
	if startedMin >= 0 {
		n.StartedAt = metav1.NewTime(t0.Add(time.Duration(startedMin) * time.Minute))
	}
	wf.Status.Nodes[id] = n
	p := wf.Status.Nodes[id]
	return &p
}

func setOutputs(wf *wfv1.Workflow, id, driver string, attempt int) {
	n := wf.Status.Nodes[id]
	n.Outputs = &wfv1.Outputs{Parameters: []wfv1.Parameter{
		{Name: spark.OutputDriverPod, Value: wfv1.AnyStringPtr(driver)},
		{Name: spark.OutputAttempt, Value: wfv1.AnyStringPtr(strconv.Itoa(attempt))},
	}}
	wf.Status.Nodes[id] = n
}

// driverPod is the driver sparkplug makes for node id's attempt of wf:
// its name, labels, annotations and owner.
func driverPod(wf *wfv1.Workflow, id string, attempt int) *corev1.Pod {
	ref := spark.WorkflowRef{Name: wf.Name, Namespace: wf.Namespace, UID: string(wf.UID)}
	names := objects.NamesFor(objects.Run{Workflow: ref, NodeID: id, Attempt: attempt})
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: names.DriverPod, Namespace: wf.Namespace, UID: types.UID("uid-" + names.DriverPod),
			Labels: map[string]string{
				spark.LabelWorkflowUID: string(wf.UID), spark.LabelRole: spark.RoleDriver,
				spark.LabelNode: objects.NodeLabel(id), spark.LabelAttempt: strconv.Itoa(attempt),
				spark.LabelAppSelector: names.AppID,
			},
			Annotations:     map[string]string{spark.AnnotationNodeID: id, spark.AnnotationWorkflowName: wf.Name},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Name: wf.Name, UID: wf.UID}},
		},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: spark.DriverContainerName}}},
		Status: startedStatus(spark.DriverContainerName),
	}
}

// executorPod is executor n of driver d, as Spark makes it.
func executorPod(d *corev1.Pod, n int) *corev1.Pod {
	name := objects.RunName(d.Name) + "-exec-" + strconv.Itoa(n)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: d.Namespace, UID: types.UID("uid-" + name),
			Labels: map[string]string{
				spark.LabelWorkflowUID: d.Labels[spark.LabelWorkflowUID], spark.LabelRole: spark.RoleExecutor,
				spark.LabelAppSelector: d.Labels[spark.LabelAppSelector], spark.LabelExecID: strconv.Itoa(n),
				spark.LabelAttempt: d.Labels[spark.LabelAttempt],
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: d.Name, UID: d.UID}},
		},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: spark.ExecutorContainerName}}},
		Status: startedStatus(spark.ExecutorContainerName),
	}
}

func startedStatus(container string) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: container, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}},
	}}}
}

func pendingStatus(container, reason string) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
		Name: container, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}},
	}}}
}

func names(pods []*corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func targetNames(ts []Target) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Pod.Name+"/"+t.Container)
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
