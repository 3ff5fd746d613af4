//go:build integration

package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"

	"github.com/sparkplug-io/sparkplug/plugin/sidecar"
)

// The figures users compare with the Spark operator (which launches about
// 130 to 150 applications a minute, one JVM spark-submit each): how fast
// the plugin launches drivers, and what a launch and a status poll cost
// the API server. Against a real kube-apiserver and etcd on this machine,
// through the plugin's HTTP server, authenticated as its ServiceAccount;
// one request at a time, as one agent's worker sends them.

// BenchmarkLaunch lists b.N new Spark nodes of one workflow at once, as
// Argo's controller lists a loop's children, and waits until each node's
// entry names its driver: every node gets a driver pod, its ConfigMap and
// Service, and its result written into the TaskSet (the writes batched).
// With serve's default client limits (sidecar.DefaultConfig's
// --kube-api-qps and --kube-api-burst) the rate of a sidecar is bound by
// them; unthrottled shows the plugin's own cost. Each workflow has a sidecar, and limits, of its own.
func BenchmarkLaunch(b *testing.B) {
	for _, c := range []struct {
		name  string
		qps   float32
		burst int
	}{{"default-limits", sidecar.DefaultConfig().QPS, sidecar.DefaultConfig().Burst}, {"unthrottled", 10000, 10000}} {
		b.Run(c.name, func(b *testing.B) {
			benchmarkLaunch(b, func(o *sidecar.Config) { o.QPS, o.Burst = c.qps, c.burst })
		})
	}
}

func benchmarkLaunch(b *testing.B, limits func(*sidecar.Config)) {
	e := newEnv(b, strings.ToLower(fmt.Sprintf("bench-%s-%d", strings.ReplaceAll(b.Name(), "/", "-"), b.N)), limits)
	warm := template(b, "warm", strings.Replace(sparkPi, `["1000"]`, `["-1"]`, 1))
	tasks := map[string]*wfv1.Template{"warm": warm}
	e.setTasks(tasks)
	e.execute(warm)             // the workflow's cache starts and syncs
	time.Sleep(2 * time.Second) // the client's burst refills
	for i := range b.N {
		tasks[fmt.Sprintf("node-%d", i)] = template(b, fmt.Sprintf("pi-%d", i), strings.Replace(sparkPi, `["1000"]`, fmt.Sprintf(`["%d"]`, i), 1))
	}
	e.requests.Store(0)
	b.ResetTimer()
	start := time.Now()
	e.setTasks(tasks)
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, time.Minute+time.Duration(b.N)*time.Second, true, func(context.Context) (bool, error) {
		nodes := e.taskSet().Status.Nodes
		for id := range tasks {
			r := nodes[id]
			if r.Phase != wfv1.NodePending || param(executor.ExecuteTemplateReply{Node: &r}, "driver-pod") == "" {
				return false, nil
			}
		}
		return true, nil
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatalf("not every node's entry names its driver, Pending: %v", err)
	}
	if n := len(e.drivers()); n != b.N+1 {
		b.Fatalf("%d drivers, want %d", n, b.N+1)
	}
	b.ReportMetric(float64(b.N)/elapsed.Minutes(), "launches/min")
	b.ReportMetric(float64(e.requests.Load())/float64(b.N), "api-requests/launch")
	perLaunch := elapsed / time.Duration(b.N)
	raw := e.rawCreates(b, min(b.N, 200))
	b.ReportMetric(float64(perLaunch)/float64(time.Millisecond), "ms/launch")
	b.ReportMetric(float64(raw)/float64(time.Millisecond), "raw-create-ms")
	b.ReportMetric(float64(perLaunch)/float64(raw), "launch/raw-create")
}

// rawCreates creates n copies of one launch's objects, the driver pod then
// its ConfigMap and Service owned by it, one after another, as the
// plugin's ServiceAccount without client limits, and returns the time per
// copy: what a launch through the plugin is compared with, on the same API
// server in the same run.
func (e *env) rawCreates(b *testing.B, n int) time.Duration {
	b.Helper()
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", e.kubeconfig)
	if err != nil {
		b.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 1e6, 1e6
	kube := kubernetes.NewForConfigOrDie(cfg)
	driver := e.drivers()[0]
	owned := func(refs []metav1.OwnerReference) bool {
		return slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return r.UID == driver.UID })
	}
	var cm *corev1.ConfigMap
	cms, err := testCluster.Client.CoreV1().ConfigMaps(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range cms.Items {
		if owned(cms.Items[i].OwnerReferences) {
			cm = &cms.Items[i]
		}
	}
	var svc *corev1.Service
	svcs, err := testCluster.Client.CoreV1().Services(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range svcs.Items {
		if owned(svcs.Items[i].OwnerReferences) {
			svc = &svcs.Items[i]
		}
	}
	if cm == nil || svc == nil {
		b.Fatalf("driver %s has no ConfigMap or Service to copy", driver.Name)
	}
	// Copies that no cache of the plugin's selects.
	copyMeta := func(m metav1.ObjectMeta, name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: m.Namespace, Labels: map[string]string{"raw-create": "copy"}, Annotations: m.Annotations, OwnerReferences: m.OwnerReferences}
	}
	start := time.Now()
	for i := range n {
		name := fmt.Sprintf("raw-%d", i)
		pod := &corev1.Pod{ObjectMeta: copyMeta(driver.ObjectMeta, name), Spec: driver.Spec}
		pod.Spec.NodeName = ""
		created, err := kube.CoreV1().Pods(e.ns).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			b.Fatalf("raw create: %v", err)
		}
		ref := []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: created.Name, UID: created.UID}}
		c := &corev1.ConfigMap{ObjectMeta: copyMeta(cm.ObjectMeta, name), Data: cm.Data}
		c.OwnerReferences = ref
		if _, err := kube.CoreV1().ConfigMaps(e.ns).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			b.Fatalf("raw create: %v", err)
		}
		s := &corev1.Service{ObjectMeta: copyMeta(svc.ObjectMeta, name), Spec: corev1.ServiceSpec{
			ClusterIP: svc.Spec.ClusterIP, Selector: svc.Spec.Selector, Ports: svc.Spec.Ports, PublishNotReadyAddresses: svc.Spec.PublishNotReadyAddresses}}
		if s.Spec.ClusterIP != corev1.ClusterIPNone {
			s.Spec.ClusterIP = ""
		}
		s.OwnerReferences = ref
		if _, err := kube.CoreV1().Services(e.ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			b.Fatalf("raw create: %v", err)
		}
	}
	return time.Since(start) / time.Duration(n)
}

// BenchmarkPoll asks again and again about a running node, as a
// restarted agent asks again about every listed node: each request is
// only acknowledged, and the node's pass it queues finds nothing to do.
func BenchmarkPoll(b *testing.B) {
	e := newEnv(b, fmt.Sprintf("bench-poll-%d", b.N))
	tmpl := template(b, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	e.setDriverStatus(e.onlyDriver().Name, running(true))
	for r := e.execute(tmpl); r.Node.Phase != wfv1.NodeRunning; r = e.execute(tmpl) {
		time.Sleep(50 * time.Millisecond)
	}
	e.requests.Store(0)
	b.ResetTimer()
	for range b.N {
		if r := e.ask(tmpl); !isAck(r) {
			b.Fatalf("reply %s; want the acknowledgement", describe(r))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(e.requests.Load())/float64(b.N), "api-requests/poll")
}
