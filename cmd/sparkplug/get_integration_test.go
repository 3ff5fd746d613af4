//go:build integration

// sparkplug get against the real kube-apiserver of the harness: drivers
// launched by the plugin for nodes recorded in the Workflow as Argo's
// controller records them, listed as a user whose Role grants only what
// docs/cli.md says sparkplug get needs: the field selector of a workflow
// named, the watch, and each refusal's one line.

package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/get"
)

// getRules are the permissions docs/cli.md gives sparkplug get.
var getRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}, Verbs: []string{"list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
}

// The documented permissions are enough for every output; a workflow
// named lists its steps only; a Workflow without Spark steps is a notice.
func TestGetListsTheSparkSteps(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "get-list")
	sparkNodes(t, e, "pi-a", "pi-b")
	a, b := driverOf(e, "pi-a", 1), driverOf(e, "pi-b", 1)
	e.setDriverStatus(a, running(true))
	e.setDriverStatus(b, waiting("ContainerCreating", ""))
	ctx := context.Background()
	if _, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Create(ctx, &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "other"}, Spec: wfv1.WorkflowSpec{Entrypoint: "main"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubeconfig := reader(t, e, "getter", getRules)
	cmd := func(args ...string) (string, string) {
		t.Helper()
		status, out, stderr, err := runIn("", append([]string{"get", "-n", e.ns, "--kubeconfig", kubeconfig}, args...)...)
		if status != 0 {
			t.Fatalf("get %q: status %d: %v", args, status, err)
		}
		return out, stderr
	}
	out, _ := cmd()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "WORKFLOW ") || !strings.Contains(lines[1], "pi-a") || !strings.Contains(lines[2], "pi-b") {
		t.Fatalf("want the header and pi-a, pi-b:\n%s", out)
	}
	for i, d := range []string{a, b} {
		if !strings.Contains(lines[i+1], e.wf.Name) || !strings.Contains(lines[i+1], "Running") || !strings.Contains(lines[i+1], d) {
			t.Errorf("row %d lacks the workflow, phase or driver %s: %q", i+1, d, lines[i+1])
		}
	}
	out, _ = cmd("-o", "wide")
	if !strings.Contains(out, "ContainerCreating") || !strings.Contains(out, "DRIVER STATUS") {
		t.Errorf("-o wide lacks pi-b's driver status:\n%s", out)
	}
	out, _ = cmd(e.wf.Name, "-o", "json")
	var list get.List
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 2 || list.Items[0].DriverPod != a || list.Items[0].DriverStatus != "Running" || list.Items[0].ApplicationID == "" || list.Items[1].Attempt != 1 {
		t.Errorf("-o json: %+v", list.Items)
	}
	if out, stderr := cmd("other"); out != "" || stderr != "No Spark steps found in namespace "+e.ns+".\n" {
		t.Errorf("a workflow without Spark steps: %q, %q", out, stderr)
	}
	status, _, _, err := runIn("", "get", "spark-py", "-n", e.ns, "--kubeconfig", kubeconfig)
	if status != 1 || err == nil || err.Error() != "workflow spark-py not found in namespace "+e.ns+" (is it in another? -n NAMESPACE, or -A)" {
		t.Errorf("no such workflow: status %d, %v", status, err)
	}
}

