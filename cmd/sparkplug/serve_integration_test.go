//go:build integration

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/e2e/cluster"
	"github.com/sparkplug-io/sparkplug/plugin/build"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/submit/submittest"
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
}

// newEnv starts the plugin with the tests' serve options, changed by
// configure's functions.
func newEnv(t testing.TB, name string, configure ...func(*serveOptions)) *env {
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

	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := testCluster.WriteServiceAccountKubeconfig(ctx, ns, "spark-executor-plugin", kubeconfig); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(pluginToken), 0o440); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ns: ns, wf: wf, wfc: wfc, requests: &atomic.Int64{}}
	o := serveOptions{
		addr: "127.0.0.1:0", tokenFile: tokenFile, kubeconfig: kubeconfig, logLevel: "debug", logFormat: "text",
		idleTimeout: time.Minute, ttlInterval: 500 * time.Millisecond, shutdownGrace: 5 * time.Second, qps: 50, burst: 100,
		wrapTransport: func(rt http.RoundTripper) http.RoundTripper { return counting{rt, e.requests} },
	}
	o.core.RequeuePending, o.core.RequeueRunning = time.Second, 2*time.Second
	o.core.NotFoundGrace = 3 * time.Second
	for _, f := range configure {
		f(&o)
	}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	o.listening = func(a string) { addr <- a }
	srvCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	logFile, err := os.Create(filepath.Join(dir, "plugin.log"))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		done <- serve(srvCtx, o, slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelDebug})))
	}()
	select {
	case a := <-addr:
		e.url = "http://" + a
	case err := <-done:
		t.Fatalf("server stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("server did not start listening")
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server: %v", err)
		}
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("plugin log:\n%s", tail(string(b), 60))
		}
	})
	return e
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

// setTasks writes the WorkflowTaskSet's open nodes as the controller does.
func (e *env) setTasks(tasks map[string]*wfv1.Template) {
	e.t.Helper()
	ctx := context.Background()
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
	existing, err := client.Get(ctx, e.wf.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = client.Create(ctx, ts, metav1.CreateOptions{})
	case err == nil:
		existing.Spec = spec
		_, err = client.Update(ctx, existing, metav1.UpdateOptions{})
	}
	if err != nil {
		e.t.Fatal(err)
	}
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

// execute posts template.execute for tmpl as the agent does, retrying 503
// (the cache of a new workflow warming up) like the agent.
func (e *env) execute(tmpl *wfv1.Template) executor.ExecuteTemplateReply {
	e.t.Helper()
	body, err := json.Marshal(executor.ExecuteTemplateArgs{
		Workflow: &executor.Workflow{ObjectMeta: executor.ObjectMeta{Name: e.wf.Name, Namespace: e.ns, UID: string(e.wf.UID)}},
		Template: tmpl,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; ; i++ {
		r := e.post(pluginToken, body)
		if r.status == http.StatusServiceUnavailable && i < 10 {
			time.Sleep(time.Second)
			continue
		}
		if r.status != http.StatusOK {
			e.t.Fatalf("status %d: %s", r.status, r.body)
		}
		return r.reply
	}
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

func (e *env) setDriverStatus(name string, status corev1.PodStatus) {
	e.t.Helper()
	ctx := context.Background()
	pod, err := testCluster.Client.CoreV1().Pods(e.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	pod.Status = status
	if _, err := testCluster.Client.CoreV1().Pods(e.ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// eventually polls execute until check accepts the reply.
func (e *env) eventually(tmpl *wfv1.Template, what string, check func(executor.ExecuteTemplateReply) bool) executor.ExecuteTemplateReply {
	e.t.Helper()
	var last executor.ExecuteTemplateReply
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		last = e.execute(tmpl)
		return check(last), nil
	})
	if err != nil {
		e.t.Fatalf("%s: last reply %s", what, describe(last))
	}
	return last
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

func TestSparkPiLifecycle(t *testing.T) {
	e := newEnv(t, "lifecycle")
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"spark-pi-1234": tmpl})

	// Given a SparkPi request, exactly one driver, ConfigMap and Service.
	r := e.execute(tmpl)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending || r.Requeue == nil {
		t.Fatalf("first reply: %s; want Pending with a requeue", describe(r))
	}
	drivers := e.drivers()
	if len(drivers) != 1 {
		t.Fatalf("%d driver pods, want 1", len(drivers))
	}
	d := drivers[0]
	checkDriver(t, e, d)
	if param(r, "driver-pod") != d.Name || param(r, "application-id") != d.Labels[spark.LabelAppSelector] {
		t.Fatalf("outputs %s do not name driver %s", describe(r), d.Name)
	}
	cms, _ := testCluster.Client.CoreV1().ConfigMaps(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: spark.LabelWorkflowUID})
	svcs, _ := testCluster.Client.CoreV1().Services(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: spark.LabelWorkflowUID})
	if len(cms.Items) != 1 || len(svcs.Items) != 1 {
		t.Fatalf("%d configmaps and %d services, want 1 and 1", len(cms.Items), len(svcs.Items))
	}
	for _, obj := range []metav1.Object{&cms.Items[0], &svcs.Items[0]} {
		refs := obj.GetOwnerReferences()
		if len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].UID != d.UID {
			t.Fatalf("%s owners %+v, want the driver pod %s", obj.GetName(), refs, d.UID)
		}
	}
	if !strings.Contains(cms.Items[0].Data[spark.PropertiesFile], "spark.kubernetes.driver.pod.name="+d.Name) {
		t.Fatalf("spark.properties does not name the driver pod:\n%s", cms.Items[0].Data[spark.PropertiesFile])
	}

	// Posting again creates nothing.
	for i := 0; i < 3; i++ {
		e.execute(tmpl)
	}
	if n := len(e.drivers()); n != 1 {
		t.Fatalf("after repeated calls: %d driver pods, want 1", n)
	}

	// Running.
	e.setDriverStatus(d.Name, running(true))
	r = e.eventually(tmpl, "Running", func(r executor.ExecuteTemplateReply) bool {
		return r.Node.Phase == wfv1.NodeRunning
	})
	if !strings.HasPrefix(r.Node.Message, "RUNNING") || r.Requeue == nil {
		t.Fatalf("running reply %s", describe(r))
	}

	// Steady state: polls are answered from the cache, no API request.
	time.Sleep(500 * time.Millisecond)
	before := e.requests.Load()
	for i := 0; i < 20; i++ {
		if r := e.execute(tmpl); r.Node.Phase != wfv1.NodeRunning {
			t.Fatalf("poll %d: %s", i, describe(r))
		}
	}
	if n := e.requests.Load() - before; n != 0 {
		t.Fatalf("20 status polls made %d API requests, want 0", n)
	}

	// The server's own metrics count the calls and the one launch.
	resp, err := http.Get(e.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metricsText, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`sparkplug_driver_actions_total{action="launched",reason=""} 1`, `sparkplug_template_execute_requests_total{code="200",phase="Running"}`} {
		if !strings.Contains(string(metricsText), want) {
			t.Fatalf("/metrics lacks %s", want)
		}
	}

	// Completed.
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	r = e.eventually(tmpl, "Succeeded", func(r executor.ExecuteTemplateReply) bool {
		return r.Node.Phase == wfv1.NodeSucceeded
	})
	if r.Requeue != nil {
		t.Fatalf("terminal reply carries a requeue: %s", describe(r))
	}
	if r.Node.Outputs == nil || r.Node.Outputs.Result == nil || *r.Node.Outputs.Result != d.Labels[spark.LabelAppSelector] {
		t.Fatalf("result is not the application id: %s", describe(r))
	}

	// Each state change is a Kubernetes Event on the Workflow.
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := testCluster.Client.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Workflow,involvedObject.name=" + e.wf.Name})
		if err != nil {
			return false, err
		}
		reasons := map[string]bool{}
		for _, ev := range evs.Items {
			reasons[ev.Reason] = true
		}
		return reasons["SparkSubmitted"] && reasons["SparkRunning"] && reasons["SparkCompleted"], nil
	})
	if err != nil {
		t.Fatalf("no SparkSubmitted, SparkRunning and SparkCompleted Events on the Workflow: %v", err)
	}

	// Deleting the Workflow collects the driver and, through it, its
	// ConfigMap and Service.
	if err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Delete(context.Background(), e.wf.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, _ := testCluster.Client.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
		cms, _ := testCluster.Client.CoreV1().ConfigMaps(e.ns).List(ctx, metav1.ListOptions{LabelSelector: spark.LabelWorkflowUID})
		svcs, _ := testCluster.Client.CoreV1().Services(e.ns).List(ctx, metav1.ListOptions{LabelSelector: spark.LabelWorkflowUID})
		return len(pods.Items)+len(cms.Items)+len(svcs.Items) == 0, nil
	})
	if err != nil {
		t.Fatal("driver, ConfigMap and Service were not garbage-collected after the Workflow was deleted")
	}
}

