//go:build integration

// The harness of the serve integration tests: one real kube-apiserver, etcd
// and controller-manager for the package (TestMain), and per test an env:
// a namespace with manifests/rbac.yaml applied, a Workflow, and the plugin
// serving as its ServiceAccount, with helpers to post requests as the
// agent does, list drivers and set their statuses as a kubelet would. The
// tests are in serve_<topic>_integration_test.go.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/e2e/cluster"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/sidecar"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

var testCluster *cluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, cluster.Options{
		ControllerManager: true,
		// The CRDs before the controllers: the garbage collector then
		// collects what Workflows and drivers own from its start.
		BeforeControllers: func(ctx context.Context, c *cluster.Cluster) error {
			if err := installArgoCRDs(ctx, c); err != nil {
				return err
			}
			return installCRD(ctx, c, schedulerPluginsF)
		},
	}, func(c *cluster.Cluster) { testCluster = c }))
}

func installArgoCRDs(ctx context.Context, c *cluster.Cluster) error {
	dir, err := argo.ModuleDir(ctx, "../..")
	if err != nil {
		return err
	}
	return argo.InstallCRDs(ctx, c, dir, argo.CRDsMinimal, "workflows", "workflowtasksets")
}

const pluginToken = "integration-token"

// env is one namespace with Argo's CRDs, sparkplug's RBAC from manifests/,
// a Workflow, and a running plugin server authenticated as the plugin's
// ServiceAccount.
type env struct {
	t        testing.TB
	ns       string
	wf       *wfv1.Workflow
	wfc      wfclient.Interface
	url      string
	requests *atomic.Int64 // API requests the plugin made
	// kubeconfig is the plugin's ServiceAccount's.
	kubeconfig string
	// tasks are the TaskSet's tasks as setTasks last wrote them.
	tasks map[string]*wfv1.Template
	// stop stops the plugin server newEnv started, as SIGTERM does
	// (idempotent); nil in an env of another server (at).
	stop func()
}

// newWorkflow makes namespace name with sparkplug's RBAC from manifests/,
// the spark ServiceAccount and a Workflow; the env's kubeconfig is the
// plugin ServiceAccount's, written into dir.
func newWorkflow(t testing.TB, name string) (_ *env, dir string) {
	t.Helper()
	ctx := context.Background()
	ns := name
	if _, err := testCluster.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rbac, err := os.ReadFile("../../manifests/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := testCluster.Apply(ctx, withNamespace(t, rbac, ns)); err != nil {
		t.Fatalf("apply manifests/rbac.yaml: %v", err)
	}
	// The service account the Spark pods run as (SparkPi's driver.serviceAccount).
	if err := testCluster.EnsureServiceAccount(ctx, ns, "spark"); err != nil {
		t.Fatal(err)
	}
	wfc := wfclient.NewForConfigOrDie(testCluster.Config)
	wf, err := wfc.ArgoprojV1alpha1().Workflows(ns).Create(ctx, &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "spark-pi"},
		Spec:       wfv1.WorkflowSpec{Entrypoint: "main"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	dir = t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := testCluster.WriteServiceAccountKubeconfig(ctx, ns, "spark-executor-plugin", kubeconfig); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, ns: ns, wf: wf, wfc: wfc, requests: &atomic.Int64{}, kubeconfig: kubeconfig}, dir
}

// newEnv starts the plugin with the tests' serve options, changed by
// configure's functions.
func newEnv(t testing.TB, name string, configure ...func(*sidecar.Config)) *env {
	t.Helper()
	ctx := context.Background()
	e, dir := newWorkflow(t, name)
	ns, kubeconfig := e.ns, e.kubeconfig
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(pluginToken), 0o440); err != nil {
		t.Fatal(err)
	}
	o := testConfig(tokenFile, kubeconfig)
	o.TTLInterval = 500 * time.Millisecond
	o.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return counting{rt, e.requests} }
	o.Core.NotFoundGrace = 3 * time.Second
	for _, f := range configure {
		f(&o)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	grantSparkSubmit(t, &o, ns)
	addr := make(chan string, 1)
	o.Listening = func(a string) { addr <- a }
	srvCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	logFile, err := os.Create(filepath.Join(dir, "plugin.log"))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		done <- sidecar.Run(srvCtx, o, slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelDebug})))
	}()
	select {
	case a := <-addr:
		e.url = "http://" + a
	case err := <-done:
		t.Fatalf("server stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("server did not start listening")
	}
	var once sync.Once
	e.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("server: %v", err)
			}
		})
	}
	t.Cleanup(func() {
		e.stop()
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("plugin log:\n%s", tail(string(b), 60))
		}
	})
	return e
}

