//go:build integration

package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkplug-io/sparkplug/e2e/cluster"
)

var testCluster *cluster.Cluster

func TestMain(m *testing.M) {
	os.Exit(cluster.Main(m, cluster.Options{ControllerManager: true},
		func(c *cluster.Cluster) { testCluster = c }))
}

func TestVersion(t *testing.T) {
	if got, want := testCluster.Version, "v1.33.13"; got != want {
		t.Errorf("server version = %q, want %q", got, want)
	}
}

// TestGarbageCollection checks that kube-controller-manager runs: deleting
// an owner removes its dependents.
func TestGarbageCollection(t *testing.T) {
	ctx := t.Context()
	cms := testCluster.Client.CoreV1().ConfigMaps(metav1.NamespaceDefault)

	owner, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gc-owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create owner: %v", err)
	}
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "gc-dependent",
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
		}},
	}}
	if _, err := cms.Create(ctx, dependent, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create dependent: %v", err)
	}

	if err := cms.Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete owner: %v", err)
	}
	start := time.Now()
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := cms.Get(ctx, dependent.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		t.Fatalf("dependent not garbage-collected: %v", err)
	}
	t.Logf("dependent garbage-collected %v after its owner was deleted", time.Since(start).Round(time.Millisecond))
}

// TestServiceAccountConfig checks tokens from the TokenRequest API: the
// default ServiceAccount authenticates, and RBAC denies it what it was not
// granted.
func TestServiceAccountConfig(t *testing.T) {
	ctx := t.Context()
	cfg, err := testCluster.ConfigForServiceAccount(ctx, metav1.NamespaceDefault, "default")
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.CoreV1().Secrets(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Fatalf("list secrets as default/default: err = %v, want Forbidden", err)
	}
}

func TestApply(t *testing.T) {
	ctx := t.Context()
	docs := []byte(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.test.sparkplug.io
spec:
  group: test.sparkplug.io
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
---
apiVersion: v1
kind: Namespace
metadata:
  name: apply-test
---
apiVersion: test.sparkplug.io/v1
kind: Widget
metadata:
  name: w
  namespace: apply-test
spec:
  size: 1
`)
	for i := range 2 { // the second time updates
		if err := testCluster.Apply(ctx, docs); err != nil {
			t.Fatalf("apply #%d: %v", i+1, err)
		}
	}
	if _, err := testCluster.Client.CoreV1().Namespaces().Get(ctx, "apply-test", metav1.GetOptions{}); err != nil {
		t.Errorf("namespace not applied: %v", err)
	}
}

// TestKWOK starts a second cluster of its own, with the scheduler and KWOK,
// and checks that a pod is scheduled onto the fake node and runs.
func TestKWOK(t *testing.T) {
	ctx := t.Context()
	start := time.Now()
	c, err := cluster.Start(ctx, cluster.Options{ControllerManager: true, Scheduler: true, KWOK: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cluster with scheduler and KWOK up in %v", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	t.Cleanup(func() {
		if t.Failed() || testing.Verbose() {
			c.DumpLogs(os.Stderr, 40)
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: "example.invalid/none"}},
		},
	}
	if _, err := c.Client.CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	got := &corev1.Pod{}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := c.Client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = p
		return got.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		t.Fatalf("pod not Running: %v (last: node %q, phase %q)", err, got.Spec.NodeName, got.Status.Phase)
	}
	t.Logf("pod Running %v after the cluster was up", time.Since(start).Round(time.Millisecond))
	if got.Spec.NodeName != cluster.FakeNodeName {
		t.Errorf("pod on node %q, want %q", got.Spec.NodeName, cluster.FakeNodeName)
	}

	// Restarting the API server restarts the scheduler and the
	// controller-manager after it (each log gets a second start line), and
	// a new pod is scheduled and run as before.
	if err := c.RestartAPIServer(ctx); err != nil {
		t.Fatalf("restart API server: %v", err)
	}
	for name, want := range map[string]int{"kube-apiserver": 2, "kube-scheduler": 2, "kube-controller-manager": 2, "kwok": 1} {
		b, err := os.ReadFile(filepath.Join(c.LogDir(), name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		if got := starts(string(b), name); got != want {
			t.Errorf("%s started %d times, want %d", name, got, want)
		}
	}
	start = time.Now()
	pod.Name = "after-restart"
	if _, err := c.Client.CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod after restart: %v", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := c.Client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		t.Fatalf("pod created after the restart not Running: %v", err)
	}
	t.Logf("pod created after the restart Running in %v", time.Since(start).Round(time.Millisecond))
}

// starts counts the lines a component's log holds that start its binary,
// one per start ("### /path/to/name args", beside "### waited ..." notes).
func starts(log, name string) int {
	n := 0
	for line := range strings.Lines(log) {
		if strings.HasPrefix(line, "### ") && strings.Contains(line, "/"+name+" ") {
			n++
		}
	}
	return n
}
