package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are sparkplug's metrics. The nil *Metrics records nothing, so
// callers need no checks.
type Metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	drivers  *prometheus.CounterVec
	results  *prometheus.CounterVec
}

// New registers sparkplug's metrics, the Kubernetes client's (shared by
// the process, see client.go) and the Go and process collectors on a fresh
// registry.
func New() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparkplug_template_execute_requests_total",
			Help: "template.execute calls answered, by HTTP status code and node phase (empty: not a spark template).",
		}, []string{"code", "phase"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sparkplug_template_execute_duration_seconds",
			Help:    "Time to answer a template.execute call, by HTTP status code.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"code"}),
		drivers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparkplug_driver_actions_total",
			Help: "What sparkplug did to driver pods: launched, or deleted because a limit ended the attempt (the reason), the workflow ended (workflow_ended) or timeToLiveSeconds ran out (expired).",
		}, []string{"action", "reason"}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparkplug_node_results_written_total",
			Help: "Node results sparkplug wrote into WorkflowTaskSets, by node phase.",
		}, []string{"phase"}),
	}
	hookClient()
	m.registry.MustRegister(m.requests, m.duration, m.drivers, m.results, clientRequests, clientRateLimiterDuration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Collectors are sparkplug's own families and the Kubernetes client's,
// without the Go and process collectors: for a process that serves them
// from a registry of its own (the controller, through the monitor's).
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.requests, m.duration, m.drivers, m.results, clientRequests, clientRateLimiterDuration}
}

// Request records one answered call.
func (m *Metrics) Request(code, phase string, took time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(code, phase).Inc()
	m.duration.WithLabelValues(code).Observe(took.Seconds())
}

// Driver records an action on a driver pod.
func (m *Metrics) Driver(action, reason string) {
	if m == nil {
		return
	}
	m.drivers.WithLabelValues(action, reason).Inc()
}

// Result records one node result written into a WorkflowTaskSet.
func (m *Metrics) Result(phase string) {
	if m == nil {
		return
	}
	m.results.WithLabelValues(phase).Inc()
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}
