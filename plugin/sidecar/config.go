package sidecar

import (
	"net/http"
	"os"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/cleanup"
	"github.com/sparkplug-io/sparkplug/plugin/daemon"
	"github.com/sparkplug-io/sparkplug/plugin/edge"
	"github.com/sparkplug-io/sparkplug/plugin/execute"
	"github.com/sparkplug-io/sparkplug/plugin/setting"
	"github.com/sparkplug-io/sparkplug/plugin/submit"
)

// Config is everything one sidecar runs with.
type Config struct {
	// Addr is the address to listen on; the agent calls localhost at the
	// port in plugin.yaml.
	Addr string
	// TokenFile holds the bearer token the agent sends. It is always
	// checked.
	TokenFile string
	// Kubeconfig is a kubeconfig file; empty: the in-cluster service
	// account.
	Kubeconfig string
	// TemplatesDir overrides the built-in object templates; empty: none.
	TemplatesDir string
	// MetricsAddr also serves Prometheus metrics there; they are always at
	// /metrics on Addr.
	MetricsAddr string
	// PprofAddr serves Go's profiles (net/http/pprof) there, for an
	// engineer who measures the sidecar; empty: nowhere.
	PprofAddr string
	// PodName and PodNamespace name the agent pod this sidecar runs in
	// (plugin.yaml gives them from the downward API): from it the sidecar
	// knows its workflow at start, before any request, and follows its
	// nodes from then on. Empty: it learns the workflow from the first
	// request (a sidecar that restarts alone is then not asked again).
	PodName, PodNamespace string
	// TTLInterval is how often finished drivers are checked against their
	// timeToLiveSeconds.
	TTLInterval time.Duration
	// LeftoverInterval is how often the namespace is searched for the
	// drivers of finished workflows whose time to live ran out (their own
	// sidecar is gone); 0: cleanup.DefaultLeftoverInterval.
	LeftoverInterval time.Duration
	// ShutdownGrace is how long in-flight requests may finish at shutdown.
	ShutdownGrace time.Duration
	// QPS and Burst are the Kubernetes client's rate limits.
	QPS   float32
	Burst int
	// ServerLimits bound the clients of both HTTP servers (Addr's and
	// MetricsAddr's): read, write and idle timeouts, header size. They
	// follow from what Argo's agent does, so serve has no flags for them;
	// a zero field takes edge.DefaultLimits' value.
	ServerLimits edge.Limits
	// Core are the settings of the core (package execute), which follows nodes in both modes.
	Core execute.Options
	// Version is the version the sidecar reports (user agent, logs).
	Version string

	// WrapTransport, when set, wraps the Kubernetes client transport
	// (tests count API requests with it).
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// Listening, when set, receives the bound address.
	Listening func(addr string)
}

// DefaultConfig is the sidecar's defaults, defined here once.
func DefaultConfig() Config {
	return Config{
		Addr:             edge.DefaultAddr,
		TokenFile:        edge.DefaultTokenFile,
		TTLInterval:      15 * time.Second,
		LeftoverInterval: cleanup.DefaultLeftoverInterval,
		ShutdownGrace:    20 * time.Second,
		// A launch is 3 writes (the driver, its ConfigMap and Service):
		// 135 a second launches 45 drivers a second, faster than Argo's
		// controller creates pods at its own defaults (20, 30). The budget is spent only while launching; the API
		// server's priority and fairness keeps it in the workload-low
		// level, one flow per ServiceAccount (docs/operations.md, "How fast").
		QPS:          135,
		Burst:        270,
		ServerLimits: edge.DefaultLimits(),
		Core:         execute.DefaultOptions(),
		Version:      "dev",
	}
}

// Validate rejects a config the sidecar cannot run with, naming the
// setting (package setting), and fills the core's zero settings.
func (c *Config) Validate() error {
	switch {
	case c.Addr == "":
		return setting.Errorf("addr", "is required")
	case c.TokenFile == "":
		return setting.Errorf("token-file", "is required: the bearer token is always checked")
	case (c.PodName == "") != (c.PodNamespace == ""):
		return setting.Errorf("pod-name", "pod-name and pod-namespace are given together (the agent pod's, from the downward API), got %q and %q", c.PodName, c.PodNamespace)
	case c.TTLInterval <= 0:
		return setting.Errorf("ttl-interval", "must be positive, got %s", c.TTLInterval)
	case c.LeftoverInterval < 0:
		return setting.Errorf("ttl-leftover-interval", "must not be negative, got %s", c.LeftoverInterval)
	case c.ShutdownGrace < 0:
		return setting.Errorf("shutdown-grace", "must not be negative, got %s", c.ShutdownGrace)
	case c.QPS <= 0 || c.Burst <= 0:
		return setting.Errorf("kube-api-qps", "the client's rate (%g) and burst (%d) must be positive", c.QPS, c.Burst)
	case c.PprofAddr != "" && !daemon.Loopback(c.PprofAddr):
		return setting.Errorf("pprof-addr", "%q is not a loopback address: profiles (and their command line) are for whoever reaches them, so they are served on 127.0.0.1, ::1 or localhost only (reach them with kubectl port-forward)", c.PprofAddr)
	}
	if c.LeftoverInterval == 0 {
		c.LeftoverInterval = cleanup.DefaultLeftoverInterval
	}
	return c.Core.Validate()
}

// InheritedEnv is what spark-submit gets of this process's environment
// (submit.InheritedEnv).
func InheritedEnv() map[string]string {
	env := map[string]string{}
	for _, k := range submit.InheritedEnv {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	return env
}
