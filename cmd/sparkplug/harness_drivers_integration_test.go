//go:build integration

// The harness's drivers: listing them, setting their statuses as a kubelet
// would, waiting for their deletion, and a node's entry in the TaskSet's
// status as the agent records it.

package main

import (
	"context"
	"encoding/json"
	"time"

	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkplug-io/sparkplug/e2e/cluster"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

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

// setDriverStatus sets a pod's status as a kubelet would
// (cluster.SetPodStatus).
func (e *env) setDriverStatus(name string, status corev1.PodStatus) {
	e.t.Helper()
	if err := testCluster.SetPodStatus(context.Background(), e.ns, name, func(s *corev1.PodStatus) { *s = status }); err != nil {
		e.t.Fatal(err)
	}
}

func running(ready bool) corev1.PodStatus { return cluster.Running(spark.DriverContainerName, ready) }

func terminated(phase corev1.PodPhase, code int32, reason, message string) corev1.PodStatus {
	return cluster.Terminated(spark.DriverContainerName, phase, code, reason, message, time.Time{}, time.Now())
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

func waiting(reason, message string) corev1.PodStatus {
	return cluster.Waiting(spark.DriverContainerName, reason, message)
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

func (e *env) waitDeleted(name, what string) {
	e.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
		return e.deleted(name), nil
	})
	if err != nil {
		e.t.Fatalf("%s: driver %s was not deleted", what, name)
	}
}
