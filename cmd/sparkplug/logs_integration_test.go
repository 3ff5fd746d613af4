//go:build integration

// sparkplug logs against the real kube-apiserver of the harness: drivers
// launched by the plugin (serve) for nodes recorded in the Workflow as
// Argo's controller records them, read as a user whose Role grants only
// what the README says sparkplug logs needs.
//
// What a real API server without a kubelet can show: the Workflow lookup,
// the pods chosen by labels, name and owner (which pods' logs are asked
// for, recorded from the client's requests), the permissions, and the
// errors. It cannot serve a log's lines: for a pod on no node it answers
// an empty log, and for one on a node that does not exist it answers that
// node not found. The lines themselves, prefixes and following are tested
// in plugin/logs against client-go's fake clientset.

package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sparkplug-io/sparkplug/plugin/logs"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// logsRules are the permissions README gives sparkplug logs.
var logsRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}, Verbs: []string{"get"}},
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
}

// reader makes a ServiceAccount bound to a Role with rules and returns a
// kubeconfig file of it, once the API server's authorizer allows it the
// rules (it may not yet, a moment after the binding is made).
func reader(t *testing.T, e *env, name string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	c := testCluster.Client.RbacV1()
	if err := testCluster.EnsureServiceAccount(ctx, e.ns, name); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Roles(e.ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RoleBindings(e.ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: e.ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := testCluster.WaitAllowed(ctx, e.ns, name, rules); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "kubeconfig")
	if err := testCluster.WriteServiceAccountKubeconfig(ctx, e.ns, name, file); err != nil {
		t.Fatal(err)
	}
	return file
}

// sparkNodes launches a driver through the plugin for each node (id ->
// display name), in that order, and records the nodes in the Workflow as
// Argo's controller does: Plugin nodes of the spark templates, started one
// after the other, with the outputs of the results the plugin wrote.
func sparkNodes(t *testing.T, e *env, ids ...string) {
	t.Helper()
	nodes := wfv1.Nodes{e.wf.Name: {ID: e.wf.Name, Name: e.wf.Name, DisplayName: e.wf.Name, Type: wfv1.NodeTypeSteps, Phase: wfv1.NodeRunning}}
	var templates []wfv1.Template
	for i, id := range ids {
		// Each node its own template (its own arguments).
		tmpl := template(t, "spark-"+id, strings.Replace(sparkPi, `["1000"]`, `["`+id+`"]`, 1))
		e.setTasks(map[string]*wfv1.Template{id: tmpl})
		r := e.execute(tmpl)
		templates = append(templates, *tmpl)
		nodes[id] = wfv1.NodeStatus{
			ID: id, Name: e.wf.Name + "[0]." + id, DisplayName: id, TemplateName: tmpl.Name,
			Type: wfv1.NodeTypePlugin, Phase: wfv1.NodeRunning, StartedAt: metav1.NewTime(time.Now().Add(time.Duration(i) * time.Second)),
			Outputs: r.Node.Outputs,
		}
	}
	e.updateWorkflow(func(wf *wfv1.Workflow) {
		wf.Status.Phase = wfv1.WorkflowRunning
		wf.Spec.Templates = append(wf.Spec.Templates, templates...)
		wf.Status.Nodes = nodes
	})
}

// driverOf is the driver pod sparkplug names for attempt of node.
func driverOf(e *env, node string, attempt int) string {
	return e.names(node, attempt).DriverPod
}

// logRecorder records the pods whose logs a client asks for.
type logRecorder struct {
	rt   http.RoundTripper
	mu   *sync.Mutex
	pods *[]string
}

func (l logRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	if parts := strings.Split(r.URL.Path, "/"); len(parts) > 2 && parts[len(parts)-1] == "log" {
		l.mu.Lock()
		*l.pods = append(*l.pods, parts[len(parts)-2])
		l.mu.Unlock()
	}
	return l.rt.RoundTrip(r)
}

// clients are a kubeconfig's clients, the pods whose logs they ask for
// recorded.
func clients(t *testing.T, kubeconfig string) (kubernetes.Interface, wfclient.Interface, func() []string) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var pods []string
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return logRecorder{rt, &mu, &pods} }
	return kubernetes.NewForConfigOrDie(cfg), wfclient.NewForConfigOrDie(cfg), func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := slices.Clone(pods)
		slices.Sort(out)
		return out
	}
}