func checkDriver(t *testing.T, e *env, d corev1.Pod) {
	t.Helper()
	for k := range d.Labels {
		if strings.HasPrefix(k, "workflows.argoproj.io/") {
			t.Fatalf("driver carries Argo's label %s", k)
		}
	}
	want := map[string]string{
		spark.LabelRole:        spark.RoleDriver,
		spark.LabelWorkflowUID: string(e.wf.UID),
		spark.LabelAttempt:     "1",
		spark.LabelVersion:     "3.5.3",
	}
	for k, v := range want {
		if d.Labels[k] != v {
			t.Fatalf("driver label %s=%q, want %q (labels %v)", k, d.Labels[k], v, d.Labels)
		}
	}
	if !strings.HasPrefix(d.Labels[spark.LabelAppSelector], "spark-") || d.Labels[spark.LabelAppName] == "" {
		t.Fatalf("driver lacks Spark's app labels: %v", d.Labels)
	}
	refs := d.OwnerReferences
	if len(refs) != 1 || refs[0].Kind != "Workflow" || refs[0].UID != e.wf.UID {
		t.Fatalf("driver owners %+v, want the Workflow", refs)
	}
	c := d.Spec.Containers[0]
	if c.Name != spark.DriverContainerName || c.Image != "spark:3.5.3" {
		t.Fatalf("driver container %s image %s", c.Name, c.Image)
	}
	args := strings.Join(c.Args, " ")
	if !strings.HasPrefix(args, "driver --properties-file /opt/spark/conf/spark.properties --class org.apache.spark.examples.SparkPi") || !strings.HasSuffix(args, " 1000") {
		t.Fatalf("driver args %q", args)
	}
	if d.Spec.ServiceAccountName != "spark" {
		t.Fatalf("service account %q", d.Spec.ServiceAccountName)
	}
}

func TestFailedDriverReportsExitCodeAndException(t *testing.T) {
	e := newEnv(t, "failure")
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"spark-pi-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, terminated(corev1.PodFailed, 1, "Error",
		"24/01/01 INFO SparkContext: Running Spark\nException in thread \"main\" java.lang.IllegalArgumentException: bad input\n\tat org.apache.spark.examples.SparkPi$.main(SparkPi.scala:10)\n"))
	r := e.eventually(tmpl, "Failed", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeFailed })
	for _, want := range []string{"FAILED", "exited 1", "Error", "java.lang.IllegalArgumentException: bad input"} {
		if !strings.Contains(r.Node.Message, want) {
			t.Fatalf("message %q lacks %q", r.Node.Message, want)
		}
	}
	if param(r, "driver-pod") != d.Name {
		t.Fatalf("a failed node still reports its outputs: %s", describe(r))
	}
}

func TestBadRequests(t *testing.T) {
	e := newEnv(t, "requests")
	good, _ := json.Marshal(executor.ExecuteTemplateArgs{
		Workflow: &executor.Workflow{ObjectMeta: executor.ObjectMeta{Name: e.wf.Name, Namespace: e.ns, UID: string(e.wf.UID)}},
		Template: template(t, "spark-pi", sparkPi),
	})
	if r := e.post("wrong", good); r.status != http.StatusForbidden {
		t.Fatalf("wrong token: status %d, want 403", r.status)
	}
	if r := e.post("", good); r.status != http.StatusForbidden {
		t.Fatalf("no token: status %d, want 403", r.status)
	}
	if r := e.post(pluginToken, []byte("{garbage")); r.status != http.StatusBadRequest || !strings.Contains(r.body, "error") {
		t.Fatalf("garbage: status %d body %s, want 400 with a message", r.status, r.body)
	}
	foreign := &wfv1.Template{Name: "other", Plugin: &wfv1.Plugin{}}
	foreign.Plugin.Value = json.RawMessage(`{"slack":{"channel":"#data"}}`)
	if r := e.execute(foreign); r.Node != nil {
		t.Fatalf("foreign template: %s, want {}", describe(r))
	}
	bad := template(t, "bad", strings.Replace(sparkPi, "memory: 512m\n  serviceAccount", "memory: 12zz\n  serviceAccount", 1))
	r := e.execute(bad)
	if r.Node == nil || r.Node.Phase != wfv1.NodeFailed || !strings.Contains(r.Node.Message, "spark.driver.memory") || !strings.Contains(r.Node.Message, "12zz") {
		t.Fatalf("invalid memory: %s; want Failed naming spark.driver.memory", describe(r))
	}
	if r.Requeue != nil {
		t.Fatalf("a Failed reply carries a requeue: %s", describe(r))
	}
	if n := len(e.drivers()); n != 0 {
		t.Fatalf("bad requests created %d drivers", n)
	}
}

