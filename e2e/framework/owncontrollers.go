package framework

// A sparkplug controller of a test's own, in a namespace of its own: in
// controller mode one process serves every workflow of a namespace, so a
// test that sets its flags, kills, stops or upgrades it gets one that
// serves only that test's workflows, and runs in parallel with the rest.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
)

// ownNamespaces numbers the namespaces OwnControllers makes.
var ownNamespaces atomic.Int32

// OwnControllers installs controller mode's manifests
// (ControllerInstallDir), as a user installs them into a job namespace,
// into a namespace new to t, prepares it as the environment's namespace
// is (PrepareJobNamespace), and starts replicas of the Deployment there
// with args after the harness's flags. The Deployment watches its own
// namespace only (--namespaces=$(POD_NAMESPACE)) and holds its Lease
// there, so what t does to these replicas (Kill, Stop, Start) reaches
// only the workflows t submits into the namespace (Given.Namespace). They
// stop when t ends. Only in controller mode.
func (e *Env) OwnControllers(t testing.TB, replicas int, args ...string) (*SparkplugControllers, string) {
	t.Helper()
	if e.SparkplugControllers == nil {
		t.Fatalf("OwnControllers: the environment is in %s mode, not controller mode", e.Mode())
	}
	ctx := context.Background()
	ns := fmt.Sprintf("own-%d", ownNamespaces.Add(1))
	if err := argo.EnsureNamespace(ctx, e.Cluster, ns); err != nil {
		t.Fatal(err)
	}
	inst, err := RenderInstallFrom(ctx, e.RepoRoot, e.binDir, ControllerInstallDir, ns)
	if err != nil {
		t.Fatal(err)
	}
	if inst.Controller == nil {
		t.Fatalf("%s/ has no Deployment %s", ControllerInstallDir, controllerDeploymentName)
	}
	if err := e.Cluster.Apply(ctx, inst.YAML); err != nil {
		t.Fatalf("apply %s/ into %s: %v", ControllerInstallDir, ns, err)
	}
	if err := e.PrepareJobNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.dir, ns)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dep := *inst.Controller
	dep.Replicas = replicas
	c, err := newSparkplugControllers(ctx, e.Cluster, controllerSpec{
		bin: e.Sidecars.bin, dep: dep, name: dep.Name + "-" + ns, namespace: ns,
		dir: dir, defaults: e.opts.Defaults, extra: args})
	if err != nil {
		t.Fatalf("start sparkplug controller in %s: %v", ns, err)
	}
	e.ownMu.Lock()
	if e.own == nil {
		e.own = map[string]*SparkplugControllers{}
	}
	e.own[ns] = c
	e.ownMu.Unlock()
	t.Cleanup(func() {
		c.stopAll()
		e.ownMu.Lock()
		delete(e.own, ns)
		e.ownMu.Unlock()
	})
	t.Logf("sparkplug controller of its own in namespace %s: %d replicas, flags %v", ns, replicas, args)
	return c, ns
}

// ControllersFor are the sparkplug controller replicas that run the Spark
// steps of namespace: a test's own (OwnControllers), or the environment's;
// nil in sidecar mode.
func (e *Env) ControllersFor(namespace string) *SparkplugControllers {
	e.ownMu.Lock()
	defer e.ownMu.Unlock()
	if c, ok := e.own[namespace]; ok {
		return c
	}
	return e.SparkplugControllers
}

// ownControllers are the tests' own controllers running now.
func (e *Env) ownControllers() []*SparkplugControllers {
	e.ownMu.Lock()
	defer e.ownMu.Unlock()
	var out []*SparkplugControllers
	for _, c := range e.own {
		out = append(out, c)
	}
	return out
}
