//go:build integration

// sparkplug run against the real kube-apiserver of the harness, as a user
// whose Role grants only what its help says it needs. There is no Argo
// controller here: the test writes the Workflow's status as the controller
// does, so what is checked is sparkplug run's side: the Workflow it
// creates, how it follows it, what it prints and what it leaves.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	wfrun "github.com/sparkplug-io/sparkplug/plugin/run"
)

// runRules are the permissions sparkplug run --help asks for.
var runRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}, Verbs: []string{"create", "get", "delete"}},
}

const runWorkflow = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: run-pi-
spec:
  entrypoint: pi
  templates:
    - name: pi
      plugin:
        spark:
          type: Scala
          mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar
`

type runResult struct {
	err            error
	stdout, stderr string
}

// startRun runs sparkplug run on runWorkflow in e's namespace as a user
// with runRules, and returns the Workflow it created and where its result
// will come.
func startRun(t *testing.T, e *env, args ...string) (*wfv1.Workflow, <-chan runResult) {
	t.Helper()
	kubeconfig := reader(t, e, "runner", runRules)
	file := filepath.Join(t.TempDir(), "wf.yaml")
	if err := os.WriteFile(file, []byte(runWorkflow), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan runResult, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		err := runMain(append([]string{"-f", file, "-n", e.ns, "--kubeconfig", kubeconfig, "--interval", "100ms"}, args...),
			strings.NewReader(""), &stdout, &stderr)
		done <- runResult{err, stdout.String(), stderr.String()}
	}()
	var created *wfv1.Workflow
	deadline := time.Now().Add(20 * time.Second)
	for created == nil {
		if time.Now().After(deadline) {
			t.Fatal("sparkplug run created no Workflow in 20s")
		}
		select {
		case r := <-done:
			t.Fatalf("sparkplug run ended before creating a Workflow: %v\n%s%s", r.err, r.stdout, r.stderr)
		case <-time.After(50 * time.Millisecond):
		}
		list, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			if list.Items[i].GenerateName == "run-pi-" {
				created = &list.Items[i]
			}
		}
	}
	return created, done
}

// advance writes the Workflow's status as Argo's controller would: phase
// for the workflow and its one Spark node.
func advance(t *testing.T, e *env, name string, phase wfv1.WorkflowPhase, message string) {
	t.Helper()
	api := e.wfc.ArgoprojV1alpha1().Workflows(e.ns)
	wf, err := api.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	wf.Status.Phase, wf.Status.StartedAt = phase, now
	node := wfv1.NodeStatus{ID: name, Name: name, DisplayName: name, Type: wfv1.NodeTypePlugin, TemplateName: "pi",
		Phase: wfv1.NodePhase(phase), Message: message, StartedAt: now,
		Outputs: &wfv1.Outputs{Parameters: []wfv1.Parameter{{Name: "application-id", Value: wfv1.AnyStringPtr("spark-0123")}}}}
	if wf.Status.Fulfilled() {
		wf.Status.FinishedAt, node.FinishedAt = now, now
	}
	wf.Status.Nodes = wfv1.Nodes{name: node}
	if _, err := api.Update(context.Background(), wf, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func waitRun(t *testing.T, done <-chan runResult) runResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("sparkplug run did not return in 30s")
		return runResult{}
	}
}

func TestRunFollowsAWorkflowToSuccessAndDeletesIt(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflow(t, "run-succeeded")
	wf, done := startRun(t, e)
	advance(t, e, wf.Name, wfv1.WorkflowRunning, "")
	time.Sleep(300 * time.Millisecond) // a few of run's reads see it Running
	advance(t, e, wf.Name, wfv1.WorkflowSucceeded, "driver Succeeded")
	r := waitRun(t, done)
	if r.err != nil {
		t.Fatalf("sparkplug run: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	want := "workflow " + wf.Name + " Succeeded in 0s\n  " + wf.Name + "  Succeeded  driver Succeeded  application-id=spark-0123\n"
	if r.stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
	}
	for _, line := range []string{"created in namespace run-succeeded", "s]  " + wf.Name + "  Running", "s]  " + wf.Name + "  Succeeded", "workflow " + wf.Name + " deleted"} {
		if !strings.Contains(r.stderr, line) {
			t.Errorf("stderr has no %q:\n%s", line, r.stderr)
		}
	}
	_, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Get(context.Background(), wf.Name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the Workflow that Succeeded: %v, want it deleted", err)
	}
}

func TestRunKeepsAFailedWorkflowAndFails(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflow(t, "run-failed")
	wf, done := startRun(t, e)
	advance(t, e, wf.Name, wfv1.WorkflowFailed, "driver failed: exit code 1")
	r := waitRun(t, done)
	if r.err == nil || !strings.Contains(r.err.Error(), "workflow "+wf.Name+" Failed") ||
		!strings.Contains(r.err.Error(), "kubectl -n run-failed delete workflow "+wf.Name) {
		t.Errorf("sparkplug run: %v, want the Workflow's failure and how to delete it", r.err)
	}
	if !strings.Contains(r.stdout, wf.Name+"  Failed  driver failed: exit code 1  application-id=spark-0123") {
		t.Errorf("stdout has not the node's failure:\n%s", r.stdout)
	}
	if _, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Get(context.Background(), wf.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the Workflow that Failed: %v, want it kept", err)
	}
}

func TestRunGivesUpAtItsTimeoutAndKeepsTheWorkflow(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflow(t, "run-timeout")
	wf, done := startRun(t, e, "--timeout", "2s")
	advance(t, e, wf.Name, wfv1.WorkflowRunning, "")
	r := waitRun(t, done)
	if r.err == nil || !strings.Contains(r.err.Error(), "did not end within 2s (last seen Running)") {
		t.Errorf("sparkplug run: %v, want it to say the Workflow did not end in time", r.err)
	}
	if !strings.Contains(r.stdout, "workflow "+wf.Name+" Running\n") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if _, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Get(context.Background(), wf.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the Workflow still running: %v, want it kept", err)
	}
}

func TestRunWithKeepKeepsAWorkflowThatSucceeded(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflow(t, "run-keep")
	wf, done := startRun(t, e, "--keep")
	advance(t, e, wf.Name, wfv1.WorkflowSucceeded, "")
	if r := waitRun(t, done); r.err != nil {
		t.Fatalf("sparkplug run: %v", r.err)
	}
	if _, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Get(context.Background(), wf.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("--keep: %v, want the Workflow kept", err)
	}
}

func TestRunSaysSoWhenTheWorkflowIsDeleted(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflow(t, "run-deleted")
	wf, done := startRun(t, e, "--timeout", "0")
	advance(t, e, wf.Name, wfv1.WorkflowRunning, "")
	if err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Delete(context.Background(), wf.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r := waitRun(t, done)
	if r.err == nil || !strings.Contains(r.err.Error(), "workflow "+wf.Name+" was deleted before it ended") {
		t.Errorf("sparkplug run: %v, want it to say the Workflow was deleted", r.err)
	}
}

// -o json prints the result as a SparkRun instead of the lines, the exit
// status and the Workflow kept the same.
func TestRunPrintsItsResultAsJSON(t *testing.T) {
	t.Parallel()
	e, _ := newWorkflow(t, "run-json")
	wf, done := startRun(t, e, "-o", "json")
	advance(t, e, wf.Name, wfv1.WorkflowFailed, "driver failed: exit code 1")
	r := waitRun(t, done)
	if r.err == nil || exitCode(r.err) != 1 {
		t.Errorf("sparkplug run -o json of a Workflow that failed: %v, want exit status 1", r.err)
	}
	var res wfrun.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	if res.Kind != wfrun.ResultKind || res.Workflow != wf.Name || res.Namespace != e.ns || res.Phase != "Failed" || len(res.Steps) != 1 ||
		res.Steps[0].Phase != "Failed" || res.Steps[0].Message != "driver failed: exit code 1" || res.Steps[0].ApplicationID != "spark-0123" {
		t.Errorf("result %+v", res)
	}
}
