package monitor

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/leaderelection"

	"github.com/sparkplug-io/sparkplug/plugin/cli"
	"github.com/sparkplug-io/sparkplug/plugin/daemon"
	"github.com/sparkplug-io/sparkplug/plugin/edge"
	"github.com/sparkplug-io/sparkplug/plugin/setting"
)

// EnvPodNamespace is the environment variable the Deployment sets to its
// own namespace (the downward API): the default of --namespaces and of
// --leader-election-namespace.
const EnvPodNamespace = "POD_NAMESPACE"

// Options are everything one monitor runs with. The names of the settings
// (in errors, package setting) are its command's flags.
type Options struct {
	// Namespaces are the namespaces whose drivers, executors, Workflows
	// and Events are watched: one set of informers each, so a Role per
	// namespace is all the monitor needs.
	Namespaces []string
	// MetricsAddr serves /metrics; HealthAddr /healthz and /readyz. Both
	// serve all three paths; the same address serves once.
	MetricsAddr, HealthAddr string
	// MetricsLabels are pod labels that become labels of every spark_*
	// family, as the Spark operator's --metrics-labels.
	MetricsLabels []string
	// StartLatencyBuckets are the upper bounds of
	// spark_application_start_latency_seconds_histogram.
	StartLatencyBuckets []float64
	// TTLInterval is how often drivers are checked for deletion: the
	// finished drivers of the workflows the controller follows
	// (Duties.Lead's expire), and, unless LeftoverInterval says
	// otherwise, the leftovers.
	TTLInterval time.Duration
	// LeftoverInterval is how often the leader searches for leftovers
	// (package cleanup); 0: every TTLInterval (the monitor's own).
	LeftoverInterval time.Duration
	// LeaderElect makes the replicas elect one leader through a Lease
	// named LeaderElectionID in LeaderElectionNamespace; only the leader
	// counts and deletes. Off, this process always leads.
	LeaderElect                               bool
	LeaderElectionNamespace, LeaderElectionID string
	// LeaseDuration, RenewDeadline and RetryPeriod are the Lease's timing
	// (client-go's leaderelection.LeaderElectionConfig); no flags: the
	// defaults are those of Kubernetes' own controllers.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Identity names this replica in the Lease; empty: the host name
	// with a random suffix.
	Identity string
	// Kubeconfig is a kubeconfig file; empty: the in-cluster service
	// account.
	Kubeconfig string
	// QPS and Burst are the Kubernetes client's rate limits.
	QPS   float32
	Burst int
	// ServerLimits bound the clients of the HTTP servers; a zero field
	// takes edge.DefaultLimits' value.
	ServerLimits edge.Limits
	// Version is what sparkplug_build_info reports.
	Version cli.Version

	// Now is the clock of the time-to-live checks; nil: time.Now.
	Now func() time.Time
	// WrapTransport, when set, wraps the Kubernetes client transport.
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// Listening, when set, receives the bound metrics and health
	// addresses once both listen.
	Listening func(metrics, health string)
}

// Client is how the duties reach the API server, as o says, named
// sparkplug-monitor.
func (o Options) Client() daemon.Client {
	return daemon.Client{Kubeconfig: o.Kubeconfig, QPS: o.QPS, Burst: o.Burst,
		UserAgent: "sparkplug-monitor/" + o.Version.Version, WrapTransport: o.WrapTransport}
}

// Election is how the replicas elect their leader, as o says.
func (o Options) Election() daemon.Election {
	return daemon.Election{Enabled: o.LeaderElect, Namespace: o.LeaderElectionNamespace, Name: o.LeaderElectionID,
		LeaseDuration: o.LeaseDuration, RenewDeadline: o.RenewDeadline, RetryPeriod: o.RetryPeriod, Identity: o.Identity}
}

// Health is what a replica serves, as o says: registry's metrics, ready
// and watchdog.
func (o Options) Health(registry *prometheus.Registry, ready *daemon.Ready, watchdog *leaderelection.HealthzAdaptor) daemon.Health {
	return daemon.Health{MetricsAddr: o.MetricsAddr, HealthAddr: o.HealthAddr,
		Metrics: promhttp.HandlerFor(registry, promhttp.HandlerOpts{Registry: registry}),
		Ready:   ready, Watchdog: watchdog, Limits: o.ServerLimits, Listening: o.Listening}
}