// Only the drivers the plugin launched for this Workflow's nodes, and
// their executors, are read: a pod with a driver's labels copied onto it,
// one named and owned as another workflow's driver but labelled with this
// workflow's uid, and an executor its driver does not own, never are. Each
// of them sits on a node that does not exist, so reading its log would
// fail the command, not only show in the recorded requests.
func TestLogsReadsOnlyTheWorkflowsOwnPods(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "logs-own")
	sparkNodes(t, e, "pi-a", "pi-b")
	a, b := driverOf(e, "pi-a", 1), driverOf(e, "pi-b", 1)
	e.setDriverStatus(a, running(true))
	e.setDriverStatus(b, terminated(corev1.PodSucceeded, 0, "Completed", ""))

	ctx := context.Background()
	driver, err := testCluster.Client.CoreV1().Pods(e.ns).Get(ctx, a, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Another Workflow that exists: the garbage collector would delete a
	// pod whose owner does not, and the test would prove nothing.
	ow, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Create(ctx, &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "other"}, Spec: wfv1.WorkflowSpec{Entrypoint: "main"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other := spark.WorkflowRef{Name: ow.Name, Namespace: e.ns, UID: string(ow.UID)}
	otherOwner := metav1.OwnerReference{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Name: ow.Name, UID: ow.UID}
	byDriver := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: a, UID: driver.UID}}
	execLabels := map[string]string{spark.LabelRole: spark.RoleExecutor, spark.LabelAppSelector: driver.Labels[spark.LabelAppSelector], spark.LabelWorkflowUID: string(e.wf.UID)}
	pod := func(name string, labels map[string]string, owners []metav1.OwnerReference, container, node string) {
		t.Helper()
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: driver.Annotations, OwnerReferences: owners},
			Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: container, Image: "x"}}},
		}
		if _, err := testCluster.Client.CoreV1().Pods(e.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		e.setDriverStatus(name, running(true))
	}
	// Forged, each on a node that does not exist.
	pod("copied-labels", driver.Labels, driver.OwnerReferences, spark.DriverContainerName, "no-such-node")
	pod(objects.NamesFor(objects.Run{Workflow: other, NodeID: "pi-a", Attempt: 1, Incarnation: driver.Annotations[spark.AnnotationIncarnation]}).DriverPod,
		driver.Labels, []metav1.OwnerReference{otherOwner}, spark.DriverContainerName, "no-such-node")
	pod("unowned-exec-1", execLabels, nil, spark.ExecutorContainerName, "no-such-node")
	// The driver's own executor, as Spark makes it, on no node.
	exec := objects.RunName(a) + "-exec-1"
	pod(exec, execLabels, byDriver, spark.ExecutorContainerName, "")

	kube, wfc, asked := clients(t, reader(t, e, "log-reader", logsRules))
	var out strings.Builder
	err = logs.Run(ctx, kube, wfc, logs.Options{Namespace: e.ns, Workflow: e.wf.Name, Tail: -1, Selection: logs.Selection{Attempt: logs.AllAttempts, Executors: true}}, &out)
	if err != nil {
		t.Fatalf("%v (logs asked for: %q)", err, asked())
	}
	// Each forged pod is still there: only sparkplug's choice kept its
	// log from being asked for.
	for _, name := range []string{"copied-labels", "unowned-exec-1", objects.NamesFor(objects.Run{Workflow: other, NodeID: "pi-a", Attempt: 1, Incarnation: driver.Annotations[spark.AnnotationIncarnation]}).DriverPod} {
		if e.deleted(name) {
			t.Errorf("forged pod %s was deleted meanwhile: this test proves nothing about it", name)
		}
	}
	want := []string{a, b, exec}
	slices.Sort(want)
	if got := asked(); !slices.Equal(got, want) {
		t.Errorf("logs asked for %q, want %q", got, want)
	}
	if out.String() != "" {
		t.Errorf("output %q: an API server without kubelets serves empty logs", out.String())
	}
}

