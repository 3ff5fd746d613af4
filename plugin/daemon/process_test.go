package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/edge"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Every address serves /metrics, /healthz and /readyz; /readyz fails
// until the readiness is set, and says why.
func TestServeHealthServesTheThreePaths(t *testing.T) {
	ready := &Ready{}
	var metricsAddr, healthAddr string
	stop, err := ServeHealth(Health{MetricsAddr: "127.0.0.1:0", HealthAddr: "localhost:0",
		Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("families")) }),
		Ready:   ready, Watchdog: NewWatchdog(), Limits: edge.DefaultLimits(),
		Listening: func(m, h string) { metricsAddr, healthAddr = m, h }}, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if metricsAddr == healthAddr {
		t.Fatalf("two addresses asked, one bound: %s", metricsAddr)
	}
	get := func(addr, path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, addr := range []string{metricsAddr, healthAddr} {
		if code, body := get(addr, "/metrics"); code != http.StatusOK || body != "families" {
			t.Errorf("%s/metrics: %d %q", addr, code, body)
		}
		if code, body := get(addr, "/healthz"); code != http.StatusOK || body != "ok" {
			t.Errorf("%s/healthz: %d %q", addr, code, body)
		}
		if code, body := get(addr, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "starting") {
			t.Errorf("%s/readyz before ready: %d %q", addr, code, body)
		}
	}
	ready.Set(errors.New("API server unreachable"))
	if code, body := get(healthAddr, "/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "API server unreachable") {
		t.Errorf("/readyz on an error: %d %q", code, body)
	}
	ready.Set(nil)
	if code, body := get(healthAddr, "/readyz"); code != http.StatusOK || body != "ok" {
		t.Errorf("/readyz once ready: %d %q", code, body)
	}
}

// The same address for both serves once.
func TestServeHealthOneAddress(t *testing.T) {
	var m, h string
	stop, err := ServeHealth(Health{MetricsAddr: "127.0.0.1:0", HealthAddr: "127.0.0.1:0",
		Metrics: http.NotFoundHandler(), Ready: &Ready{}, Watchdog: NewWatchdog(),
		Listening: func(mm, hh string) { m, h = mm, hh }}, discard())
	if err != nil {
		t.Fatal(err)
	}
	stop()
	// Two listeners would have bound two ports.
	if m != h {
		t.Errorf("metrics %s, health %s: want one server", m, h)
	}
}

// Without election a process leads once, for as long as its context
// lasts, and needs no client.
func TestLeadWithoutElectionLeadsOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	n := 0
	err := Lead(ctx, Election{}, nil, NewWatchdog(), func(lctx context.Context) {
		n++
		if lctx != ctx {
			t.Error("lead did not get the process's context")
		}
	}, discard())
	if err != nil || n != 1 {
		t.Errorf("Lead: %v, led %d times; want nil, once", err, n)
	}
}
