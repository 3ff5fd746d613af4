//go:build integration

// sparkplug ui against the real kube-apiserver of the harness, as a user
// whose Role grants only what docs/cli.md says it needs: which node and
// which driver it forwards to, and each error. The forward itself needs
// the driver's kubelet, which the harness has not: the API server
// refuses the stream of a pod on no node, after it authorized it; the
// forwarding is tested in plugin/ui against a port-forward server of the
// test's own.

package main

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sparkplug-io/sparkplug/plugin/ui"
)

// uiRules are the permissions docs/cli.md gives sparkplug ui.
var uiRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}, Verbs: []string{"get"}},
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
	{APIGroups: []string{""}, Resources: []string{"pods/portforward"}, Verbs: []string{"create"}},
}

// Each error is one line: what is wrong, and what to do.
func TestUIErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ui-errors")
	sparkNodes(t, e, "pi-a", "pi-b")
	e.setDriverStatus(driverOf(e, "pi-a", 1), running(true))
	e.setDriverStatus(driverOf(e, "pi-b", 1), waiting("ContainerCreating", ""))
	kubeconfig := reader(t, e, "ui-user", uiRules)
	check := func(what string, args []string, want string) {
		t.Helper()
		status, _, _, err := runIn("", append([]string{"ui", "-n", e.ns, "--kubeconfig", kubeconfig, "--port", "0"}, args...)...)
		if status != 1 || err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: status %d, %v; want 1 and %q", what, status, err, want)
		}
	}
	check("no such workflow", []string{"spark-py"}, "workflow spark-py not found in namespace "+e.ns)
	check("two running", []string{e.wf.Name}, "workflow spark-pi has 2 running Spark nodes: give one (sparkplug ui spark-pi NODE)")
	check("a driver not started", []string{e.wf.Name, "pi-b"}, "driver "+driverOf(e, "pi-b", 1)+" of node spark-pi[0].pi-b has not started yet (ContainerCreating): its Spark UI is not up")
	markFinished(t, e, "pi-b")
	check("a node that ended", []string{e.wf.Name, "pi-b"}, "node spark-pi[0].pi-b is Succeeded, not running: its Spark UI ended with its driver")

	// Without create on pods/portforward: the refusal names it.
	noForward := reader(t, e, "no-forward", uiRules[:2])
	status, _, _, err := runIn("", "ui", e.wf.Name, "-n", e.ns, "--kubeconfig", noForward, "--port", "0")
	if status != 1 || err == nil || !strings.HasPrefix(err.Error(), "sparkplug ui needs create on pods/portforward in namespace "+e.ns) || strings.Contains(err.Error(), "\n") {
		t.Errorf("without pods/portforward: status %d, %v", status, err)
	}
	noPods := reader(t, e, "no-pods", uiRules[:1])
	status, _, _, err = runIn("", "ui", e.wf.Name, "-n", e.ns, "--kubeconfig", noPods, "--port", "0")
	if status != 1 || err == nil || !strings.HasPrefix(err.Error(), "sparkplug ui needs get on pods in namespace "+e.ns) {
		t.Errorf("without get pods: status %d, %v", status, err)
	}
}

// With the documented rights, the one running node's driver is chosen
// and its port-forward asked for, at its UI port; the API server then
// refuses the stream because the pod is on no node, not for a right.
func TestUIForwardsToTheRunningDriver(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "ui-forward")
	sparkNodes(t, e, "pi-a", "pi-b")
	a := driverOf(e, "pi-a", 1)
	e.setDriverStatus(a, running(true))
	markFinished(t, e, "pi-b")
	cfg, err := clientcmd.BuildConfigFromFlags("", reader(t, e, "ui-user", uiRules))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var paths []string
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if strings.HasSuffix(r.URL.Path, "/portforward") {
				mu.Lock()
				paths = append(paths, r.URL.Path)
				mu.Unlock()
			}
			return rt.RoundTrip(r)
		})
	}
	ready := false
	err = ui.Run(context.Background(), kubernetes.NewForConfigOrDie(cfg), wfclient.NewForConfigOrDie(cfg), cfg, ui.Options{
		Namespace: e.ns, Workflow: e.wf.Name, Addresses: []string{"127.0.0.1"}, Port: 0, Ready: func(ui.Forwarding) { ready = true }})
	t.Logf("the forward: %v", err)
	want := "forward the Spark UI of driver " + a + " (port 4040) of node spark-pi[0].pi-a: "
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "needs create") || ready {
		t.Errorf("forward to a pod on no node: %v (ready %v); want %q and the API server's refusal", err, ready, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paths) == 0 || paths[len(paths)-1] != "/api/v1/namespaces/"+e.ns+"/pods/"+a+"/portforward" {
		t.Errorf("port-forwards asked for %q, want %s's", paths, a)
	}
}
