package monitor

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/sparkplug-io/sparkplug/plugin/cleanup"
)

// Duties are the monitor's work, for the process that runs them
// (`sparkplug monitor`, Run, or `sparkplug controller`, package
// controller): its metrics, served from Registry by every replica, and,
// for each leadership, the counting and the leader's one cleanup loop
// (Lead).
type Duties struct {
	o        Options
	log      *slog.Logger
	registry *prometheus.Registry
	own      *ownMetrics
	labels   labeler
}

// NewDuties makes the duties of o, which must have been validated, with
// the monitor's own metrics (sparkplug_build_info,
// sparkplug_monitor_leader, sparkplug_monitor_drivers_deleted_total)
// registered.
func NewDuties(o Options, log *slog.Logger) (*Duties, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	labels, err := newLabeler(o.MetricsLabels, nil)
	if err != nil {
		return nil, err
	}
	d := &Duties{o: o, log: log, registry: prometheus.NewRegistry(), own: newOwnMetrics(o.Version), labels: labels}
	d.registry.MustRegister(d.own.collectors()...)
	return d, nil
}

// Registry holds the metrics the process serves at /metrics: the
// monitor's, the spark_* families while it leads, and whatever the
// process registers beside them.
func (d *Duties) Registry() *prometheus.Registry { return d.registry }

// Clients are what the duties reach the API server with.
type Clients struct {
	Kube     kubernetes.Interface
	Meta     metadata.Interface
	Recorder record.EventRecorder
}

// Connect makes the duties' clients of cfg, and their Event recorder,
// which records as sparkplug-monitor until ctx is done or stop is
// called.
func Connect(ctx context.Context, cfg *rest.Config) (c Clients, stop func(), err error) {
	if c.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return Clients{}, nil, fmt.Errorf("kubernetes client: %w", err)
	}
	if c.Meta, err = metadata.NewForConfig(cfg); err != nil {
		return Clients{}, nil, fmt.Errorf("metadata client: %w", err)
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.Kube.CoreV1().Events("")})
	c.Recorder = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "sparkplug-monitor"})
	return c, broadcaster.Shutdown, nil
}

// Lead counts and cleans up until ctx (a leadership) is done: with a
// fresh set of spark_* metrics, registered for as long as it leads, and
// fresh informers. expire expires the finished drivers of the workflows
// the process follows (the controller's), in the leader's one cleanup
// loop beside the leftovers; nil: none.
func (d *Duties) Lead(ctx context.Context, c Clients, expire func(context.Context)) {
	if ctx.Err() != nil {
		return
	}
	d.own.leader.Set(1)
	defer d.own.leader.Set(0)
	w := newWatch(c.Kube, c.Meta, d.o.Namespaces)
	labels := d.labels
	labels.workflow = w.workflow
	spark := newSparkMetrics(labels.labelNames(), d.o.StartLatencyBuckets)
	for _, col := range spark.collectors() {
		d.registry.MustRegister(col)
		defer d.registry.Unregister(col)
	}
	wctx, cancel := context.WithCancel(ctx)
	synced, wait := w.start(wctx, newTracker(spark, labels), d.log)
	defer wait()
	defer cancel()
	if !synced {
		return
	}
	d.log.Info("caches filled: counting and cleaning up", "namespaces", d.o.Namespaces)
	cl := cleanup.New(cleanup.Config{Kube: c.Kube, Recorder: c.Recorder, Now: d.o.Now, Log: d.log,
		Workflow: func(ctx context.Context, ns, name string) (metav1.Object, error) {
			return c.Meta.Resource(workflowsResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		},
		Deleted: func(reason string) { d.own.deleted.WithLabelValues(reason).Inc() }})
	// The leader's one cleanup loop: the followed workflows' finished
	// drivers (the controller's), and the leftovers, from the start.
	cleanup.Run(ctx, cleanup.Loop{TTLInterval: d.o.TTLInterval, Expire: expire,
		LeftoverInterval: d.o.LeftoverInterval, SearchFirst: true,
		Leftovers: func(ctx context.Context) { sweep(ctx, cl, w) }})
}