// DefaultStartLatencyBuckets are the Spark operator's
// --metrics-job-start-latency-buckets default.
var DefaultStartLatencyBuckets = []float64{30, 60, 90, 120, 150, 180, 210, 240, 270, 300}

// submitLatencyBuckets are the Spark operator's
// --metrics-job-submit-latency-buckets default. The monitor has no flag
// for them: scheduling takes seconds, not the minutes a start may take.
var submitLatencyBuckets = []float64{0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256}

// DefaultOptions are the monitor's defaults, defined here once.
// Namespaces and LeaderElectionNamespace have none: the command takes
// them from EnvPodNamespace.
func DefaultOptions() Options {
	return Options{
		MetricsAddr:         ":9090",
		HealthAddr:          ":8081",
		StartLatencyBuckets: slices.Clone(DefaultStartLatencyBuckets),
		TTLInterval:         time.Minute,
		LeaderElect:         true,
		LeaderElectionID:    "sparkplug-monitor",
		LeaseDuration:       15 * time.Second,
		RenewDeadline:       10 * time.Second,
		RetryPeriod:         2 * time.Second,
		QPS:                 20,
		Burst:               40,
		ServerLimits:        edge.DefaultLimits(),
	}
}

// Validate rejects options the monitor cannot run with, naming the
// setting.
func (o *Options) Validate() error {
	if len(o.Namespaces) == 0 {
		return setting.Errorf("namespaces", "is required: the namespaces whose Spark drivers to watch (default: $%s)", EnvPodNamespace)
	}
	seen := map[string]bool{}
	for _, ns := range o.Namespaces {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return setting.Errorf("namespaces", "%q is not a namespace name: %s", ns, errs[0])
		}
		if seen[ns] {
			return setting.Errorf("namespaces", "%q is given twice", ns)
		}
		seen[ns] = true
	}
	if _, err := newLabeler(o.MetricsLabels, nil); err != nil {
		return setting.Errorf("metrics-labels", "%s", err)
	}
	switch {
	case o.MetricsAddr == "":
		return setting.Errorf("metrics-addr", "is required")
	case o.HealthAddr == "":
		return setting.Errorf("health-addr", "is required")
	case o.TTLInterval <= 0:
		return setting.Errorf("ttl-interval", "must be positive, got %s", o.TTLInterval)
	case o.LeftoverInterval < 0:
		return setting.Errorf("ttl-leftover-interval", "must not be negative, got %s", o.LeftoverInterval)
	case o.QPS <= 0 || o.Burst <= 0:
		return setting.Errorf("kube-api-qps", "the client's rate (%g) and burst (%d) must be positive", o.QPS, o.Burst)
	}
	if err := validBuckets(o.StartLatencyBuckets); err != nil {
		return setting.Errorf("metrics-job-start-latency-buckets", "%s", err)
	}
	if !o.LeaderElect {
		return nil
	}
	if o.LeaderElectionNamespace == "" {
		return setting.Errorf("leader-election-namespace", "is required with --leader-elect (default: $%s): where the Lease is", EnvPodNamespace)
	}
	if errs := validation.IsDNS1123Label(o.LeaderElectionNamespace); len(errs) > 0 {
		return setting.Errorf("leader-election-namespace", "%q is not a namespace name: %s", o.LeaderElectionNamespace, errs[0])
	}
	if errs := validation.IsDNS1123Subdomain(o.LeaderElectionID); len(errs) > 0 {
		return setting.Errorf("leader-election-id", "%q is not a Lease name: %s", o.LeaderElectionID, errs[0])
	}
	if o.LeaseDuration <= o.RenewDeadline || o.RenewDeadline <= o.RetryPeriod || o.RetryPeriod <= 0 {
		return fmt.Errorf("the Lease's timing must be duration %s > renew deadline %s > retry period %s > 0", o.LeaseDuration, o.RenewDeadline, o.RetryPeriod)
	}
	return nil
}

// validBuckets: at least one bound, each above the one before.
func validBuckets(b []float64) error {
	if len(b) == 0 {
		return fmt.Errorf("give at least one upper bound")
	}
	for i := 1; i < len(b); i++ {
		if b[i] <= b[i-1] {
			return fmt.Errorf("the bounds must increase, got %g after %g", b[i], b[i-1])
		}
	}
	return nil
}
