package monitor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"

	"github.com/sparkplug-io/sparkplug/plugin/cleanup"
	"github.com/sparkplug-io/sparkplug/plugin/daemon"
	"github.com/sparkplug-io/sparkplug/plugin/edge"
	"github.com/sparkplug-io/sparkplug/plugin/kube"
)

// monitor is one replica.
type monitor struct {
	o        Options
	log      *slog.Logger
	kube     kubernetes.Interface
	meta     metadata.Interface
	recorder record.EventRecorder
	registry *prometheus.Registry
	own      *ownMetrics
	labels   labeler
}

// Run runs the monitor until ctx is done: it serves /metrics, /healthz and
// /readyz at once, then stands for leadership (or leads, without leader
// election) and, while it leads, counts and cleans up. o must have been
// validated. It returns an error only when it cannot start.
func Run(ctx context.Context, o Options, log *slog.Logger) error {
	if o.Now == nil {
		o.Now = time.Now
	}
	labels, err := newLabeler(o.MetricsLabels, nil)
	if err != nil {
		return err
	}
	m := &monitor{o: o, log: log, registry: prometheus.NewRegistry(), own: newOwnMetrics(o.Version), labels: labels}
	m.registry.MustRegister(m.own.collectors()...)
	m.registry.MustRegister(o.Collectors...)

	// Serve before anything slow: probes and scrapes answer while the
	// clients and the Lease are set up.
	ready := &daemon.Ready{}
	// A leader that cannot renew its Lease for this long past its
	// duration is stuck: /healthz fails, and the kubelet restarts it.
	watchdog := leaderelection.NewLeaderHealthzAdaptor(20 * time.Second)
	stop, err := m.serve(ready, watchdog)
	if err != nil {
		return err
	}
	defer stop()

	cfg, err := kube.RESTConfig(o.Kubeconfig)
	if err != nil {
		return err
	}
	if o.WrapTransport != nil {
		cfg.Wrap(o.WrapTransport)
	}
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	cfg.UserAgent = "sparkplug-monitor/" + o.Version.Version
	if m.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	if m.meta, err = metadata.NewForConfig(cfg); err != nil {
		return fmt.Errorf("metadata client: %w", err)
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: m.kube.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	m.recorder = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "sparkplug-monitor"})
	go kube.WatchReadiness(ctx, m.kube, ready.Set, log)

	log.Info("monitor starting", "namespaces", o.Namespaces, "leader_elect", o.LeaderElect, "version", o.Version.Version)
	if !o.LeaderElect {
		m.lead(ctx)
		return nil
	}
	return m.elect(ctx, watchdog)
}

// elect stands for leadership until ctx is done, leading whenever it
// wins; a replica that loses the Lease stops its work, waits for it to
// end, and stands again.
func (m *monitor) elect(ctx context.Context, watchdog *leaderelection.HealthzAdaptor) error {
	id := m.o.Identity
	if id == "" {
		host, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("leader election identity: %w", err)
		}
		id = host + "_" + string(uuid.NewUUID())
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, m.o.LeaderElectionNamespace, m.o.LeaderElectionID,
		m.kube.CoreV1(), m.kube.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return fmt.Errorf("leader election lock: %w", err)
	}
	for ctx.Err() == nil {
		// The work of one leadership: it starts in a goroutine of the
		// elector's, possibly after Run returned, so a gate closes once
		// Run returns and only work begun before waits.
		var (
			mu      sync.Mutex
			closed  bool
			working sync.WaitGroup
		)
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			Name:            m.o.LeaderElectionID,
			LeaseDuration:   m.o.LeaseDuration,
			RenewDeadline:   m.o.RenewDeadline,
			RetryPeriod:     m.o.RetryPeriod,
			ReleaseOnCancel: true,
			WatchDog:        watchdog,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(lctx context.Context) {
					mu.Lock()
					if closed {
						mu.Unlock()
						return
					}
					working.Add(1)
					mu.Unlock()
					defer working.Done()
					m.log.Info("leading", "identity", id, "lease", m.o.LeaderElectionNamespace+"/"+m.o.LeaderElectionID)
					m.lead(lctx)
				},
				OnStoppedLeading: func() {},
				OnNewLeader: func(leader string) {
					if leader != id {
						m.log.Info("another replica leads", "leader", leader)
					}
				},
			},
		})
		if err != nil {
			return fmt.Errorf("leader election: %w", err)
		}
		le.Run(ctx)
		mu.Lock()
		closed = true
		mu.Unlock()
		working.Wait()
		if ctx.Err() == nil {
			m.log.Warn("leadership lost: work stopped, standing again", "identity", id)
		}
	}
	return nil
}

// lead counts and cleans up until ctx is done: with a fresh set of spark_*
// metrics, registered for as long as it leads, and fresh informers.
func (m *monitor) lead(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	m.own.leader.Set(1)
	defer m.own.leader.Set(0)
	var expire func(context.Context)
	if m.o.Lead != nil {
		var wait func()
		expire, wait = m.o.Lead(ctx)
		defer wait()
	}
	w := newWatch(m.kube, m.meta, m.o.Namespaces)
	labels := m.labels
	labels.workflow = w.workflow
	spark := newSparkMetrics(labels.labelNames(), m.o.StartLatencyBuckets)
	for _, c := range spark.collectors() {
		m.registry.MustRegister(c)
		defer m.registry.Unregister(c)
	}
	wctx, cancel := context.WithCancel(ctx)
	synced, wait := w.start(wctx, newTracker(spark, labels), m.log)
	defer wait()
	defer cancel()
	if !synced {
		return
	}
	m.log.Info("caches filled: counting and cleaning up", "namespaces", m.o.Namespaces)
	c := cleanup.New(cleanup.Config{Kube: m.kube, Recorder: m.recorder, Now: m.o.Now, Log: m.log,
		Workflow: func(ctx context.Context, ns, name string) (metav1.Object, error) {
			return m.meta.Resource(workflowsResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		},
		Deleted: func(reason string) { m.own.deleted.WithLabelValues(reason).Inc() }})
	// The leader's one cleanup loop: the followed workflows' finished
	// drivers (the controller's), and the leftovers, from the start.
	cleanup.Run(ctx, cleanup.Loop{TTLInterval: m.o.TTLInterval, Expire: expire,
		LeftoverInterval: m.o.LeftoverInterval, SearchFirst: true,
		Leftovers: func(ctx context.Context) { sweep(ctx, c, w) }})
}

// serve serves /metrics, /healthz and /readyz on the metrics and the
// health address (once when they are the same) until stop is called.
func (m *monitor) serve(ready *daemon.Ready, watchdog *leaderelection.HealthzAdaptor) (stop func(), err error) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if err := watchdog.Check(r); err != nil {
			http.Error(w, "unhealthy: "+err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := ready.Ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	addrs := []string{m.o.MetricsAddr}
	if m.o.HealthAddr != m.o.MetricsAddr {
		addrs = append(addrs, m.o.HealthAddr)
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
		s := edge.HTTPServer(mux, m.o.ServerLimits)
		servers = append(servers, s)
		bound = append(bound, ln.Addr().String())
		go func() {
			if err := s.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				m.log.Error("server stopped", "addr", ln.Addr().String(), "error", err.Error())
			}
		}()
	}
	m.log.Info("serving /metrics, /healthz and /readyz", "addrs", bound)
	if m.o.Listening != nil {
		m.o.Listening(bound[0], bound[len(bound)-1])
	}
	return stop, nil
}