// The documented permissions are enough, through the command itself, with
// and without -f; without get on pods/log the error says what is needed.
func TestLogsNeedsOnlyTheDocumentedPermissions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "logs-rbac")
	sparkNodes(t, e, "pi")
	e.setDriverStatus(driverOf(e, "pi", 1), terminated(corev1.PodSucceeded, 0, "Completed", ""))
	kubeconfig := reader(t, e, "log-reader", logsRules)
	if status, out, stderr, err := runIn("", "logs", e.wf.Name, "pi", "-n", e.ns, "--kubeconfig", kubeconfig); status != 0 {
		t.Fatalf("status %d: %v\n%s%s", status, err, out, stderr)
	}
	// -f on a finished node: the watch, the Workflow read again, the end.
	markFinished(t, e, "pi")
	done := make(chan int, 1)
	go func() {
		status, _, _, err := runIn("", "logs", e.wf.Name, "pi", "-f", "-n", e.ns, "--kubeconfig", kubeconfig)
		if err != nil {
			t.Log(err)
		}
		done <- status
	}()
	select {
	case status := <-done:
		if status != 0 {
			t.Fatalf("-f: status %d", status)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("-f on a finished node did not end")
	}

	noLogs := reader(t, e, "no-logs", logsRules[:2])
	status, _, _, err := runIn("", "logs", e.wf.Name, "-n", e.ns, "--kubeconfig", noLogs)
	if status != 1 || err == nil || !strings.Contains(err.Error(), "forbidden") || !strings.Contains(err.Error(), "get workflows, list and watch pods, get pods/log") {
		t.Errorf("without pods/log: status %d, %v", status, err)
	}
}

func markFinished(t *testing.T, e *env, id string) {
	t.Helper()
	e.updateWorkflow(func(wf *wfv1.Workflow) {
		n := wf.Status.Nodes[id]
		n.Phase = wfv1.NodeSucceeded
		wf.Status.Nodes[id] = n
	})
}

