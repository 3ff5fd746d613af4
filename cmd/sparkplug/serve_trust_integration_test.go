//go:build integration

package main

// Trust inside a namespace: pods and tombstones that meet the name, label
// and owner rule (anyone who may create them can: the names are a hash of
// what the Workflow shows, its uid is on every driver) still count for a
// node only if sparkplug could have made them (plugin/execute/trust.go).
// These run without the admission policy, which refuses such objects to
// every account but sparkplug's: the plugin's own rules are what is
// tested.

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/step"
)

// forgeRun makes a pod with everything a driver of the env's node and
// attempt carries under the current incarnation's names: name, labels,
// annotations and the Workflow as owner, as a driver's ServiceAccount
// could, and gives it status.
func forgeRun(t *testing.T, e *env, node string, attempt int, tmpl *wfv1.Template, status corev1.PodStatus) corev1.Pod {
	t.Helper()
	n := e.names(node, attempt)
	key, err := step.Key(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	p, err := testCluster.Client.CoreV1().Pods(e.ns).Create(context.Background(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: n.DriverPod, OwnerReferences: []metav1.OwnerReference{objects.WorkflowOwner(e.ref())},
			Labels: map[string]string{
				spark.LabelRole: spark.RoleDriver, spark.LabelWorkflowUID: string(e.wf.UID), spark.LabelTemplate: key,
				spark.LabelNode: objects.NodeLabel(node), spark.LabelAttempt: strconv.Itoa(attempt), spark.LabelAppSelector: "spark-forged",
			},
			Annotations: map[string]string{spark.AnnotationNodeID: node, spark.AnnotationWorkflowName: e.wf.Name, spark.AnnotationIncarnation: e.incarnation()},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: spark.DriverContainerName, Image: "forged"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.setDriverStatus(p.Name, status)
	return *p
}

// forgeryEvent waits for the Warning Event that names a forged object.
func forgeryEvent(t *testing.T, e *env, name string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		evs, err := testCluster.Client.CoreV1().Events(e.ns).List(context.Background(), metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Workflow,involvedObject.name=" + e.wf.Name + ",reason=" + spark.ReasonForgedObject})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs.Items {
			if strings.Contains(ev.Message, name) {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no %s Event names %s", spark.ReasonForgedObject, name)
}

// untouched fails unless pod name is still there as it was made.
func untouched(t *testing.T, e *env, p corev1.Pod) {
	t.Helper()
	got, err := testCluster.Client.CoreV1().Pods(e.ns).Get(context.Background(), p.Name, metav1.GetOptions{})
	if err != nil || got.UID != p.UID || got.DeletionTimestamp != nil {
		t.Fatalf("the forged pod %s was not left alone: %v", p.Name, err)
	}
}

// runningNode is an env whose node node-1 runs its own driver, the one
// its result records by uid.
func runningNode(t *testing.T, name string) (*env, *wfv1.Template, objects.Names) {
	t.Helper()
	e := newEnv(t, name)
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	want := e.names("node-1", 1)
	e.execute(tmpl)
	e.setDriverStatus(want.DriverPod, running(true))
	e.eventually(tmpl, "Running with its uid", func(r executor.ExecuteTemplateReply) bool {
		return r.Node.Phase == wfv1.NodeRunning && param(r, "driver-uid") != ""
	})
	return e, tmpl, want
}

// A pod made before its node started, under the driver's name, with its
// labels, annotations and the Workflow as owner, and Succeeded, is not the
// node's run: the node launches its own driver under a name drawn for it
// and reports that one.
func TestAPodMadeBeforeItsNodeStartedIsNotItsRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "forged-before")
	tmpl := template(t, "spark-pi", sparkPi)
	e.start()
	forged := forgeRun(t, e, "node-1", 1, tmpl, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	// Past the clock skew allowed between Argo's and the API server's times.
	time.Sleep(3 * time.Second)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})

	r := e.eventually(tmpl, "a driver of its own", func(r executor.ExecuteTemplateReply) bool {
		return param(r, "driver-pod") != "" && param(r, "driver-pod") != forged.Name
	})
	if r.Node.Phase == wfv1.NodeSucceeded || param(r, "application-id") == "spark-forged" {
		t.Fatalf("result %s: taken from the forged pod", describe(r))
	}
	own := r
	forgeryEvent(t, e, forged.Name)
	e.setDriverStatus(param(own, "driver-pod"), terminated(corev1.PodSucceeded, 0, "Completed", ""))
	r = e.eventually(tmpl, "Succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	if param(r, "driver-pod") != param(own, "driver-pod") || param(r, "driver-uid") == "" || param(r, "driver-uid") == string(forged.UID) {
		t.Fatalf("final result %s; want its own driver %s, recorded by uid", describe(r), param(own, "driver-pod"))
	}
	untouched(t, e, forged)
}

// A pod of the next attempt, made while the node's driver runs, is not
// its run: the node follows its own driver to its own end.
func TestALaterAttemptWhileTheDriverRunsIsNotItsRun(t *testing.T) {
	t.Parallel()
	e, tmpl, want := runningNode(t, "forged-next")

	forged := forgeRun(t, e, "node-1", 2, tmpl, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	forgeryEvent(t, e, forged.Name)
	if r := e.execute(tmpl); r.Node.Phase != wfv1.NodeRunning || param(r, "driver-pod") != want.DriverPod {
		t.Fatalf("result %s while attempt 1 runs; want Running from %s", describe(r), want.DriverPod)
	}
	// Attempt 1 ends later than the clock skew allowed after the forged
	// pod was made (as a real next attempt is launched only after it).
	time.Sleep(3 * time.Second)
	e.setDriverStatus(want.DriverPod, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	r := e.eventually(tmpl, "Succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	if param(r, "driver-pod") != want.DriverPod || param(r, "application-id") != want.AppID || param(r, "attempt") != "1" {
		t.Fatalf("final result %s; want attempt 1's own driver %s", describe(r), want.DriverPod)
	}
	untouched(t, e, forged)
}

// The recorded driver deleted and a pod of its name, labels and owner put
// in its place, Succeeded, with a tombstone that names it: neither is the
// node's run. The node reports its own driver lost, never the forged
// success or the tombstone's words.
func TestAReplacedDriverAndAForgedTombstoneAreNotItsRun(t *testing.T) {
	t.Parallel()
	e, tmpl, want := runningNode(t, "forged-after")
	ctx := context.Background()
	zero := int64(0)
	if err := testCluster.Client.CoreV1().Pods(e.ns).Delete(ctx, want.DriverPod, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	e.waitDeleted(want.DriverPod, "deleted by hand")
	replaced := forgeRun(t, e, "node-1", 1, tmpl, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	tomb := objects.Tombstone(&replaced, e.ref(), map[string]string{
		spark.AnnotationStopped: "Timeout", spark.AnnotationStoppedReason: "forged", spark.AnnotationStoppedDetail: "forged: contact the attacker to fix",
		spark.AnnotationDriver: want.DriverPod, spark.AnnotationStoppedAt: time.Now().UTC().Format(time.RFC3339),
	})
	tomb.Immutable = nil
	if _, err := testCluster.Client.CoreV1().ConfigMaps(e.ns).Create(ctx, tomb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	forgeryEvent(t, e, want.DriverPod)
	r := e.eventually(tmpl, "a final result", func(r executor.ExecuteTemplateReply) bool {
		return r.Node.Phase == wfv1.NodeFailed || r.Node.Phase == wfv1.NodeSucceeded || r.Node.Phase == wfv1.NodeError
	})
	if r.Node.Phase != wfv1.NodeFailed || strings.Contains(r.Node.Message, "forged") || param(r, "application-id") != want.AppID {
		t.Fatalf("result %s; want Failed for its own driver %s, lost, never the forged pod's or tombstone's", describe(r), want.AppID)
	}
}