// Without a right it needs, sparkplug get fails in one line that names
// the right.
func TestGetNamesTheMissingRight(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "get-rbac")
	sparkNodes(t, e, "pi")
	check := func(what, kubeconfig string, args []string, want string) {
		t.Helper()
		status, _, _, err := runIn("", append([]string{"get", "--kubeconfig", kubeconfig}, args...)...)
		if status != 1 || err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "forbidden") {
			t.Errorf("%s: status %d, %v; want 1 and %q", what, status, err, want)
		}
	}
	full := reader(t, e, "getter", getRules)
	check("-A with a Role of one namespace", full, []string{"-A"}, "sparkplug get needs list on workflows in all namespaces")
	noWatch := reader(t, e, "no-watch", []rbacv1.PolicyRule{
		{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}, Verbs: []string{"list"}}, getRules[1]})
	check("--watch without watch", noWatch, []string{"-n", e.ns, "--watch"}, "sparkplug get needs watch on workflows in namespace "+e.ns)
	noPods := reader(t, e, "no-pods", getRules[:1])
	check("-o wide without get pods", noPods, []string{"-n", e.ns, "-o", "wide"}, "sparkplug get -o wide needs get on pods in namespace "+e.ns)
	if status, _, _, err := runIn("", "get", "--kubeconfig", noPods, "-n", e.ns); status != 0 {
		t.Errorf("the default table reads no pod: status %d, %v", status, err)
	}
}

// --watch prints the steps, then a row when a step changes, until its
// context ends.
func TestGetWatchPrintsChangedSteps(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "get-watch")
	sparkNodes(t, e, "pi-a", "pi-b")
	kube, wfc, _ := clients(t, reader(t, e, "getter", getRules))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncWriter
	done := make(chan error, 1)
	go func() {
		done <- get.Run(ctx, kube, wfc, get.Options{Namespace: e.ns, Watch: true}, &out)
	}()
	waitFor(t, "the first rows", func() bool { return strings.Count(out.String(), "\n") == 3 })
	markFinished(t, e, "pi-a")
	waitFor(t, "pi-a's new row", func() bool { return strings.Count(out.String(), "\n") == 4 })
	last := strings.Split(strings.TrimSpace(out.String()), "\n")[3]
	if !strings.Contains(last, "pi-a") || !strings.Contains(last, "Succeeded") {
		t.Errorf("the changed row: %q\n%s", last, out.String())
	}
	// A change of no step's column (the Workflow's own labels) prints
	// nothing: the next row printed is the one of pi-b's change.
	e.updateWorkflow(func(wf *wfv1.Workflow) { wf.Labels = map[string]string{"x": "y"} })
	e.updateWorkflow(func(wf *wfv1.Workflow) {
		n := wf.Status.Nodes["pi-b"]
		n.Phase, n.Message = wfv1.NodeFailed, "FAILED: driver exited 1"
		wf.Status.Nodes["pi-b"] = n
	})
	waitFor(t, "pi-b's new row", func() bool { return strings.Count(out.String(), "\n") >= 5 })
	if rows := strings.Split(strings.TrimSpace(out.String()), "\n"); len(rows) != 5 || !strings.Contains(rows[4], "pi-b") || !strings.Contains(rows[4], "FAILED: driver exited 1") {
		t.Errorf("want one more row, pi-b's:\n%s", out.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("--watch did not end with its context")
	}
}

// Completion of get and ui, through the hidden command the scripts run:
// get completes the namespace's workflows and nothing after; ui, as
// logs, the workflows, then a workflow's Spark nodes.
func TestGetAndUIComplete(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "get-complete")
	sparkNodes(t, e, "pi-a", "pi-b")
	kubeconfig := reader(t, e, "completer", []rbacv1.PolicyRule{
		{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}, Verbs: []string{"get", "list"}}})
	complete := func(words ...string) string {
		t.Helper()
		var out, errs strings.Builder
		args := append([]string{completeCommand, words[0], "--kubeconfig", kubeconfig, "-n", e.ns}, words[1:]...)
		if err := run(args, &out, &errs); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		return strings.Join(strings.Fields(out.String()), " ")
	}
	for _, tt := range []struct {
		words []string
		want  string
	}{
		{[]string{"get"}, e.wf.Name},
		{[]string{"get", e.wf.Name}, ""},
		{[]string{"ui"}, e.wf.Name},
		{[]string{"ui", e.wf.Name}, "pi-a pi-b"},
		{[]string{"ui", e.wf.Name, "pi-a"}, ""},
	} {
		if got := complete(tt.words...); got != tt.want {
			t.Errorf("%q: %q, want %q", tt.words, got, tt.want)
		}
	}
}
