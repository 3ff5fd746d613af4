//go:build integration

package main

import (
	"context"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/step"
)

// forgedDriver makes a pod that carries every label and annotation of a
// driver of the env's workflow, node and template, as anyone who may
// create pods in the namespace (or an Argo template's metadata.labels)
// can: labels alone must never make it a run.
func forgedDriver(t *testing.T, e *env, name, node string, tmpl *wfv1.Template, status corev1.PodStatus, owners ...metav1.OwnerReference) corev1.Pod {
	t.Helper()
	key, err := step.Key(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := testCluster.Client.CoreV1().Pods(e.ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, OwnerReferences: owners,
			Labels: map[string]string{
				spark.LabelRole: spark.RoleDriver, spark.LabelWorkflowUID: string(e.wf.UID), spark.LabelTemplate: key,
				spark.LabelAttempt: "1", spark.LabelAppSelector: "spark-forged",
			},
			Annotations: map[string]string{spark.AnnotationNodeID: node, spark.AnnotationWorkflowName: e.wf.Name},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: spark.DriverContainerName, Image: "forged"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.setDriverStatus(p.Name, status)
	return *p
}

// A pod with a driver's labels for a node, made by hand, never answers
// the node, is never adopted, and is not deleted when the workflow stops:
// the node gets its own driver and its own application id.
func TestForgedDriverNeverAnswersANode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "forged")
	tmpl := template(t, "spark-pi", sparkPi)
	forged := forgedDriver(t, e, "forged-driver", "node-1", tmpl, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})

	want := e.names("node-1", 1)
	r := e.execute(tmpl)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending || param(r, "driver-pod") != want.DriverPod || param(r, "application-id") != want.AppID {
		t.Fatalf("first result %s; want Pending from the node's own driver %s (%s), never the forged Succeeded pod", describe(r), want.DriverPod, want.AppID)
	}
	e.setDriverStatus(want.DriverPod, running(true))
	e.setDriverStatus(forged.Name, running(true))
	r = e.eventually(tmpl, "Running", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeRunning })
	if param(r, "driver-pod") != want.DriverPod {
		t.Fatalf("running result from %s, want %s", param(r, "driver-pod"), want.DriverPod)
	}

	// The workflow stops: its driver goes, the forged pod stays.
	e.shutdownWorkflow(wfv1.ShutdownStrategyStop)
	e.waitDeleted(want.DriverPod, "stopped workflow")
	if e.deleted(forged.Name) {
		t.Fatal("the sweep of a stopped workflow deleted a pod the workflow does not own")
	}
}

// A pod another Workflow owns, with the victim's labels, is not the
// victim's; a pod squatting on the driver's own name that the Workflow does
// not own is left alone, and the node launches its driver under names
// drawn for it, which nobody can hold.
func TestAPodOfTheDriversNameNotOwnedByTheWorkflowIsLeftAlone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "squatted")
	tmpl := template(t, "spark-pi", sparkPi)
	// Owned by another Workflow that exists: the garbage collector would
	// delete a pod whose owner does not.
	ow, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Create(context.Background(), &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "other"}, Spec: wfv1.WorkflowSpec{Entrypoint: "main"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other := metav1.OwnerReference{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Name: ow.Name, UID: ow.UID}
	// The name of the node's driver in the incarnation the workflow
	// started in.
	e.start()
	want := e.names("node-1", 1)
	squatter := forgedDriver(t, e, want.DriverPod, "node-1", tmpl, terminated(corev1.PodSucceeded, 0, "Completed", ""), other)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})

	r := e.eventually(tmpl, "its own driver", func(r executor.ExecuteTemplateReply) bool { return param(r, "driver-pod") != "" })
	if r.Node.Phase != wfv1.NodePending || param(r, "driver-pod") == want.DriverPod || param(r, "application-id") == want.AppID {
		t.Fatalf("result %s; want Pending from a driver under a drawn name, not %s", describe(r), want.DriverPod)
	}
	got, err := testCluster.Client.CoreV1().Pods(e.ns).Get(context.Background(), want.DriverPod, metav1.GetOptions{})
	if err != nil || got.UID != squatter.UID {
		t.Fatalf("the squatting pod was not left alone: %v", err)
	}
}
