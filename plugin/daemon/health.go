package daemon

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"k8s.io/client-go/tools/leaderelection"

	"github.com/sparkplug-io/sparkplug/plugin/edge"
)

// Health is what a replica of `sparkplug monitor` or `sparkplug
// controller` serves on its metrics and health addresses: /metrics,
// /healthz and /readyz on each.
type Health struct {
	// MetricsAddr and HealthAddr are the addresses; the same address
	// serves once.
	MetricsAddr, HealthAddr string
	// Metrics answers /metrics.
	Metrics http.Handler
	// Ready answers /readyz.
	Ready *Ready
	// Watchdog answers /healthz: a leader that cannot renew its Lease
	// fails it (NewWatchdog).
	Watchdog *leaderelection.HealthzAdaptor
	// Limits bound the servers' clients.
	Limits edge.Limits
	// Listening, when set, receives the bound metrics and health
	// addresses once both listen.
	Listening func(metrics, health string)
}

// NewWatchdog is the /healthz check of a replica that stands for
// leadership: a leader that cannot renew its Lease for 20 s past its
// duration is stuck, /healthz fails, and the kubelet restarts it.
func NewWatchdog() *leaderelection.HealthzAdaptor {
	return leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
}

// ServeHealth serves h until stop is called.
func ServeHealth(h Health, log *slog.Logger) (stop func(), err error) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h.Metrics)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if err := h.Watchdog.Check(r); err != nil {
			http.Error(w, "unhealthy: "+err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := h.Ready.Ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	addrs := []string{h.MetricsAddr}
	if h.HealthAddr != h.MetricsAddr {
		addrs = append(addrs, h.HealthAddr)
	}
	var servers []*http.Server
	stop = func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}
	var bound []string
	for _, addr := range addrs {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			stop()
			return nil, fmt.Errorf("listen on %s: %w", addr, err)
		}
		s := edge.HTTPServer(mux, h.Limits)
		servers = append(servers, s)
		bound = append(bound, ln.Addr().String())
		go func() {
			if err := s.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("server stopped", "addr", ln.Addr().String(), "error", err.Error())
			}
		}()
	}
	log.Info("serving /metrics, /healthz and /readyz", "addrs", bound)
	if h.Listening != nil {
		h.Listening(bound[0], bound[len(bound)-1])
	}
	return stop, nil
}
