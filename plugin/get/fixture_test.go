package get

import (
	"strconv"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// now is the clock of the tests' AGE: an hour and a half after t0.
var now = t0.Add(90 * time.Minute)

func sparkTmpl(name string) wfv1.Template {
	return wfv1.Template{Name: name, Plugin: &wfv1.Plugin{Object: wfv1.Object{Value: []byte(`{"spark":{"type":"Scala"}}`)}}}
}

// etl is workflow etl-x7k2p of namespace jobs: a DAG of a Spark step that
// succeeded (pi-a), one that runs on its second attempt with a long
// message (pi-b), one not started (report), and a node of another
// plugin (notify), which is no Spark step.
func etl() *wfv1.Workflow {
	wf := &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "etl-x7k2p", Namespace: "jobs", UID: "0f1e2d3c-0000-4000-8000-000000000001", CreationTimestamp: metav1.NewTime(t0)},
		Spec: wfv1.WorkflowSpec{Templates: []wfv1.Template{
			{Name: "main", DAG: &wfv1.DAGTemplate{}},
			sparkTmpl("pi"), sparkTmpl("report"),
			{Name: "notify", Plugin: &wfv1.Plugin{Object: wfv1.Object{Value: []byte(`{"slack":{"text":"hi"}}`)}}},
		}},
		Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning, Nodes: wfv1.Nodes{}},
	}
	node(wf, "etl-x7k2p", "etl-x7k2p", "main", wfv1.NodeTypeDAG, wfv1.NodeRunning, 0, -1, "")
	node(wf, "etl-x7k2p-1", "pi-a", "pi", wfv1.NodeTypePlugin, wfv1.NodeSucceeded, 1, 20, "COMPLETED")
	outputs(wf, "etl-x7k2p-1", "spark-ec76294f756df201baf17d4dd94937c9", 1)
	node(wf, "etl-x7k2p-2", "pi-b", "pi", wfv1.NodeTypePlugin, wfv1.NodeRunning, 2, -1,
		"RUNNING 3/4 executors, 1h20m: executor 4 Pending (Unschedulable: 0/3 nodes are available: 3 Insufficient memory)")
	outputs(wf, "etl-x7k2p-2", "spark-ea812b5bf8d5cf52b575bdf8245a60c4", 2)
	node(wf, "etl-x7k2p-3", "report", "report", wfv1.NodeTypePlugin, wfv1.NodePending, -1, -1, "")
	node(wf, "etl-x7k2p-4", "notify", "notify", wfv1.NodeTypePlugin, wfv1.NodeSucceeded, 21, 21, "sent")
	return wf
}

// nightly is workflow nightly-29401 of namespace analytics: one Spark
// step that failed.
func nightly() *wfv1.Workflow {
	wf := &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly-29401", Namespace: "analytics", UID: "0f1e2d3c-0000-4000-8000-000000000002", CreationTimestamp: metav1.NewTime(t0.Add(-24 * time.Hour))},
		Spec:       wfv1.WorkflowSpec{Templates: []wfv1.Template{sparkTmpl("agg")}},
		Status:     wfv1.WorkflowStatus{Phase: wfv1.WorkflowFailed, Nodes: wfv1.Nodes{}},
	}
	node(wf, "nightly-29401", "nightly-29401", "agg", wfv1.NodeTypePlugin, wfv1.NodeFailed, -1440, -1430,
		"FAILED: driver exited 1 (Error): java.lang.IllegalArgumentException: bad input")
	outputs(wf, "nightly-29401", "spark-69599761209786b540cdd4690b35afff", 1)
	return wf
}

// node adds a node to wf, started and finished at t0 plus those minutes
// (never, when negative, for finishedMin; startedMin -1 is not started).
func node(wf *wfv1.Workflow, id, display, tmpl string, typ wfv1.NodeType, phase wfv1.NodePhase, startedMin, finishedMin int, msg string) {
	n := wfv1.NodeStatus{ID: id, Name: wf.Name + "." + display, DisplayName: display, TemplateName: tmpl, Type: typ, Phase: phase, Message: msg}
	if id == wf.Name {
		n.Name = wf.Name
	}
	if startedMin != -1 {
		n.StartedAt = metav1.NewTime(t0.Add(time.Duration(startedMin) * time.Minute))
	}
	if finishedMin != -1 {
		n.FinishedAt = metav1.NewTime(t0.Add(time.Duration(finishedMin) * time.Minute))
	}
	wf.Status.Nodes[id] = n
}

// outputs sets the outputs sparkplug reports for node id's attempt.
func outputs(wf *wfv1.Workflow, id, appID string, attempt int) {
	n := wf.Status.Nodes[id]
	d := driverPod(wf, id, attempt)
	n.Outputs = &wfv1.Outputs{Parameters: []wfv1.Parameter{
		{Name: spark.OutputApplicationID, Value: wfv1.AnyStringPtr(appID)},
		{Name: spark.OutputDriverPod, Value: wfv1.AnyStringPtr(d.Name)},
		{Name: spark.OutputSparkUI, Value: wfv1.AnyStringPtr("http://" + objects.ServiceName(d.Name) + "." + wf.Namespace + ".svc:4040")},
		{Name: spark.OutputAttempt, Value: wfv1.AnyStringPtr(strconv.Itoa(attempt))},
	}}
	wf.Status.Nodes[id] = n
}

// driverPod is the driver sparkplug makes for node id's attempt of wf.
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
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: spark.DriverContainerName}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: spark.DriverContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}},
		}}},
	}
}
