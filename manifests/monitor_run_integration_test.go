//go:build integration

package manifests

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/plugin/cli"
	"github.com/sparkplug-io/sparkplug/plugin/monitor"
	sparkobjects "github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// syncBuffer is a log sink the monitor writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMonitorRunsWithManifestsRBAC runs sparkplug monitor with nothing but
// the rights manifests/monitor gives its ServiceAccount (the chart's
// Roles are the same): it takes its Lease, fills its caches of pods,
// Workflows and Events, and deletes the driver still running of a
// Workflow that ended, recording the Event on the Workflow; no request is
// forbidden.
func TestMonitorRunsWithManifestsRBAC(t *testing.T) {
	ctx := t.Context()
	const ns = "monitor-runs"
	moduleDir, err := argo.ModuleDir(ctx, "..")
	if err != nil {
		t.Fatal(err)
	}
	if err := argo.InstallCRDs(ctx, testCluster, moduleDir, argo.CRDsMinimal, "workflows"); err != nil {
		t.Fatal(err)
	}
	createNamespace(t, ns)
	kubectl(t, ".", "apply", "--server-side", "--field-manager=sparkplug-test", "-k", monitorDir, "-n", ns)

	// A Workflow Argo has completed, and a driver of it still running
	// (pending: no kubelet here), as sparkplug names and labels it.
	workflows := schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "workflows"}
	wf, err := testCluster.Dynamic.Resource(workflows).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
		"metadata": map[string]any{"name": "ended", "labels": map[string]any{
			"workflows.argoproj.io/completed": "true", "workflows.argoproj.io/phase": "Failed"}},
		"spec": map[string]any{"entrypoint": "main"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := spark.WorkflowRef{Name: wf.GetName(), Namespace: ns, UID: string(wf.GetUID())}
	const node = "ended-1234567890"
	driver := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: sparkobjects.NamesFor(sparkobjects.Run{Workflow: ref, NodeID: node, Attempt: 1}).DriverPod,
			Labels: map[string]string{spark.LabelManagedBy: spark.ManagedByValue, spark.LabelRole: spark.RoleDriver,
				spark.LabelWorkflowUID: ref.UID},
			Annotations: map[string]string{spark.AnnotationWorkflowName: ref.Name, spark.AnnotationNodeID: node},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow",
				Name: ref.Name, UID: wf.GetUID()}},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: spark.DriverContainerName, Image: "spark:3.5.3"}}},
	}
	if _, err := testCluster.Client.CoreV1().Pods(ns).Create(ctx, driver, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	kubeconfig := filepath.Join(t.TempDir(), "monitor.kubeconfig")
	if err := testCluster.WriteServiceAccountKubeconfig(ctx, ns, "sparkplug-monitor", kubeconfig); err != nil {
		t.Fatal(err)
	}
	o := monitor.DefaultOptions()
	o.Namespaces = []string{ns}
	o.LeaderElectionNamespace = ns
	o.Kubeconfig = kubeconfig
	o.MetricsAddr, o.HealthAddr = "127.0.0.1:0", "127.0.0.1:0"
	o.TTLInterval = 200 * time.Millisecond
	o.Version = cli.Version{Version: "v0.0.0-test"}
	addrs := make(chan string, 1)
	o.Listening = func(metrics, _ string) { addrs <- metrics }
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- monitor.Run(runCtx, o, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	}()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("monitor: %v", err)
		}
		if l := logs.String(); strings.Contains(strings.ToLower(l), "forbidden") {
			t.Errorf("a request of the monitor was forbidden:\n%s", l)
		}
		if t.Failed() {
			t.Logf("monitor log:\n%s", logs.String())
		}
	}()
	var metricsAddr string
	select {
	case metricsAddr = <-addrs:
	case err := <-done:
		t.Fatalf("monitor ended: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("monitor does not listen")
	}

	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := testCluster.Client.CoreV1().Pods(ns).Get(ctx, driver.Name, metav1.GetOptions{})
		return err != nil, nil
	})
	if err != nil {
		t.Fatalf("the driver of the ended workflow was not deleted: %v", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		events, err := testCluster.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Workflow,involvedObject.name=" + ref.Name + ",reason=SparkDriverDeleted"})
		return err == nil && len(events.Items) == 1, nil
	})
	if err != nil {
		t.Errorf("no SparkDriverDeleted Event on the Workflow: %v", err)
	}
	lease, err := testCluster.Client.CoordinationV1().Leases(ns).Get(ctx, "sparkplug-monitor", metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("the Lease sparkplug-monitor: %v, %+v", err, lease)
	}
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"sparkplug_monitor_leader 1",
		`sparkplug_monitor_drivers_deleted_total{reason="workflow_ended"} 1`,
		`spark_application_count{namespace="` + ns + `"`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
