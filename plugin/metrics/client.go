package metrics

import (
	"context"
	"net/url"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientmetrics "k8s.io/client-go/tools/metrics"
)

// The Kubernetes client's own metrics, with the names and labels
// Kubernetes components export (k8s.io/component-base's rest_client_*),
// so the dashboards that watch controllers' API traffic watch sparkplug's
// too: how many requests it makes, with what result, and how long its
// client held them back to stay under --kube-api-qps and --kube-api-burst.
//
// client-go takes one set of hooks per process (tools/metrics.Register is
// a sync.Once), so these collectors are shared: every Metrics registry in
// the process exports the same counts.
var (
	clientRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rest_client_requests_total",
		Help: "Requests the Kubernetes client made, by HTTP status code (or <error>), method and host.",
	}, []string{"code", "method", "host"})
	clientRateLimiterDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rest_client_rate_limiter_duration_seconds",
		Help:    "Time a request waited in the Kubernetes client's rate limiter (--kube-api-qps, --kube-api-burst) before it was sent, by verb and host.",
		Buckets: []float64{.005, .025, .1, .25, .5, 1, 2, 4, 8, 15, 30, 60},
	}, []string{"verb", "host"})
	registerClient sync.Once
)

// hookClient points client-go's metric hooks at the shared collectors,
// once per process.
func hookClient() {
	registerClient.Do(func() {
		clientmetrics.Register(clientmetrics.RegisterOpts{
			RequestResult:      requestResult{},
			RateLimiterLatency: rateLimiterLatency{},
		})
	})
}

type requestResult struct{}

func (requestResult) Increment(_ context.Context, code, method, host string) {
	clientRequests.WithLabelValues(code, method, host).Inc()
}

type rateLimiterLatency struct{}

func (rateLimiterLatency) Observe(_ context.Context, verb string, u url.URL, latency time.Duration) {
	clientRateLimiterDuration.WithLabelValues(verb, u.Host).Observe(latency.Seconds())
}