// grantSparkSubmit gives the plugin's ServiceAccount of ns spark-submit's
// server-side apply of its ConfigMap and Service (manifests/spark-submit),
// as the chart grants it, when o runs spark-submit (serve --spark-home).
func grantSparkSubmit(t testing.TB, o *sidecar.Config, ns string) {
	t.Helper()
	if o.Core.Submit.SparkHome == "" {
		return
	}
	extra, err := os.ReadFile("../../manifests/spark-submit/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := testCluster.Apply(context.Background(), withNamespace(t, extra, ns)); err != nil {
		t.Fatalf("apply manifests/spark-submit/rbac.yaml: %v", err)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func withNamespace(t testing.TB, docs []byte, ns string) []byte {
	t.Helper()
	var out [][]byte
	for _, doc := range bytes.Split(docs, []byte("\n---\n")) {
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			t.Fatal(err)
		}
		if m == nil {
			continue
		}
		m["metadata"].(map[string]any)["namespace"] = ns
		if subjects, ok := m["subjects"].([]any); ok {
			for _, s := range subjects {
				s.(map[string]any)["namespace"] = ns
			}
		}
		b, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return bytes.Join(out, []byte("\n---\n"))
}

type counting struct {
	rt http.RoundTripper
	n  *atomic.Int64
}

func (c counting) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.rt.RoundTrip(r)
}

// template returns an Argo plugin template with the given spark body.
func template(t testing.TB, name, body string) *wfv1.Template {
	t.Helper()
	var spark map[string]any
	if err := yaml.Unmarshal([]byte(body), &spark); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(map[string]any{"spark": spark})
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &wfv1.Template{Name: name, Plugin: &wfv1.Plugin{}}
	tmpl.Plugin.Value = raw
	return tmpl
}

// setTasks writes the WorkflowTaskSet's open nodes as the controller
// does, and lists them in the Workflow's status as Pending plugin nodes
// of a started workflow (the node names as Argo makes them: the
// workflow's name, a dot, the node id), as the controller does before it
// lists a task.
func (e *env) setTasks(tasks map[string]*wfv1.Template) {
	e.t.Helper()
	ctx := context.Background()
	e.tasks = tasks
	e.updateWorkflow(func(wf *wfv1.Workflow) {
		started(wf)
		if wf.Status.Nodes == nil {
			wf.Status.Nodes = wfv1.Nodes{}
		}
		for id, tmpl := range tasks {
			if _, ok := wf.Status.Nodes[id]; !ok {
				wf.Status.Nodes[id] = wfv1.NodeStatus{ID: id, Name: e.wf.Name + "." + id, Type: wfv1.NodeTypePlugin,
					TemplateName: tmpl.Name, Phase: wfv1.NodePending, StartedAt: metav1.Now()}
			}
		}
	})
	spec := wfv1.WorkflowTaskSetSpec{Tasks: map[string]wfv1.Template{}}
	for id, tmpl := range tasks {
		spec.Tasks[id] = *tmpl
	}
	ts := &wfv1.WorkflowTaskSet{
		ObjectMeta: metav1.ObjectMeta{Name: e.wf.Name, Namespace: e.ns,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Name: e.wf.Name, UID: e.wf.UID}}},
		Spec: spec,
	}
	client := e.wfc.ArgoprojV1alpha1().WorkflowTaskSets(e.ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		existing, err := client.Get(ctx, e.wf.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = client.Create(ctx, ts, metav1.CreateOptions{})
		case err == nil:
			existing.Spec = spec
			_, err = client.Update(ctx, existing, metav1.UpdateOptions{})
		}
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// started makes wf a started, running workflow, as the controller does
// when it starts one: status.startedAt (the incarnation of its nodes'
// runs) and phase Running, unless it has them.
func started(wf *wfv1.Workflow) {
	if wf.Status.StartedAt.IsZero() {
		wf.Status.StartedAt = metav1.Now()
	}
	if wf.Status.Phase == "" {
		wf.Status.Phase = wfv1.WorkflowRunning
	}
}

// updateWorkflow changes the env's Workflow, object and status (the
// Workflow CRD has no status subresource), as Argo's controller does:
// read, change, update, and again from the read on a conflict.
func (e *env) updateWorkflow(change func(*wfv1.Workflow)) *wfv1.Workflow {
	e.t.Helper()
	ctx := context.Background()
	wfs := e.wfc.ArgoprojV1alpha1().Workflows(e.ns)
	var updated *wfv1.Workflow
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		wf, err := wfs.Get(ctx, e.wf.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(wf)
		updated, err = wfs.Update(ctx, wf, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return updated
}

// start starts the env's Workflow (started) without listing a task, and
// returns its incarnation.
func (e *env) start() string {
	e.t.Helper()
	e.updateWorkflow(started)
	return e.incarnation()
}

// incarnation is the Workflow's status.startedAt in RFC 3339: the
// incarnation sparkplug launches its nodes' runs in, which their names
// hash and their annotation sparkplug.io/incarnation carries.
func (e *env) incarnation() string {
	e.t.Helper()
	wf, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Get(context.Background(), e.wf.Name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if wf.Status.StartedAt.IsZero() {
		e.t.Fatal("the workflow has not started: no incarnation yet")
	}
	return wf.Status.StartedAt.UTC().Format(time.RFC3339)
}

// names are the names of attempt of node's run in the Workflow's current
// incarnation, as sparkplug gives them.
func (e *env) names(node string, attempt int) objects.Names {
	e.t.Helper()
	return objects.NamesFor(objects.Run{Workflow: e.ref(), NodeID: node, Attempt: attempt, Incarnation: e.incarnation()})
}

func (e *env) ref() spark.WorkflowRef {
	return spark.WorkflowRef{Name: e.wf.Name, Namespace: e.ns, UID: string(e.wf.UID)}
}

// at is the env as served by the plugin server at url (another process
// over the same cluster): the same namespace and Workflow, and the tasks
// setTasks last wrote.
func (e *env) at(url string) *env {
	c := *e
	c.url, c.requests, c.stop = url, &atomic.Int64{}, nil
	return &c
}

// updateRole changes the plugin's Role (manifests/rbac.yaml's), reading
// it again on a conflict.
func (e *env) updateRole(change func(*rbacv1.Role)) {
	e.t.Helper()
	ctx := context.Background()
	roles := testCluster.Client.RbacV1().Roles(e.ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		role, err := roles.Get(ctx, "spark-executor-plugin", metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(role)
		_, err = roles.Update(ctx, role, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// taskSet reads the Workflow's TaskSet.
func (e *env) taskSet() *wfv1.WorkflowTaskSet {
	e.t.Helper()
	ts, err := e.wfc.ArgoprojV1alpha1().WorkflowTaskSets(e.ns).Get(context.Background(), e.wf.Name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return ts
}

type response struct {
	status int
	body   string
	reply  executor.ExecuteTemplateReply
}

func (e *env) post(token string, body []byte) response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+"/api/v1/template.execute", bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := response{status: resp.StatusCode, body: string(b)}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &r.reply); err != nil {
			e.t.Fatalf("decode reply %s: %v", b, err)
		}
	}
	return r
}

func (e *env) drivers() []corev1.Pod {
	e.t.Helper()
	pods, err := testCluster.Client.CoreV1().Pods(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: spark.LabelRole + "=" + spark.RoleDriver})
	if err != nil {
		e.t.Fatal(err)
	}
	return pods.Items
}

func (e *env) onlyDriver() corev1.Pod {
	e.t.Helper()
	drivers := e.drivers()
	if len(drivers) != 1 {
		e.t.Fatalf("%d driver pods, want 1", len(drivers))
	}
	return drivers[0]
}

// setDriverStatus sets a pod's status as a kubelet would. It reads and
// writes again on a conflict: sparkplug and the garbage collector write
// the pod's metadata meanwhile.
func (e *env) setDriverStatus(name string, status corev1.PodStatus) {
	e.t.Helper()
	ctx := context.Background()
	pods := testCluster.Client.CoreV1().Pods(e.ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		pod.Status = status
		_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func describe(r executor.ExecuteTemplateReply) string {
	b, _ := json.Marshal(r)
	return string(b)
}

func param(r executor.ExecuteTemplateReply, name string) string {
	if r.Node == nil || r.Node.Outputs == nil {
		return ""
	}
	for _, p := range r.Node.Outputs.Parameters {
		if p.Name == name && p.Value != nil {
			return p.Value.String()
		}
	}
	return ""
}

const sparkPi = `
type: Scala
mode: cluster
image: spark:3.5.3
mainClass: org.apache.spark.examples.SparkPi
mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
arguments: ["1000"]
sparkVersion: 3.5.3
driver:
  cores: 1
  memory: 512m
  serviceAccount: spark
executor:
  cores: 1
  instances: 2
  memory: 512m
`

func running(ready bool) corev1.PodStatus {
	cs := corev1.ContainerStatus{Name: spark.DriverContainerName, Ready: ready, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}
	return corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{cs}}
}

func terminated(phase corev1.PodPhase, code int32, reason, message string) corev1.PodStatus {
	cs := corev1.ContainerStatus{Name: spark.DriverContainerName, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: code, Reason: reason, Message: message, FinishedAt: metav1.Now()}}}
	return corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{cs}}
}

// recordResult patches a node's result into the TaskSet status, as the agent does.
func (e *env) recordResult(node string, r executor.ExecuteTemplateReply) {
	e.t.Helper()
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"nodes": map[string]any{node: r.Node}}})
	if _, err := e.wfc.ArgoprojV1alpha1().WorkflowTaskSets(e.ns).Patch(context.Background(), e.wf.Name, "application/merge-patch+json", patch, metav1.PatchOptions{}, "status"); err != nil {
		e.t.Fatal(err)
	}
}

