//go:build integration

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkplug-io/sparkplug/plugin/controller"
)

// BenchmarkControllerManyWorkflows is controller mode's pattern: N
// workflows of one Spark step each, all open when the controller starts
// (a CronWorkflow's runs, or a new leader). It reports the time until
// every node has its driver, the controller's API requests per launch
// (discovery, each workflow's cache, the launch, the result), and the
// benchmark process's Go heap and resident memory once all drivers run:
// an upper bound of the controller's, since the process also holds the
// test's clients. Against a real kube-apiserver, no Argo.
func BenchmarkControllerManyWorkflows(b *testing.B) {
	for _, n := range []int{200, 1000} {
		b.Run(fmt.Sprintf("workflows=%d", n), func(b *testing.B) {
			for i := range b.N {
				controllerManyWorkflows(b, n, i)
			}
		})
	}
}

func controllerManyWorkflows(b *testing.B, n, run int) {
	b.StopTimer()
	e := newControllerEnv(b, fmt.Sprintf("bench-controller-%d-%d", n, run))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			wf, err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Create(context.Background(), &wfv1.Workflow{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("wf-%d", i)},
				Spec:       wfv1.WorkflowSpec{Entrypoint: "main"},
			}, metav1.CreateOptions{})
			if err != nil {
				b.Error(err)
				return
			}
			w := *e
			w.wf = wf
			id := fmt.Sprintf("wf-%d-1", i)
			w.setTasks(map[string]*wfv1.Template{id: template(b, "pi", strings.Replace(sparkPi, `["1000"]`, `["`+strconv.Itoa(i)+`"]`, 1))})
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}

	var requests atomic.Int64
	c := controller.DefaultConfig()
	c.Monitor.Namespaces = []string{e.ns}
	c.Monitor.LeaderElect = false
	c.Monitor.Kubeconfig = e.kubeconfig
	c.Monitor.MetricsAddr, c.Monitor.HealthAddr = "127.0.0.1:0", "127.0.0.1:0"
	c.Monitor.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return counting{rt, &requests} }
	if err := c.Validate(); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	b.StartTimer()
	start := time.Now()
	go func() { done <- controller.Run(ctx, c, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 10*time.Minute, true, func(context.Context) (bool, error) {
		return len(e.drivers()) >= n, nil
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil {
		cancel()
		b.Fatalf("%d of %d drivers after %s", len(e.drivers()), n, elapsed)
	}
	sent := requests.Load()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss := residentMiB()
	cancel()
	if err := <-done; err != nil {
		b.Error(err)
	}
	b.ReportMetric(elapsed.Seconds(), "s-to-all-drivers")
	b.ReportMetric(float64(n)/elapsed.Minutes(), "drivers/min")
	b.ReportMetric(float64(sent)/float64(n), "api-requests/launch")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
	b.ReportMetric(rss, "process-rss-MiB")
}

// residentMiB is this process's resident memory (VmRSS), 0 where /proc
// cannot say.
func residentMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}