func TestIdenticalTasksGetTheirOwnDrivers(t *testing.T) {
	e := newEnv(t, "identical")
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"wf-a": tmpl, "wf-b": tmpl})
	e.execute(tmpl)
	e.execute(tmpl)
	drivers := e.drivers()
	if len(drivers) != 2 {
		t.Fatalf("%d drivers for two identical tasks, want 2", len(drivers))
	}
	nodes := map[string]bool{}
	for _, d := range drivers {
		nodes[d.Annotations[spark.AnnotationNodeID]] = true
	}
	if !nodes["wf-a"] || !nodes["wf-b"] {
		t.Fatalf("drivers belong to %v, want wf-a and wf-b", nodes)
	}
	// The first to finish is handed out once; the second node gets the other.
	e.setDriverStatus(drivers[0].Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	first := e.eventually(tmpl, "first result", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	// The agent records it for one of the nodes; say wf-b received it.
	e.recordResult("wf-b", first)
	r := e.execute(tmpl)
	if r.Node.Phase.Completed() || param(r, "driver-pod") == param(first, "driver-pod") {
		t.Fatalf("second node while the other driver has not finished: %s; want it still waiting on the other driver", describe(r))
	}
	e.setDriverStatus(drivers[1].Name, terminated(corev1.PodFailed, 1, "Error", "boom"))
	second := e.eventually(tmpl, "second result", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase.Completed() })
	if param(second, "driver-pod") == param(first, "driver-pod") {
		t.Fatalf("both nodes got driver %s", param(first, "driver-pod"))
	}
	if n := len(e.drivers()); n != 2 {
		t.Fatalf("%d drivers at the end, want 2", n)
	}
}

// recordResult patches a node's result into the TaskSet status, as the agent does.
func (e *env) recordResult(node string, r executor.ExecuteTemplateReply) {
	e.t.Helper()
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"nodes": map[string]any{node: r.Node}}})
	if _, err := e.wfc.ArgoprojV1alpha1().WorkflowTaskSets(e.ns).Patch(context.Background(), e.wf.Name, "application/merge-patch+json", patch, metav1.PatchOptions{}, "status"); err != nil {
		e.t.Fatal(err)
	}
}

func TestRestartedPluginContinuesWithTheSameDriver(t *testing.T) {
	ns := "restart"
	e := newEnv(t, ns)
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	// A second server process (a restarted sidecar) over the same cluster.
	again := &env{t: t, ns: ns, wf: e.wf, wfc: e.wfc, requests: &atomic.Int64{}}
	again.url = startAnotherServer(t, e)
	again.execute(tmpl)
	if n := len(e.drivers()); n != 1 {
		t.Fatalf("after a restart: %d drivers, want 1", n)
	}
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	r := again.eventually(tmpl, "Succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	if param(r, "driver-pod") != d.Name {
		t.Fatalf("restarted plugin answered from %s, want %s", param(r, "driver-pod"), d.Name)
	}
}

func TestDriverDeletedBySomeoneElseFailsNotFound(t *testing.T) {
	e := newEnv(t, "deleted")
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	r := e.execute(tmpl)
	e.recordResult("node-1", r) // the agent records the Pending reply with its outputs
	d := e.onlyDriver()
	if err := testCluster.Client.CoreV1().Pods(e.ns).Delete(context.Background(), d.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	r = e.eventually(tmpl, "Failed not found", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeFailed })
	if !strings.Contains(r.Node.Message, "not found") {
		t.Fatalf("message %q, want driver pod not found", r.Node.Message)
	}
	if n := len(e.drivers()); n != 0 {
		t.Fatalf("a deleted driver was silently recreated: %d drivers", n)
	}
}

func startAnotherServer(t *testing.T, e *env, configure ...func(*serveOptions)) string {
	t.Helper()
	url, _ := startStoppableServer(t, e, configure...)
	return url
}

// startStoppableServer starts a second plugin server, with the default
// serve options changed by configure's functions, and returns its URL
// and a function that stops it as SIGTERM does (idempotent).
func startStoppableServer(t *testing.T, e *env, configure ...func(*serveOptions)) (string, func()) {
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
	o := serveOptions{addr: "127.0.0.1:0", tokenFile: tokenFile, kubeconfig: kubeconfig, logLevel: "info", logFormat: "text",
		idleTimeout: time.Minute, ttlInterval: time.Second, shutdownGrace: 5 * time.Second, qps: 50, burst: 100}
	for _, f := range configure {
		f(&o)
	}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	o.listening = func(a string) { addr <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, o, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
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

func TestTemplateTimeoutStopsTheDriver(t *testing.T) {
	e := newEnv(t, "timeout")
	tmpl := template(t, "spark-pi", sparkPi)
	tmpl.Timeout = "3s"
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, running(true))
	r := e.eventually(tmpl, "timed out", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeFailed })
	if !strings.Contains(r.Node.Message, "timed out after 3s") {
		t.Fatalf("message %q, want the timeout", r.Node.Message)
	}
	if !e.deleted(d.Name) {
		t.Fatalf("driver %s still runs after the timeout", d.Name)
	}
}

func TestImagePullBackOffFailsFast(t *testing.T) {
	e := newEnv(t, "imagepull")
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, waiting("ImagePullBackOff", `Back-off pulling image "spark:3.5.3"`))
	r := e.eventually(tmpl, "failed fast", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeFailed })
	if !strings.Contains(r.Node.Message, "ImagePullBackOff") || !strings.Contains(r.Node.Message, "cannot start") {
		t.Fatalf("message %q, want the waiting reason", r.Node.Message)
	}
	if !e.deleted(d.Name) {
		t.Fatalf("stuck driver %s was not removed", d.Name)
	}
	// The stopped driver leaves a tombstone: later calls (a restarted agent
	// asks again) repeat the result and never launch the node again.
	for i := 0; i < 5; i++ {
		again := e.execute(tmpl)
		if again.Node.Phase != wfv1.NodeFailed || again.Node.Message != r.Node.Message {
			t.Fatalf("call %d after the stop: %s, want the same failure", i, describe(again))
		}
	}
	for _, p := range e.drivers() {
		if p.DeletionTimestamp == nil {
			t.Fatalf("a driver was launched again after the stop: %s", p.Name)
		}
	}
	cm, err := testCluster.Client.CoreV1().ConfigMaps(e.ns).Get(context.Background(), build.ConfigMapName(d.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("tombstone: %v", err)
	}
	if refs := cm.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Workflow" || cm.Annotations[spark.AnnotationStopped] != "CannotStart" {
		t.Fatalf("tombstone owners %+v annotations %v", refs, cm.Annotations)
	}
}