// Each error is one line: what is wrong, and what to do.
func TestLogsErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "logs-errors")
	kubeconfig := reader(t, e, "log-reader", logsRules)
	cmd := func(args ...string) (int, string) {
		t.Helper()
		status, _, _, err := runIn("", append([]string{"logs", "-n", e.ns, "--kubeconfig", kubeconfig}, args...)...)
		if err == nil {
			return status, ""
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("an error of several lines: %q", err)
		}
		return status, err.Error()
	}
	check := func(what string, args []string, want string) {
		t.Helper()
		status, msg := cmd(args...)
		if status != 1 || !strings.Contains(msg, want) {
			t.Errorf("%s: status %d, %q; want 1 and %q", what, status, msg, want)
		}
	}
	check("no such workflow", []string{"spark-py"}, "workflow spark-py not found in namespace "+e.ns+" (is it in another? -n NAMESPACE)")
	check("no Spark nodes", []string{e.wf.Name}, "workflow spark-pi has no Spark nodes yet (phase not started); sparkplug logs -f waits for them")

	sparkNodes(t, e, "pi-a", "pi-b", "pi-c")
	a, b, c := driverOf(e, "pi-a", 1), driverOf(e, "pi-b", 1), driverOf(e, "pi-c", 1)
	check("no such node", []string{e.wf.Name, "pi-d"}, `workflow spark-pi has no node "pi-d"; its Spark nodes: spark-pi[0].pi-a, spark-pi[0].pi-b, spark-pi[0].pi-c`)
	check("a pod the scheduler has not placed", []string{e.wf.Name, "pi-a"}, "driver "+a+" of node spark-pi[0].pi-a (attempt 1) has not started yet (Pending, not scheduled yet): no log yet; sparkplug logs -f waits for it")

	// A driver deleted: the node's outputs still name it.
	ctx := context.Background()
	if err := testCluster.Client.CoreV1().Pods(e.ns).Delete(ctx, b, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitDeleted(b, "deleted by hand")
	check("a deleted driver", []string{e.wf.Name, "pi-b"}, "the driver "+b+" of node spark-pi[0].pi-b (attempt 1) was deleted: its log is gone")

	// A driver whose Kubernetes node is gone: the API server cannot reach
	// a kubelet for it, and says the node was not found.
	if err := testCluster.Client.CoreV1().Pods(e.ns).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: c}, Target: corev1.ObjectReference{Kind: "Node", Name: "gone-node"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.setDriverStatus(c, terminated(corev1.PodFailed, 1, "Error", ""))
	check("a driver on a node that is gone", []string{e.wf.Name, "pi-c"}, "the driver "+c+" of node spark-pi[0].pi-c (attempt 1) ran on node gone-node, which is gone: its log is gone")

	// Every node: the one readable log is read, the rest named.
	e.setDriverStatus(a, running(true))
	status, msg := cmd(e.wf.Name)
	if status != 1 || !strings.HasPrefix(msg, "2 logs could not be printed: ") || !strings.Contains(msg, b) || !strings.Contains(msg, c) || strings.Contains(msg, a) {
		t.Errorf("every node: status %d, %q", status, msg)
	}
	if status, msg := cmd(e.wf.Name, "pi-a", "-c", "sidecar"); status != 1 || !strings.Contains(msg, "pod "+a+" has no container sidecar (-c); its containers: "+spark.DriverContainerName) {
		t.Errorf("-c sidecar: status %d, %q", status, msg)
	}
}

// -f before the node's driver exists waits for it (a watch), for its
// container to start, streams it, and ends once the node has finished.
func TestLogsFollowWaitsForTheDriver(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "logs-follow")
	ctx := context.Background()
	// The node first, without a driver: the plugin has not been asked yet.
	tmpl := template(t, "spark-pi", sparkPi)
	e.updateWorkflow(func(wf *wfv1.Workflow) {
		wf.Spec.Templates = []wfv1.Template{*tmpl}
		wf.Status.Phase = wfv1.WorkflowRunning
		wf.Status.Nodes = wfv1.Nodes{"pi": {ID: "pi", Name: "spark-pi[0].pi", DisplayName: "pi", TemplateName: tmpl.Name, Type: wfv1.NodeTypePlugin, Phase: wfv1.NodePending, StartedAt: metav1.Now()}}
	})
	kube, wfc, asked := clients(t, reader(t, e, "log-reader", logsRules))
	var notices syncWriter
	done := make(chan error, 1)
	go func() {
		done <- logs.Run(ctx, kube, wfc, logs.Options{Namespace: e.ns, Workflow: e.wf.Name, Node: "pi", Follow: true, Tail: -1, Notices: &notices, Poll: 200 * time.Millisecond}, io.Discard)
	}()
	waitFor(t, "the wait for a driver", func() bool {
		return strings.Contains(notices.String(), "waiting for the driver of node spark-pi[0].pi")
	})

	e.setTasks(map[string]*wfv1.Template{"pi": tmpl})
	e.execute(tmpl)
	driver := driverOf(e, "pi", 1)
	waitFor(t, "the wait for the driver to start", func() bool { return strings.Contains(notices.String(), "waiting for driver "+driver) })
	if len(asked()) != 0 {
		t.Fatalf("the log of a driver not started was asked for: %q", asked())
	}
	e.setDriverStatus(driver, running(true))
	waitFor(t, "the log", func() bool { return len(asked()) == 1 })
	select {
	case err := <-done:
		t.Fatalf("follow ended while the node runs: %v", err)
	case <-time.After(time.Second):
	}
	markFinished(t, e, "pi")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("follow did not end after the node finished; notices:\n%s", notices.String())
	}
	if got := asked(); !slices.Equal(got, []string{driver}) {
		t.Errorf("logs asked for %q, want %q", got, driver)
	}
}

