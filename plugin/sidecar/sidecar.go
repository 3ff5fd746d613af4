package sidecar

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"slices"
	"time"

	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/sparkplug-io/sparkplug/plugin/edge"
	"github.com/sparkplug-io/sparkplug/plugin/execute"
	"github.com/sparkplug-io/sparkplug/plugin/kube"
	"github.com/sparkplug-io/sparkplug/plugin/metrics"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/server"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/submit"
	"github.com/sparkplug-io/sparkplug/templates"
)

// Run serves the agent's calls until ctx is done, then shuts down
// gracefully. c must have been validated.
func Run(ctx context.Context, c Config, log *slog.Logger) error {
	// Listen before anything slow: the agent's first calls fail after
	// about 15 s of refused connections.
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.Addr, err)
	}
	defer ln.Close()

	cfg, err := kube.RESTConfig(c.Kubeconfig)
	if err != nil {
		return err
	}
	if c.WrapTransport != nil {
		cfg.Wrap(c.WrapTransport)
	}
	cfg.QPS, cfg.Burst = c.QPS, c.Burst
	if sa := kube.TokenServiceAccount(cfg); sa != "" && !slices.Contains(c.Core.Policy.PluginServiceAccounts, sa) {
		// The account this process acts as, whatever the install named it.
		c.Core.Policy.PluginServiceAccounts = append(slices.Clone(c.Core.Policy.PluginServiceAccounts), sa)
	}
	log.Info("policy", "plugin_service_accounts", c.Core.Policy.PluginServiceAccounts, "pod_security_level", c.Core.Policy.PodSecurity)
	cfg.UserAgent = "sparkplug/" + c.Version
	clients, err := newClients(cfg)
	if err != nil {
		return err
	}
	if c.Core.Submit.SparkHome != "" {
		// spark-submit authenticates as the plugin does.
		dir, err := os.MkdirTemp(c.Core.Submit.TempDir, "sparkplug-client-")
		if err != nil {
			return fmt.Errorf("directory for spark-submit's kubeconfig: %w", err)
		}
		defer os.RemoveAll(dir)
		if c.Core.Submit.Client, err = submit.NewClient(cfg, dir); err != nil {
			return err
		}
		log.Info("spark-submit launcher ready", "spark_home", c.Core.Submit.SparkHome, "master", c.Core.Submit.Client.Master, "default_launcher", c.Core.Launcher)
	}
	var tmpl fs.FS = templates.FS
	if c.TemplatesDir != "" {
		tmpl = os.DirFS(c.TemplatesDir)
	}
	builder, err := objects.New(tmpl)
	if err != nil {
		return fmt.Errorf("load templates: %w", err)
	}
	registry := scope.NewRegistry(clients, log)
	// Events outlive ctx: the shutdown sweep records the deletions it
	// makes after SIGTERM, and they are flushed before the process ends.
	eventsCtx, stopEvents := context.WithCancel(context.Background())
	defer stopEvents()
	broadcaster := record.NewBroadcaster(record.WithContext(eventsCtx))
	events := &flushedEvents{}
	broadcaster.StartRecordingToSink(events.sink(&typedcorev1.EventSinkImpl{Interface: clients.Kube.CoreV1().Events("")}))
	defer broadcaster.Shutdown()
	recorder := events.recorder(broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "sparkplug"}))
	m := metrics.New()
	core := execute.New(c.Core, clients, registry, builder, recorder, m, log)
	ready := &server.Ready{}
	srv := edge.HTTPServer(server.New(core, &edge.TokenFile{Path: c.TokenFile}, ready, m, log), c.ServerLimits)
	if c.MetricsAddr != "" {
		stop, err := serveMetrics(c.MetricsAddr, m, c.ServerLimits, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	if c.PprofAddr != "" {
		_, stop, err := servePprof(c.PprofAddr, c.ServerLimits, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	go registry.Run(ctx)
	go core.Run(ctx, c.TTLInterval)
	if c.PodName != "" {
		go followOwnWorkflow(ctx, core, clients, c.PodNamespace, c.PodName, log)
	}
	go kube.WatchReadiness(ctx, clients.Kube, ready.Set, log)

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	log.Info("serving", "addr", ln.Addr().String(), "version", c.Version)
	if c.Listening != nil {
		c.Listening(ln.Addr().String())
	}
	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), c.ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	// The agent pod, and with it this sidecar, is deleted when its
	// workflow ends: delete what still runs for a stopped workflow.
	if err := core.SweepEnding(shutdownCtx); err != nil {
		log.Error("cleanup at shutdown incomplete", "error", err.Error())
	}
	if !events.flush(shutdownCtx) {
		log.Info("some Events were not written before shutdown")
	}
	return nil
}

// followOwnWorkflow finds the workflow of the agent pod this sidecar runs
// in and follows it: its nodes are reconciled from the start, whether or
// not the agent asks (it asks about a node once per agent process). It
// tries again while the API server cannot say.
func followOwnWorkflow(ctx context.Context, core *execute.Core, clients scope.Clients, namespace, pod string, log *slog.Logger) {
	for wait := time.Second; ; wait = min(2*wait, 5*time.Second) {
		name, uid, err := kube.AgentWorkflow(ctx, clients.Kube, namespace, pod)
		if err == nil {
			core.Pin(spark.WorkflowRef{Name: name, Namespace: namespace, UID: uid})
			return
		}
		log.Error("cannot tell this sidecar's workflow yet; requests still name it", "error", err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// newClients are the typed Kubernetes, Argo and dynamic clients of cfg.
// The Kubernetes one speaks protobuf, as Kubernetes' own controllers do:
// a sidecar following a thousand drivers lists and watches their pods,
// ConfigMaps and Services, which decode with far less garbage than JSON.
// Argo's resources are custom resources, JSON only.
func newClients(cfg *rest.Config) (scope.Clients, error) {
	pb := rest.CopyConfig(cfg)
	pb.ContentType = runtime.ContentTypeProtobuf
	pb.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	kube, err := kubernetes.NewForConfig(pb)
	if err != nil {
		return scope.Clients{}, fmt.Errorf("kubernetes client: %w", err)
	}
	wf, err := wfclient.NewForConfig(cfg)
	if err != nil {
		return scope.Clients{}, fmt.Errorf("argo client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return scope.Clients{}, fmt.Errorf("dynamic client: %w", err)
	}
	return scope.Clients{Kube: kube, Workflows: wf, Dynamic: dyn}, nil
}

// serveMetrics serves the metrics at addr too, under the same limits,
// until stop is called.
func serveMetrics(addr string, m *metrics.Metrics, limits edge.Limits, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for metrics on %s: %w", addr, err)
	}
	srv := edge.HTTPServer(m.Handler(), limits)
	go func() { _ = srv.Serve(ln) }()
	log.Info("serving metrics", "addr", ln.Addr().String())
	return func() { srv.Close() }, nil
}

// servePprof serves Go's profiles at addr, under the server's limits,
// until stop is called; bound is the address it listens on.
func servePprof(addr string, limits edge.Limits, log *slog.Logger) (bound string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("listen on %s for profiles: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := edge.HTTPServer(mux, limits)
	// A CPU profile or trace takes its seconds: no write timeout.
	srv.WriteTimeout = 0
	go func() { _ = srv.Serve(ln) }()
	log.Info("serving Go profiles", "addr", ln.Addr().String())
	return ln.Addr().String(), func() { _ = srv.Close() }, nil
}