func TestPendingTimeout(t *testing.T) {
	e := newEnv(t, "pending")
	tmpl := template(t, "spark-pi", sparkPi+"sparkplug:\n  pendingTimeout: 3s\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, waiting("ContainerCreating", ""))
	if r := e.execute(tmpl); r.Node.Phase != wfv1.NodePending {
		t.Fatalf("within the pending timeout: %s, want Pending", describe(r))
	}
	r := e.eventually(tmpl, "pending timeout", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeFailed })
	if !strings.Contains(r.Node.Message, "did not start within 3s") {
		t.Fatalf("message %q, want the pending timeout", r.Node.Message)
	}
}

func TestOnFailureRetriesThenFails(t *testing.T) {
	e := newEnv(t, "retries")
	tmpl := template(t, "spark-pi", sparkPi+"restartPolicy:\n  type: OnFailure\n  onFailureRetries: 1\n  onFailureRetryInterval: 1\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	first := e.onlyDriver()
	e.setDriverStatus(first.Name, terminated(corev1.PodFailed, 1, "Error", "boom"))
	e.eventually(tmpl, "second attempt", func(r executor.ExecuteTemplateReply) bool { return param(r, "attempt") == "2" })
	drivers := e.drivers()
	if len(drivers) != 2 {
		t.Fatalf("%d drivers after a retry, want 2 (the failed attempt is kept for its logs)", len(drivers))
	}
	var second corev1.Pod
	for _, d := range drivers {
		if d.Labels[spark.LabelAttempt] == "2" {
			second = d
		}
	}
	if second.Name == "" || second.Name == first.Name {
		t.Fatalf("no attempt-2 driver: %v", drivers)
	}
	e.setDriverStatus(second.Name, terminated(corev1.PodFailed, 2, "Error", "boom again"))
	r := e.eventually(tmpl, "final failure", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeFailed })
	if !strings.Contains(r.Node.Message, "attempt 2/2") || !strings.Contains(r.Node.Message, "exited 2") {
		t.Fatalf("message %q, want the last attempt's failure", r.Node.Message)
	}
	if n := len(e.drivers()); n != 2 {
		t.Fatalf("%d drivers after retries were used up, want 2", n)
	}
}