// removeEntry removes node's entry from the TaskSet's status, as Argo's
// controller does once the node is fulfilled, and as argo retry leaves
// it: a merge patch of null on the status subresource.
func (e *env) removeEntry(node string) {
	e.t.Helper()
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"nodes": map[string]any{node: nil}}})
	if _, err := e.wfc.ArgoprojV1alpha1().WorkflowTaskSets(e.ns).Patch(context.Background(), e.wf.Name, "application/merge-patch+json", patch, metav1.PatchOptions{}, "status"); err != nil {
		e.t.Fatal(err)
	}
}

// testConfig is the sidecar's config in the tests: loopback, the token
// and kubeconfig given, limits high enough not to slow a test down.
func testConfig(tokenFile, kubeconfig string) sidecar.Config {
	o := sidecar.DefaultConfig()
	o.Addr, o.TokenFile, o.Kubeconfig = "127.0.0.1:0", tokenFile, kubeconfig
	o.TTLInterval, o.ShutdownGrace = time.Second, 5*time.Second
	o.Core.Resync, o.Core.WriteGap = 300*time.Millisecond, 100*time.Millisecond
	o.QPS, o.Burst = 50, 100
	return o
}

func startAnotherServer(t *testing.T, e *env, configure ...func(*sidecar.Config)) string {
	t.Helper()
	url, _ := startStoppableServer(t, e, configure...)
	return url
}

