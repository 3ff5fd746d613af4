//go:build bench

package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
)

// pprofAddr is where the sidecar of a Spark run serves Go's profiles
// (one sidecar at a time runs here).
const pprofAddr = "127.0.0.1:6065"

// heapTop is the live heap by function of the sparkplug serving its
// profiles at addr.
func heapTop(addr string) string {
	out, err := exec.Command("go", "tool", "pprof", "-top", "-sample_index=inuse_space", "http://"+addr+"/debug/pprof/heap").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("(no heap profile: %v: %s)", err, out)
	}
	lines := strings.Split(string(out), "\n")
	return strings.Join(lines[:min(len(lines), 30)], "\n")
}

// ownRequests are sparkplug's Kubernetes client requests so far: the
// controller replicas' in controller mode (the acknowledgers make none),
// else the sum over the sidecars scs.
func ownRequests(t *testing.T, scs []argo.Sidecar) float64 {
	t.Helper()
	if ctl := env.SparkplugControllers; ctl != nil {
		var sum float64
		for i := range ctl.Replicas() {
			sum += metricsSum(t, ctl.MetricsURL(i), "rest_client_requests_total")
		}
		return sum
	}
	var sum float64
	for _, sc := range scs {
		sum += sidecarRequests(t, sc.Addr)
	}
	return sum
}

// logControllerHeap logs the leading controller replica's live heap by
// function while it follows n drivers.
func logControllerHeap(t *testing.T, n int) {
	ctl := env.SparkplugControllers
	leader, err := ctl.Leader(context.Background())
	if err != nil {
		t.Logf("no controller heap: %v", err)
		return
	}
	if addr := ctl.PprofAddr(leader); addr != "" {
		t.Logf("the leading controller's live heap, following %d drivers:\n%s", n, heapTop(addr))
	}
}

// apiRequests is the kube-apiserver's count of requests so far, all
// clients and verbs but WATCH (a watch is one long request).
func apiRequests(t *testing.T) float64 {
	t.Helper()
	b, err := env.Kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("kube-apiserver metrics: %v", err)
	}
	return sumCounter(b, "apiserver_request_total", func(labels string) bool { return !strings.Contains(labels, `verb="WATCH"`) })
}

// writes are the kube-apiserver's counts so far of Workflow updates (PUT) and
// patches and of WorkflowTaskSet status patches, all clients.
func writes(t *testing.T) (workflows, taskSetStatus float64) {
	t.Helper()
	b, err := env.Kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("kube-apiserver metrics: %v", err)
	}
	write := func(labels string) bool {
		return strings.Contains(labels, `verb="PUT"`) || strings.Contains(labels, `verb="UPDATE"`) || strings.Contains(labels, `verb="PATCH"`)
	}
	workflows = sumCounter(b, "apiserver_request_total", func(l string) bool {
		return write(l) && strings.Contains(l, `resource="workflows"`)
	})
	taskSetStatus = sumCounter(b, "apiserver_request_total", func(l string) bool {
		return strings.Contains(l, `verb="PATCH"`) && strings.Contains(l, `resource="workflowtasksets"`) && strings.Contains(l, `subresource="status"`)
	})
	return workflows, taskSetStatus
}

// sidecarRequests is the sidecar's count of its Kubernetes client's
// requests so far.
func sidecarRequests(t *testing.T, addr string) float64 {
	t.Helper()
	return metricsSum(t, "http://"+addr+"/metrics", "rest_client_requests_total")
}

// ownResults are the node results the controller replicas wrote into
// TaskSets so far (controller mode; -1 in sidecar mode, whose sidecars
// have exited with their workflows by the time it is read).
func ownResults(t *testing.T) float64 {
	t.Helper()
	ctl := env.SparkplugControllers
	if ctl == nil {
		return -1
	}
	var sum float64
	for i := range ctl.Replicas() {
		sum += metricsSum(t, ctl.MetricsURL(i), "sparkplug_node_results_written_total")
	}
	return sum
}

// metricsSum is the sum of a counter's samples at a /metrics URL.
func metricsSum(t *testing.T, url, counter string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("sparkplug metrics: %v", err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	return sumCounter(b.Bytes(), counter, func(string) bool { return true })
}

// sumCounter sums the samples of a counter in Prometheus' text format
// whose labels pass keep.
func sumCounter(text []byte, name string, keep func(labels string) bool) float64 {
	var sum float64
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name+"{")
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, ' ')
		v, err := strconv.ParseFloat(rest[i+1:], 64)
		if err == nil && keep(rest[:i]) {
			sum += v
		}
	}
	return sum
}