func TestOnFailureNeverRerunsASuccess(t *testing.T) {
	e := newEnv(t, "noreruns")
	tmpl := template(t, "spark-pi", sparkPi+"restartPolicy:\n  type: OnFailure\n  onFailureRetries: 3\n  onFailureRetryInterval: 1\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	e.eventually(tmpl, "succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	time.Sleep(1500 * time.Millisecond) // past the retry interval
	if r := e.execute(tmpl); r.Node.Phase != wfv1.NodeSucceeded {
		t.Fatalf("after the interval: %s", describe(r))
	}
	if n := len(e.drivers()); n != 1 {
		t.Fatalf("a success was rerun: %d drivers", n)
	}
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

func TestTerminatedWorkflowDeletesItsRunningDrivers(t *testing.T) {
	e := newEnv(t, "terminate")
	a := template(t, "a", sparkPi)
	b := template(t, "b", strings.Replace(sparkPi, `["1000"]`, `["2000"]`, 1))
	e.setTasks(map[string]*wfv1.Template{"node-a": a, "node-b": b})
	e.execute(a)
	e.execute(b)
	drivers := e.drivers()
	if len(drivers) != 2 {
		t.Fatalf("%d drivers, want 2", len(drivers))
	}
	// node-a finished, node-b still runs when the workflow is terminated.
	var done, live corev1.Pod
	for _, d := range drivers {
		if d.Annotations[spark.AnnotationNodeID] == "node-a" {
			done = d
		} else {
			live = d
		}
	}
	e.setDriverStatus(done.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	e.setDriverStatus(live.Name, running(true))
	e.eventually(a, "a succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })

	e.shutdownWorkflow(wfv1.ShutdownStrategyTerminate)
	e.waitDeleted(live.Name, "after terminate")
	if e.deleted(done.Name) {
		t.Fatalf("the finished driver %s was deleted too; it is kept for its logs", done.Name)
	}
}

func TestShutdownLeavesRunningWorkflowsAlone(t *testing.T) {
	ns := "sigterm"
	e := newEnv(t, ns)
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	// A second server serves the request and is then stopped (SIGTERM).
	other := &env{t: t, ns: ns, wf: e.wf, wfc: e.wfc, requests: &atomic.Int64{}}
	var stop func()
	other.url, stop = startStoppableServer(t, e)
	other.execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, running(true))
	stop() // the workflow still runs: its driver must survive the sidecar
	if e.deleted(d.Name) {
		t.Fatalf("a sidecar shutdown deleted the driver of a running workflow")
	}
}

// A driver with timeToLiveSeconds of a workflow whose sidecar is gone
// (Argo deletes the agent pod when the workflow ends) is expired by the
// sidecar of a later workflow in the namespace, once its workflow has
// finished, and not before.
func TestTimeToLiveOutlivesTheWorkflowsOwnSidecar(t *testing.T) {
	ns := "ttl-leftovers"
	e := newEnv(t, ns, func(o *serveOptions) { o.core.LeftoverInterval = 300 * time.Millisecond })
	ctx := context.Background()
	nightly, err := e.wfc.ArgoprojV1alpha1().Workflows(ns).Create(ctx, &wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec:       wfv1.WorkflowSpec{Entrypoint: "main"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The nightly workflow's own sidecar launches its last step's driver,
	// which finishes; then the sidecar goes.
	old := &env{t: t, ns: ns, wf: nightly, wfc: e.wfc, requests: &atomic.Int64{}}
	last := template(t, "last", sparkPi+"timeToLiveSeconds: 1\n")
	old.setTasks(map[string]*wfv1.Template{"nightly-1": last})
	var stop func()
	old.url, stop = startStoppableServer(t, e)
	old.execute(last)
	d := e.onlyDriver()
	if d.Labels[spark.LabelTTLSeconds] != "1" {
		t.Fatalf("driver labels %v lack the time to live", d.Labels)
	}
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	stop()

	// A later workflow's sidecar serves the namespace.
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	time.Sleep(2 * time.Second)
	if e.deleted(d.Name) {
		t.Fatal("the driver of a workflow that still runs was expired by another workflow's sidecar")
	}
	nightly, err = e.wfc.ArgoprojV1alpha1().Workflows(ns).Get(ctx, nightly.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nightly.Status.Phase = wfv1.WorkflowSucceeded
	if _, err := e.wfc.ArgoprojV1alpha1().Workflows(ns).Update(ctx, nightly, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitDeleted(d.Name, "its workflow finished and its time to live ran out")
}

// The sidecar stops (SIGTERM: Argo deletes the agent pod when the
// workflow ends) before its Workflow watch has shown that the workflow was
// stopped: the shutdown sweep reads the Workflow afresh and deletes the
// driver that still runs. The watch is frozen so that only the shutdown
// path can delete it.
func TestShutdownSweepsTheDriversOfAStoppedWorkflow(t *testing.T) {
	ns := "sigterm-sweep"
	e := newEnv(t, ns)
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	freezer := &watchFreezer{frozen: make(chan struct{})}
	other := &env{t: t, ns: ns, wf: e.wf, wfc: e.wfc, requests: &atomic.Int64{}}
	var stop func()
	other.url, stop = startStoppableServer(t, e, func(o *serveOptions) { o.wrapTransport = freezer.wrap })
	other.execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, running(true))

	freezer.freeze()
	e.shutdownWorkflow(wfv1.ShutdownStrategyStop)
	// The frozen watch hides the stop: the driver runs on until shutdown.
	time.Sleep(2 * time.Second)
	if e.deleted(d.Name) {
		t.Fatal("the driver was deleted before the sidecar stopped: the Workflow watch was not frozen, and this test proves nothing")
	}
	stop()
	if !e.deleted(d.Name) {
		t.Fatalf("the sidecar stopped after its workflow was stopped, and the driver %s still runs", d.Name)
	}
}

// watchFreezer stalls the events of the plugin's Workflow watches once
// frozen, as if they were slow to arrive; everything else passes.
type watchFreezer struct {
	frozen chan struct{}
	once   sync.Once
}

func (f *watchFreezer) freeze() { f.once.Do(func() { close(f.frozen) }) }

func (f *watchFreezer) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err != nil || r.URL.Query().Get("watch") != "true" || !strings.HasSuffix(r.URL.Path, "/workflows") {
			return resp, err
		}
		resp.Body = &frozenBody{ReadCloser: resp.Body, frozen: f.frozen, closed: make(chan struct{}), ctx: r.Context()}
		return resp, nil
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// frozenBody reads through until frozen, then blocks until closed or the
// request ends.
type frozenBody struct {
	io.ReadCloser
	frozen <-chan struct{}
	closed chan struct{}
	once   sync.Once
	ctx    context.Context
}

func (b *frozenBody) Read(p []byte) (int, error) {
	if !b.isFrozen() {
		n, err := b.ReadCloser.Read(p)
		if !b.isFrozen() {
			return n, err
		}
		// Frozen while this read waited: its event is dropped too.
	}
	select {
	case <-b.closed:
	case <-b.ctx.Done():
	}
	return 0, io.EOF
}

func (b *frozenBody) isFrozen() bool {
	select {
	case <-b.frozen:
		return true
	default:
		return false
	}
}

func (b *frozenBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return b.ReadCloser.Close()
}

func TestTimeToLiveDeletesFinishedDriversOnceRecorded(t *testing.T) {
	e := newEnv(t, "ttl")
	tmpl := template(t, "spark-pi", sparkPi+"timeToLiveSeconds: 1\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	if d.Annotations[spark.AnnotationTTLSeconds] != "1" {
		t.Fatalf("driver annotations %v lack the ttl", d.Annotations)
	}
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	r := e.eventually(tmpl, "succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	// Not yet recorded by the agent: the driver stays past its ttl.
	time.Sleep(2 * time.Second)
	if e.deleted(d.Name) {
		t.Fatal("the driver was deleted before Argo recorded its node's result")
	}
	e.recordResult("node-1", r)
	e.waitDeleted(d.Name, "after its ttl and the recorded result")
}

func TestUIServiceIsCreatedAndOwnedByTheDriver(t *testing.T) {
	e := newEnv(t, "ui")
	tmpl := template(t, "spark-pi", sparkPi+"sparkUIOptions:\n  servicePort: 8080\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	r := e.execute(tmpl)
	d := e.onlyDriver()
	ui, err := testCluster.Client.CoreV1().Services(e.ns).Get(context.Background(), build.UIServiceName(d.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("UI service: %v", err)
	}
	if refs := ui.OwnerReferences; len(refs) != 1 || refs[0].UID != d.UID {
		t.Fatalf("UI service owners %+v, want the driver", refs)
	}
	want := fmt.Sprintf("http://%s.%s.svc:8080", ui.Name, e.ns)
	if got := param(r, "spark-ui"); got != want {
		t.Fatalf("spark-ui output %q, want %q", got, want)
	}
}

// With --ingress-url-format and --ingress-class-name, a step with a UI
// Service gets the Spark UI's Ingress, its driverIngressOptions a Service
// and an Ingress each, all owned by the driver and labelled with the
// workflow; the URL's path is spark.ui.proxyBase and the spark-ui output
// the Ingress's URL. Ingresses lost to a restart between the driver and
// them come back as the other companions do; the driver's deletion
// collects them.
func TestIngressesAreCreatedOwnedAndRestored(t *testing.T) {
	flags := func(o *serveOptions) {
		o.core.IngressURLFormat = "spark.example.com/{{$appNamespace}}/{{$appName}}"
		o.core.IngressClassName = "nginx"
	}
	e := newEnv(t, "ingress", flags)
	tmpl := template(t, "spark-pi", sparkPi+`sparkUIOptions:
  servicePort: 80
  ingressTLS:
    - hosts: [spark.example.com]
      secretName: spark-tls
driverIngressOptions:
  - servicePort: 15002
    ingressURLFormat: "{{$appName}}-connect.example.com"
`)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	r := e.execute(tmpl)
	d := e.onlyDriver()
	run := build.RunName(d.Name)
	ctx := context.Background()
	net := testCluster.Client.NetworkingV1().Ingresses(e.ns)
	core := testCluster.Client.CoreV1()

	if want := "https://spark.example.com/" + e.ns + "/" + run; param(r, "spark-ui") != want {
		t.Errorf("spark-ui output %q, want the Ingress's URL %q", param(r, "spark-ui"), want)
	}
	cm, err := core.ConfigMaps(e.ns).Get(ctx, build.ConfigMapName(d.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if props := cm.Data[spark.PropertiesFile]; !strings.Contains(props, "spark.ui.proxyBase=/"+e.ns+"/"+run+"\n") {
		t.Errorf("spark.properties has no spark.ui.proxyBase of the Ingress's path:\n%s", props)
	}
	check := func(when string) {
		t.Helper()
		list, err := net.List(ctx, metav1.ListOptions{LabelSelector: spark.LabelWorkflowUID + "=" + string(e.wf.UID)})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]networkingv1.Ingress{}
		for _, ing := range list.Items {
			got[ing.Name] = ing
		}
		want := map[string]struct{ host, path, service string }{
			run + "-ui-ingress": {"spark.example.com", "/" + e.ns + "/" + run + "(/|$)(.*)", build.UIServiceName(d.Name)},
			run + "-ing-15002":  {run + "-connect.example.com", "", run + "-driver-15002"},
		}
		if len(got) != len(want) {
			t.Fatalf("%s: Ingresses %v, want %d", when, slices.Collect(maps.Keys(got)), len(want))
		}
		for name, w := range want {
			ing, ok := got[name]
			if !ok {
				t.Fatalf("%s: no Ingress %s", when, name)
			}
			rule := ing.Spec.Rules[0]
			if rule.Host != w.host || rule.HTTP.Paths[0].Path != w.path || rule.HTTP.Paths[0].Backend.Service.Name != w.service ||
				ptr.Deref(ing.Spec.IngressClassName, "") != "nginx" {
				t.Errorf("%s: Ingress %s: class %v, %s%s to %s; want nginx, %s%s to %s", when, name, ing.Spec.IngressClassName,
					rule.Host, rule.HTTP.Paths[0].Path, rule.HTTP.Paths[0].Backend.Service.Name, w.host, w.path, w.service)
			}
			if refs := ing.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].UID != d.UID {
				t.Errorf("%s: Ingress %s owners %+v, want the driver", when, name, refs)
			}
			if _, err := core.Services(e.ns).Get(ctx, w.service, metav1.GetOptions{}); err != nil {
				t.Errorf("%s: the Service of Ingress %s: %v", when, name, err)
			}
		}
	}
	check("after the launch")

	// What a kill between the driver and its Ingresses leaves; a
	// restarted plugin with the same flags puts them back.
	for _, name := range []string{run + "-ui-ingress", run + "-ing-15002"} {
		if err := net.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	again := &env{t: t, ns: e.ns, wf: e.wf, wfc: e.wfc, requests: &atomic.Int64{}}
	again.url = startAnotherServer(t, e, flags)
	again.execute(tmpl)
	check("after a restart")

	if err := core.Pods(e.ns).Delete(ctx, d.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := net.List(ctx, metav1.ListOptions{LabelSelector: spark.LabelWorkflowUID + "=" + string(e.wf.UID)})
		return err == nil && len(list.Items) == 0, err
	})
	if err != nil {
		t.Fatalf("the driver's Ingresses outlived it: %v", err)
	}
}

// A Role from before Ingresses (it may not list them) still serves every
// step without one: the workflow's cache does not wait for Ingresses. A
// step with one runs without it, and a Warning Event says so.
func TestARoleWithoutIngressesServesStepsWithoutThem(t *testing.T) {
	e := newEnv(t, "no-ingress-rbac")
	ctx := context.Background()
	roles := testCluster.Client.RbacV1().Roles(e.ns)
	role, err := roles.Get(ctx, "spark-executor-plugin", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role.Rules = slices.DeleteFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Resources, "ingresses") })
	if _, err := roles.Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	plain := template(t, "spark-pi", sparkPi)
	withIngress := template(t, "spark-pi-ui", sparkPi+"sparkUIOptions: {}\nsparkplug:\n  uiIngress:\n    urlFormat: \"{{$appName}}.spark.example.com\"\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": plain, "node-2": withIngress})
	start := time.Now()
	if r := e.execute(plain); r.Node == nil || r.Node.Phase != wfv1.NodePending || !strings.HasPrefix(r.Node.Message, "SUBMITTED") {
		t.Fatalf("a step without an Ingress: %s; want its driver submitted", describe(r))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the first request took %s: the cache waited for Ingresses it may not list", d)
	}
	r := e.execute(withIngress)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending || !strings.HasPrefix(r.Node.Message, "SUBMITTED") {
		t.Fatalf("a step with an Ingress: %s; want its driver submitted", describe(r))
	}
	e.waitEvent("SparkObjectRefused", "Ingress")
}

// A client-mode request creates the driver pod running spark-submit
// --deploy-mode client, its conf ConfigMap (spark-defaults.conf), the
// headless driver Service and the UI Service, all three owned by the
// driver; the node follows the driver to Succeeded as in cluster mode.
func TestClientModeLifecycle(t *testing.T) {
	e := newEnv(t, "client-mode")
	tmpl := template(t, "spark-pi-client", strings.Replace(sparkPi, "mode: cluster", "mode: client", 1))
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	r := e.execute(tmpl)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending {
		t.Fatalf("first reply: %s; want Pending", describe(r))
	}
	d := e.onlyDriver()
	if want := fmt.Sprintf("http://%s.%s.svc:4040", build.UIServiceName(d.Name), e.ns); param(r, "spark-ui") != want {
		t.Fatalf("spark-ui output %q, want the client-mode UI Service %q", param(r, "spark-ui"), want)
	}
	checkDriverMetadata := func() {
		if d.Labels[spark.LabelWorkflowUID] != string(e.wf.UID) || len(d.OwnerReferences) != 1 || d.OwnerReferences[0].UID != e.wf.UID {
			t.Fatalf("driver labels %v owners %+v, want the workflow's", d.Labels, d.OwnerReferences)
		}
	}
	checkDriverMetadata()
	c := d.Spec.Containers[0]
	if args := strings.Join(c.Args, " "); c.Name != spark.DriverContainerName || !strings.HasPrefix(args, spark.ClientSparkSubmit+" --master k8s://https://kubernetes.default.svc:443 --deploy-mode client --properties-file /opt/spark/conf/spark-defaults.conf") {
		t.Fatalf("driver container %s runs %q", c.Name, args)
	}

	ctx := context.Background()
	core := testCluster.Client.CoreV1()
	cm, err := core.ConfigMaps(e.ns).Get(ctx, build.ConfigMapName(d.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ConfigMap: %v", err)
	}
	defaults := cm.Data[spark.ClientDefaultsFile]
	for _, want := range []string{
		"spark.submit.deployMode=client",
		"spark.kubernetes.driver.pod.name=" + d.Name,
		"spark.driver.host=" + build.ServiceName(d.Name) + "." + e.ns + ".svc",
		"spark.kubernetes.executor.podTemplateFile=/opt/spark/conf/executor-pod-template.yaml",
	} {
		if !strings.Contains(defaults, want+"\n") {
			t.Errorf("spark-defaults.conf lacks %s:\n%s", want, defaults)
		}
	}
	if _, ok := cm.Data[spark.ClientEnvFile]; !ok {
		t.Errorf("ConfigMap has no %s", spark.ClientEnvFile)
	}
	headless, err := core.Services(e.ns).Get(ctx, build.ServiceName(d.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("driver Service: %v", err)
	}
	if headless.Spec.ClusterIP != corev1.ClusterIPNone || headless.Spec.Selector[spark.LabelAppSelector] != d.Labels[spark.LabelAppSelector] || headless.Spec.Selector[spark.LabelRole] != spark.RoleDriver {
		t.Errorf("driver Service clusterIP %q selector %v: want headless, this driver only", headless.Spec.ClusterIP, headless.Spec.Selector)
	}
	ui, err := core.Services(e.ns).Get(ctx, build.UIServiceName(d.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("UI Service: %v", err)
	}
	if len(ui.Spec.Ports) != 1 || ui.Spec.Ports[0].Port != spark.UIPort {
		t.Errorf("UI Service ports %+v, want %d", ui.Spec.Ports, spark.UIPort)
	}
	for _, obj := range []metav1.Object{cm, headless, ui} {
		if refs := obj.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].UID != d.UID {
			t.Errorf("%s owners %+v, want the driver pod %s", obj.GetName(), refs, d.UID)
		}
	}
	svcs, err := core.Services(e.ns).List(ctx, metav1.ListOptions{LabelSelector: spark.LabelWorkflowUID})
	if err != nil || len(svcs.Items) != 2 {
		t.Fatalf("services of the workflow: %v (err %v), want the driver's and the UI's", svcs, err)
	}

	e.setDriverStatus(d.Name, running(true))
	e.eventually(tmpl, "Running", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeRunning })
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	r = e.eventually(tmpl, "Succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	if r.Node.Outputs == nil || r.Node.Outputs.Result == nil || *r.Node.Outputs.Result != d.Labels[spark.LabelAppSelector] || param(r, "driver-pod") != d.Name {
		t.Fatalf("succeeded reply %s: want the application id and the driver pod", describe(r))
	}
	if n := len(e.drivers()); n != 1 {
		t.Fatalf("%d driver pods, want 1", n)
	}
}

// withSparkSubmit gives the plugin a fake Spark distribution
// (plugin/submit/submittest): its spark-submit records each call in
// record and does what c says; with c.Create, it creates the driver pod
// through the kubeconfig sparkplug hands it, as spark-submit would.
func withSparkSubmit(t *testing.T, c submittest.Config) (configure func(*serveOptions), record string) {
	t.Helper()
	c.Record = filepath.Join(t.TempDir(), "calls.jsonl")
	home := submittest.SparkHome(t, c)
	return func(o *serveOptions) {
		o.core.Submit.SparkHome = home
		o.core.Submit.RequestTimeout = 20 * time.Second
	}, c.Record
}

const sparkPiSubmit = sparkPi + "sparkplug:\n  launcher: spark-submit\n"

// A body with launcher spark-submit runs spark-submit once: the driver it
// creates carries sparkplug's labels, annotations and, patched on after,
// the Workflow as owner; sparkplug's own ConfigMap and Services follow
// the application id spark-submit chose, and the node follows the driver
// to Succeeded as a native one.
func TestSparkSubmitLauncherLifecycle(t *testing.T) {
	configure, record := withSparkSubmit(t, submittest.Config{Create: true})
	e := newEnv(t, "spark-submit", configure)
	tmpl := template(t, "spark-pi", sparkPiSubmit)
	e.setTasks(map[string]*wfv1.Template{"spark-pi-1234": tmpl})

	r := e.execute(tmpl)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending || !strings.HasPrefix(r.Node.Message, "SUBMITTED") {
		t.Fatalf("first reply: %s; want Pending SUBMITTED", describe(r))
	}
	calls := submittest.Calls(t, record)
	if len(calls) != 1 {
		t.Fatalf("%d spark-submit runs, want 1", len(calls))
	}
	d := e.onlyDriver()
	if param(r, "driver-pod") != d.Name || param(r, "application-id") != d.Labels[spark.LabelAppSelector] {
		t.Fatalf("outputs %s do not name driver %s (%s)", describe(r), d.Name, d.Labels[spark.LabelAppSelector])
	}
	native := build.NamesFor(build.Run{Workflow: spark.WorkflowRef{Name: e.wf.Name, Namespace: e.ns, UID: string(e.wf.UID)}, NodeID: "spark-pi-1234", Attempt: 1})
	if d.Name != native.DriverPod {
		t.Fatalf("driver %s, want the native launcher's name %s", d.Name, native.DriverPod)
	}
	if d.Labels[spark.LabelAppSelector] == native.AppID {
		t.Fatal("the driver has the native application id; spark-submit makes its own")
	}
	for k, v := range map[string]string{
		spark.LabelRole: spark.RoleDriver, spark.LabelWorkflowUID: string(e.wf.UID), spark.LabelAttempt: "1",
		spark.LabelNode: build.NodeLabel("spark-pi-1234"), spark.LabelManagedBy: spark.ManagedByValue,
	} {
		if d.Labels[k] != v {
			t.Fatalf("driver label %s=%q, want %q (labels %v)", k, d.Labels[k], v, d.Labels)
		}
	}
	if d.Annotations[spark.AnnotationNodeID] != "spark-pi-1234" || d.Annotations[spark.AnnotationWorkflowName] != e.wf.Name {
		t.Fatalf("driver annotations %v", d.Annotations)
	}
	if refs := d.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Workflow" || refs[0].UID != e.wf.UID || refs[0].Controller == nil || !*refs[0].Controller {
		t.Fatalf("driver owners %+v, want the Workflow as controller", refs)
	}
	if c := d.Spec.Containers[0]; c.Name != spark.DriverContainerName || c.Image != "spark:3.5.3" || d.Spec.ServiceAccountName != "spark" {
		t.Fatalf("driver container %s image %s service account %s", c.Name, c.Image, d.Spec.ServiceAccountName)
	}

	// What spark-submit was given.
	call := calls[0]
	if call.Args[0] != "--master" || call.Args[1] != "k8s://"+testCluster.Config.Host || call.Args[2] != "--deploy-mode" || call.Args[3] != "cluster" {
		t.Fatalf("argv starts %q, want --master k8s://%s --deploy-mode cluster", call.Args[:4], testCluster.Config.Host)
	}
	if v, _ := call.Conf(spark.ConfDriverPodName); v != d.Name {
		t.Fatalf("--conf %s=%q, want %s", spark.ConfDriverPodName, v, d.Name)
	}
	if _, ok := call.Conf(spark.ConfDriverHost); ok {
		t.Fatalf("--conf %s passed; spark-submit refuses it", spark.ConfDriverHost)
	}
	if v, _ := call.Conf("spark.kubernetes.submission.requestTimeout"); v != "20000" {
		t.Fatalf("request timeout %q, want 20000", v)
	}
	if got := strings.Join(call.Args[len(call.Args)-2:], " "); got != "local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar 1000" {
		t.Fatalf("argv ends %q", got)
	}
	env := map[string]string{}
	for _, kv := range call.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if env["KUBERNETES_REQUEST_TIMEOUT"] != "20000" || env["KUBECONFIG"] == "" || env["SPARK_HOME"] == "" || len(env) != 4 {
		t.Fatalf("spark-submit's environment %v; want PATH, SPARK_HOME, KUBECONFIG and KUBERNETES_REQUEST_TIMEOUT only", env)
	}

	// sparkplug's ConfigMap (metrics files, the tombstone of a stopped
	// driver) and Service, owned by the driver, selecting its application id.
	cm, err := testCluster.Client.CoreV1().ConfigMaps(e.ns).Get(context.Background(), native.ConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := testCluster.Client.CoreV1().Services(e.ns).Get(context.Background(), native.Service, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range []metav1.Object{cm, svc} {
		if refs := obj.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != d.UID {
			t.Fatalf("%s owners %+v, want the driver", obj.GetName(), refs)
		}
	}
	if svc.Spec.Selector[spark.LabelAppSelector] != d.Labels[spark.LabelAppSelector] {
		t.Fatalf("service selector %v, want the driver's application id %s", svc.Spec.Selector, d.Labels[spark.LabelAppSelector])
	}

	// Repeated calls run spark-submit no more.
	for i := 0; i < 3; i++ {
		e.execute(tmpl)
	}
	if n := len(submittest.Calls(t, record)); n != 1 {
		t.Fatalf("after repeated calls: %d spark-submit runs, want 1", n)
	}
	if n := len(e.drivers()); n != 1 {
		t.Fatalf("after repeated calls: %d drivers, want 1", n)
	}

	e.setDriverStatus(d.Name, running(true))
	e.eventually(tmpl, "Running", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeRunning })
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	r = e.eventually(tmpl, "Succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	if r.Node.Outputs == nil || r.Node.Outputs.Result == nil || *r.Node.Outputs.Result != d.Labels[spark.LabelAppSelector] {
		t.Fatalf("result is not the driver's application id: %s", describe(r))
	}
	if n := len(submittest.Calls(t, record)); n != 1 {
		t.Fatalf("%d spark-submit runs in all, want 1", n)
	}
}

// The plugin-wide --launcher spark-submit applies to bodies that name no
// launcher; a body's launcher native still launches natively.
func TestSparkSubmitLauncherAsThePluginDefault(t *testing.T) {
	configure, record := withSparkSubmit(t, submittest.Config{Create: true})
	e := newEnv(t, "spark-submit-default", configure, func(o *serveOptions) { o.core.Launcher = "spark-submit" })
	tmpl := template(t, "spark-pi", sparkPi)
	nativeTmpl := template(t, "spark-pi-native", sparkPi+"sparkplug:\n  launcher: native\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl, "node-2": nativeTmpl})
	e.execute(tmpl)
	e.execute(nativeTmpl)
	if n := len(submittest.Calls(t, record)); n != 1 {
		t.Fatalf("%d spark-submit runs, want 1 (node-1's)", n)
	}
	if n := len(e.drivers()); n != 2 {
		t.Fatalf("%d drivers, want 2", n)
	}
}

// A spark-submit that fails fails the node with its exit code and the
// exception it printed, as a submission failure; no driver is left.
func TestSparkSubmitFailureFailsTheNode(t *testing.T) {
	configure, record := withSparkSubmit(t, submittest.Config{ExitCode: 1, Stderr: "25/01/31 12:00:00 INFO SparkKubernetesClientFactory: Auto-configuring K8S client using current context from users K8S config file\n" +
		"Exception in thread \"main\" org.apache.spark.SparkException: Please specify spark.kubernetes.file.upload.path property.\n" +
		"\tat org.apache.spark.deploy.k8s.KubernetesUtils$.uploadFileUri(KubernetesUtils.scala:330)\n" +
		"\tat org.apache.spark.deploy.SparkSubmit.main(SparkSubmit.scala)\n"})
	e := newEnv(t, "spark-submit-failure", configure)
	tmpl := template(t, "spark-pi", sparkPiSubmit)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	r := e.execute(tmpl)
	want := "SUBMISSION_FAILED: spark-submit exited 1: Exception in thread \"main\" org.apache.spark.SparkException: Please specify spark.kubernetes.file.upload.path property."
	if r.Node == nil || r.Node.Phase != wfv1.NodeFailed || r.Node.Message != want || r.Requeue != nil {
		t.Fatalf("reply %s; want Failed %q", describe(r), want)
	}
	if n := len(e.drivers()); n != 0 {
		t.Fatalf("%d drivers, want none", n)
	}
	if n := len(submittest.Calls(t, record)); n != 1 {
		t.Fatalf("%d spark-submit runs, want 1", n)
	}
}

// A spark-submit slower than a request goes on in the background: the
// node is Pending "spark-submit running" meanwhile, the polls start no
// second spark-submit, and the driver it creates is followed as any.
func TestSparkSubmitSlowerThanARequest(t *testing.T) {
	configure, record := withSparkSubmit(t, submittest.Config{Create: true, Sleep: "2s"})
	e := newEnv(t, "spark-submit-slow", configure, func(o *serveOptions) { o.core.SubmitWait = 200 * time.Millisecond })
	tmpl := template(t, "spark-pi", sparkPiSubmit)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	r := e.execute(tmpl)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending || r.Node.Message != "SUBMITTED: spark-submit running" || r.Requeue == nil {
		t.Fatalf("first reply %s; want Pending, spark-submit running", describe(r))
	}
	r = e.eventually(tmpl, "the driver", func(r executor.ExecuteTemplateReply) bool { return param(r, "driver-pod") != "" })
	d := e.onlyDriver()
	if param(r, "driver-pod") != d.Name || r.Node.Phase != wfv1.NodePending {
		t.Fatalf("reply %s; want driver %s, Pending", describe(r), d.Name)
	}
	if n := len(submittest.Calls(t, record)); n != 1 {
		t.Fatalf("%d spark-submit runs, want 1", n)
	}
	if refs := d.OwnerReferences; len(refs) != 1 || refs[0].UID != e.wf.UID {
		t.Fatalf("driver owners %+v, want the Workflow", refs)
	}
}
