//go:build integration

// The harness of the serve integration tests: one real kube-apiserver, etcd
// and controller-manager for the package (TestMain), and per test an env:
// a namespace with manifests/rbac.yaml applied, a Workflow, and the plugin
// serving as its ServiceAccount, with helpers to post requests as the
// agent does, list drivers and set their statuses as a kubelet would
// (harness_workflow_, harness_drivers_ and harness_results_integration_test.go).
// The tests are in serve_<topic>_integration_test.go.

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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/e2e/cluster"
	"github.com/sparkplug-io/sparkplug/plugin/sidecar"
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
	// The plugin's first calls (its access review at start) as soon as
	// the authorizer counts the binding.
	role, err := testCluster.Client.RbacV1().Roles(ns).Get(ctx, "spark-executor-plugin", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := testCluster.WaitAllowed(ctx, ns, "spark-executor-plugin", role.Rules); err != nil {
		t.Fatal(err)
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

// testConfig is the sidecar's config in the tests: loopback, the token
// and kubeconfig given, limits high enough not to slow a test down.
func testConfig(tokenFile, kubeconfig string) sidecar.Config {
	o := sidecar.DefaultConfig()
	o.Addr, o.TokenFile, o.Kubeconfig = "127.0.0.1:0", tokenFile, kubeconfig
	o.TTLInterval, o.ShutdownGrace = time.Second, 5*time.Second
	o.Core.Resync, o.Core.WriteGap = 300*time.Millisecond, 100*time.Millisecond
	// The drivers here never start (no kubelet): these tests read the
	// waits a node shows (SUBMITTED, QUEUED, retries), which the writer
	// would hold back for the interim hold (10 s) first, but for the
	// first result that records a driver; the hold is
	// plugin/nodestatus's lives_test.go's subject, and the controller's
	// tests here run with it.
	o.Core.InterimHold = 0
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
