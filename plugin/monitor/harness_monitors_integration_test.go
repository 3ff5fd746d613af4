//go:build integration

// The harness's monitors: started in-process as the monitor's
// ServiceAccount, their metrics scraped and waited for.

package monitor

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkplug-io/sparkplug/plugin/cli"
)

// running is one monitor, run in-process as the monitor's ServiceAccount.
type running struct {
	t       *testing.T
	url     string
	stop    func()
	logPath string
}

// testOptions are the monitor's options in the tests: loopback, short
// intervals, the env's namespace and kubeconfig, and a Lease that
// changes hands in seconds.
func (e *env) testOptions(identity string) Options {
	o := DefaultOptions()
	o.Namespaces, o.Kubeconfig = []string{e.ns}, e.kubeconfig
	o.MetricsAddr, o.HealthAddr = "127.0.0.1:0", "127.0.0.1:0"
	o.MetricsLabels = []string{"app-type"}
	o.TTLInterval = 300 * time.Millisecond
	o.LeaderElectionNamespace, o.Identity = e.ns, identity
	o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 3*time.Second, 2*time.Second, 300*time.Millisecond
	o.Version = cli.Version{Version: "v0.0.0-test", Commit: "abc123", GoVersion: "go1.test"}
	return o
}

// start runs a monitor until the test ends or stop is called.
func (e *env) start(o Options) *running {
	e.t.Helper()
	if err := o.Validate(); err != nil {
		e.t.Fatal(err)
	}
	logPath := filepath.Join(e.t.TempDir(), "monitor.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		e.t.Fatal(err)
	}
	addr := make(chan string, 1)
	o.Listening = func(metrics, _ string) { addr <- metrics }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, o, slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelDebug})))
	}()
	r := &running{t: e.t, logPath: logPath}
	select {
	case a := <-addr:
		r.url = "http://" + a
	case err := <-done:
		e.t.Fatalf("monitor stopped: %v", err)
	case <-time.After(30 * time.Second):
		e.t.Fatal("monitor did not listen")
	}
	stopped := false
	r.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				e.t.Errorf("monitor: %v", err)
			}
		case <-time.After(30 * time.Second):
			e.t.Error("monitor did not stop within 30s")
		}
	}
	e.t.Cleanup(func() {
		r.stop()
		if e.t.Failed() {
			b, _ := os.ReadFile(logPath)
			e.t.Logf("monitor log (%s):\n%s", o.Identity, tail(string(b), 40))
		}
	})
	return r
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// scrape reads the monitor's /metrics.
func (r *running) scrape() map[string]*dto.MetricFamily {
	r.t.Helper()
	resp, err := http.Get(r.url + "/metrics")
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	return families
}

// value is the value of the series of family whose labels include those
// given (a histogram's or summary's sample count); ok false: no series.
func (r *running) value(family string, labels map[string]string) (v float64, ok bool) {
	f := r.scrape()[family]
	if f == nil {
		return 0, false
	}
	for _, m := range f.Metric {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			v += m.Counter.GetValue()
		case m.Gauge != nil:
			v += m.Gauge.GetValue()
		case m.Summary != nil:
			v += float64(m.Summary.GetSampleCount())
		case m.Histogram != nil:
			v += float64(m.Histogram.GetSampleCount())
		}
		ok = true
	}
	return v, ok
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	have := map[string]string{}
	for _, l := range m.Label {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// eventually waits until the metric's value is want.
func (r *running) eventually(family string, labels map[string]string, want float64) {
	r.t.Helper()
	var got float64
	var ok bool
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		got, ok = r.value(family, labels)
		return ok && got == want, nil
	})
	if err != nil {
		r.t.Fatalf("%s%v = %g (a series: %v), want %g", family, labels, got, ok, want)
	}
}

// get is a GET of the monitor's path: its status code and body.
func (r *running) get(path string) (int, string) {
	r.t.Helper()
	resp, err := http.Get(r.url + path)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
