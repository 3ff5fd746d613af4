//go:build integration

package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/plugin/sidecar"
)

// The figures users compare with the Spark operator (which launches about
// 130 to 150 applications a minute, one JVM spark-submit each): how fast
// the plugin launches drivers, and what a launch and a status poll cost
// the API server. Against a real kube-apiserver and etcd on this machine,
// through the plugin's HTTP server, authenticated as its ServiceAccount;
// one request at a time, as one agent's worker sends them.

// BenchmarkLaunch asks about b.N new Spark nodes of one workflow, once
// each: every request creates a driver pod, its ConfigMap and Service.
// With serve's default client limits (--kube-api-qps 20, --kube-api-burst
// 40) the rate of a sidecar is bound by them; unthrottled shows the
// plugin's own cost. Each workflow has a sidecar, and limits, of its own.
func BenchmarkLaunch(b *testing.B) {
	for _, c := range []struct {
		name  string
		qps   float32
		burst int
	}{{"default-limits", 20, 40}, {"unthrottled", 10000, 10000}} {
		b.Run(c.name, func(b *testing.B) {
			benchmarkLaunch(b, func(o *sidecar.Config) { o.QPS, o.Burst = c.qps, c.burst })
		})
	}
}

func benchmarkLaunch(b *testing.B, limits func(*sidecar.Config)) {
	e := newEnv(b, strings.ToLower(fmt.Sprintf("bench-%s-%d", strings.ReplaceAll(b.Name(), "/", "-"), b.N)), limits)
	tasks := map[string]*wfv1.Template{}
	tmpls := make([]*wfv1.Template, b.N)
	for i := range tmpls {
		tmpls[i] = template(b, fmt.Sprintf("pi-%d", i), strings.Replace(sparkPi, `["1000"]`, fmt.Sprintf(`["%d"]`, i), 1))
		tasks[fmt.Sprintf("node-%d", i)] = tmpls[i]
	}
	warm := template(b, "warm", strings.Replace(sparkPi, `["1000"]`, `["-1"]`, 1))
	tasks["warm"] = warm
	e.setTasks(tasks)
	e.execute(warm)             // the workflow's cache starts and syncs
	time.Sleep(2 * time.Second) // the client's burst refills
	e.requests.Store(0)
	b.ResetTimer()
	start := time.Now()
	for _, tmpl := range tmpls {
		if r := e.execute(tmpl); r.Node == nil || r.Node.Phase != wfv1.NodePending {
			b.Fatalf("reply %s; want Pending", describe(r))
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if n := len(e.drivers()); n != b.N+1 {
		b.Fatalf("%d drivers, want %d", n, b.N+1)
	}
	b.ReportMetric(float64(b.N)/elapsed.Minutes(), "launches/min")
	b.ReportMetric(float64(e.requests.Load())/float64(b.N), "api-requests/launch")
}

// BenchmarkPoll asks again and again about a running driver: the agent's
// steady state, every requeue of every running Spark node.
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
		if r := e.execute(tmpl); r.Node == nil || r.Node.Phase != wfv1.NodeRunning {
			b.Fatalf("reply %s; want Running", describe(r))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(e.requests.Load())/float64(b.N), "api-requests/poll")
}