type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("%s: timed out", what)
		}
	}
}

// Completion of sparkplug logs, through the hidden command the scripts
// run: the namespace's workflows, then a workflow's Spark nodes, read
// with the documented permissions and list on workflows; an unknown
// workflow or an unreachable cluster completes nothing and fails nothing.
func TestLogsCompletesWorkflowsAndNodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "logs-complete")
	sparkNodes(t, e, "pi-a", "pi-b")
	ctx := context.Background()
	if _, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Create(ctx, &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "other"}, Spec: wfv1.WorkflowSpec{Entrypoint: "main"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rules := append(slices.Clone(logsRules), rbacv1.PolicyRule{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}, Verbs: []string{"list"}})
	kubeconfig := reader(t, e, "log-completer", rules)
	complete := func(words ...string) []string {
		t.Helper()
		var out, errs strings.Builder
		args := append([]string{completeCommand, "logs", "--kubeconfig", kubeconfig, "-n", e.ns}, words...)
		if err := run(args, &out, &errs); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		return strings.Fields(out.String())
	}
	if got := complete(); !slices.Contains(got, e.wf.Name) || !slices.Contains(got, "other") || len(got) != 2 {
		t.Errorf("workflows %q, want %s and other", got, e.wf.Name)
	}
	if got := complete(e.wf.Name); !slices.Equal(got, []string{"pi-a", "pi-b"}) {
		t.Errorf("nodes of %s: %q, want pi-a pi-b (its Spark nodes, in the order they started)", e.wf.Name, got)
	}
	if got := complete("no-such-workflow"); len(got) != 0 {
		t.Errorf("nodes of a workflow that does not exist: %q, want none", got)
	}
	if got := complete(e.wf.Name, "pi-a"); len(got) != 0 {
		t.Errorf("after NODE: %q, want nothing", got)
	}
}

// --previous asks the API server for the previous instance's log of a
// driver whose container restarted, and refuses, without asking, one
// whose container has not.
func TestLogsPrevious(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "logs-previous")
	sparkNodes(t, e, "pi-a", "pi-b")
	a, b := driverOf(e, "pi-a", 1), driverOf(e, "pi-b", 1)
	e.setDriverStatus(a, running(true))
	restartedStatus := running(true)
	restartedStatus.ContainerStatuses[0].RestartCount = 1
	restartedStatus.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}
	e.setDriverStatus(b, restartedStatus)
	kubeconfig := reader(t, e, "log-reader", logsRules)
	status, _, _, err := runIn("", "logs", e.wf.Name, "pi-a", "-p", "-n", e.ns, "--kubeconfig", kubeconfig)
	if status != 1 || err == nil || !strings.Contains(err.Error(), "driver "+a+" of node spark-pi[0].pi-a (attempt 1): container "+spark.DriverContainerName+" has no previous instance") {
		t.Errorf("a driver that has not restarted: status %d, %v", status, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var queries []string
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if strings.HasSuffix(r.URL.Path, "/log") {
				mu.Lock()
				queries = append(queries, r.URL.Path+"?"+r.URL.RawQuery)
				mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	}
	err = logs.Run(context.Background(), kubernetes.NewForConfigOrDie(cfg), wfclient.NewForConfigOrDie(cfg),
		logs.Options{Namespace: e.ns, Workflow: e.wf.Name, Node: "pi-b", Previous: true, Tail: -1}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(queries) != 1 || !strings.Contains(queries[0], "/pods/"+b+"/log?") || !strings.Contains(queries[0], "previous=true") {
		t.Errorf("log requests %q, want one of %s with previous=true", queries, b)
	}
}