// startStoppableServer starts a second plugin server, with the default
// serve options changed by configure's functions, and returns its URL
// and a function that stops it as SIGTERM does (idempotent).
func startStoppableServer(t *testing.T, e *env, configure ...func(*sidecar.Config)) (string, func()) {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := testCluster.WriteServiceAccountKubeconfig(context.Background(), e.ns, "spark-executor-plugin", kubeconfig); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(pluginToken), 0o440); err != nil {
		t.Fatal(err)
	}
	o := testConfig(tokenFile, kubeconfig)
	for _, f := range configure {
		f(&o)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	grantSparkSubmit(t, &o, e.ns)
	addr := make(chan string, 1)
	o.Listening = func(a string) { addr <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sidecar.Run(ctx, o, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("second server: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	select {
	case a := <-addr:
		return "http://" + a, stop
	case err := <-done:
		t.Fatalf("second server: %v", err)
	}
	return "", stop
}

func waiting(reason, message string) corev1.PodStatus {
	cs := corev1.ContainerStatus{Name: spark.DriverContainerName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}
	return corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{cs}}
}

// deleted reports whether the pod is gone or being deleted.
func (e *env) deleted(name string) bool {
	e.t.Helper()
	p, err := testCluster.Client.CoreV1().Pods(e.ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return p.DeletionTimestamp != nil
}

func (e *env) shutdownWorkflow(how wfv1.ShutdownStrategy) {
	e.t.Helper()
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"shutdown": how}})
	if _, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Patch(context.Background(), e.wf.Name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) waitDeleted(name, what string) {
	e.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
		return e.deleted(name), nil
	})
	if err != nil {
		e.t.Fatalf("%s: driver %s was not deleted", what, name)
	}
}
