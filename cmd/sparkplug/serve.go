package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"

	"github.com/sparkplug-io/sparkplug/plugin/build"
	"github.com/sparkplug-io/sparkplug/plugin/execute"
	"github.com/sparkplug-io/sparkplug/plugin/metrics"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/server"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/submit"
	"github.com/sparkplug-io/sparkplug/templates"
)

// defaultKubernetesRequestTimeout is spark-submit's timeout against the
// API server unless serve (and render) are told otherwise.
const defaultKubernetesRequestTimeout = 30 * time.Second

type serveOptions struct {
	addr          string
	tokenFile     string
	kubeconfig    string
	templatesDir  string
	logLevel      string
	logFormat     string
	idleTimeout   time.Duration
	ttlInterval   time.Duration
	metricsAddr   string
	shutdownGrace time.Duration
	qps           float32
	burst         int
	core          execute.Options

	// wrapTransport, when set, wraps the Kubernetes client transport
	// (tests count API requests with it). Not a flag.
	wrapTransport func(http.RoundTripper) http.RoundTripper
	// listening, when set, receives the bound address. Not a flag.
	listening func(addr string)
}

func (o *serveOptions) validate() error {
	if o.addr == "" {
		return errors.New("--addr is required")
	}
	if o.tokenFile == "" {
		return errors.New("--token-file is required: the bearer token is always checked")
	}
	if o.idleTimeout <= 0 {
		return errors.New("--idle-timeout must be positive")
	}
	if o.ttlInterval <= 0 {
		return errors.New("--ttl-interval must be positive")
	}
	if o.logFormat != "json" && o.logFormat != "text" {
		return fmt.Errorf("--log-format must be json or text, got %q", o.logFormat)
	}
	return o.core.Validate()
}

func runServe(args []string, stdout, stderr io.Writer) error {
	o := serveOptions{}
	fs := newFlagSet("serve", "Serve the Argo agent's template.execute calls for `plugin: {spark: ...}` steps.", stdout)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:4355", "address to listen on (the agent calls localhost at the port in plugin.yaml)")
	fs.StringVar(&o.tokenFile, "token-file", "/var/run/argo/token", "file holding the bearer token the agent sends")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file; empty means the in-cluster service account")
	fs.StringVar(&o.templatesDir, "templates-dir", "", "directory overriding the built-in object templates")
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "also serve Prometheus metrics at this address (they are always at /metrics on --addr, which is loopback in the agent pod)")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&o.logFormat, "log-format", "json", "json or text")
	fs.DurationVar(&o.core.RequeuePending, "requeue-pending", 5*time.Second, "how soon the agent asks again while a driver is submitted or pending")
	fs.DurationVar(&o.core.RequeueRunning, "requeue-running", 15*time.Second, "how soon the agent asks again while a driver runs")
	fs.DurationVar(&o.core.NotFoundGrace, "not-found-grace", 30*time.Second, "how long a missing driver pod is tolerated before the attempt fails \"driver pod not found\"")
	fs.DurationVar(&o.core.HandoutGrace, "handout-grace", time.Minute, "how long a result handed to one of several identical steps may take to be recorded before it counts as lost")
	fs.DurationVar(&o.core.CacheWait, "cache-wait", 10*time.Second, "how long a first request waits for its workflow's cache before answering 503")
	fs.DurationVar(&o.idleTimeout, "idle-timeout", 10*time.Minute, "stop a workflow's cache after this long without requests")
	fs.DurationVar(&o.ttlInterval, "ttl-interval", 15*time.Second, "how often finished drivers are checked against their timeToLiveSeconds")
	fs.DurationVar(&o.core.LeftoverInterval, "ttl-leftover-interval", time.Minute, "how often the namespace is searched for drivers of finished workflows whose timeToLiveSeconds ran out (their own sidecar is gone)")
	fs.DurationVar(&o.shutdownGrace, "shutdown-grace", 20*time.Second, "how long in-flight requests may finish after SIGTERM")
	fs.Float32Var(&o.qps, "kube-api-qps", 20, "Kubernetes client queries per second")
	fs.IntVar(&o.burst, "kube-api-burst", 40, "Kubernetes client burst")
	fs.StringVar(&o.core.Launcher, "launcher", spec.LauncherNative, "what creates the driver of a spark body whose sparkplug.launcher names none: native (sparkplug, in Go) or spark-submit (Spark's own client, from --spark-home)")
	fs.StringVar(&o.core.Submit.SparkHome, "spark-home", "", "Spark distribution whose bin/spark-submit launches the drivers of the spark-submit launcher (it needs Java too); empty: no spark-submit, and bodies asking for it fail")
	fs.DurationVar(&o.core.Submit.Timeout, "submit-timeout", submit.DefaultTimeout, "how long one spark-submit may run before it is killed and counts as a failed submission")
	fs.StringVar(&o.core.IngressURLFormat, "ingress-url-format", "", "URL of the Spark UI's Ingress of every step with a UI Service (sparkUIOptions, or client mode), as the Spark operator's flag: a host, a path or both, with {{$appName}} (the run's name), {{$appNamespace}} and {{$appId}}, e.g. '{{$appName}}.spark.example.com' or 'spark.example.com/{{$appNamespace}}/{{$appName}}' (a path becomes spark.ui.proxyBase); a step's sparkplug.uiIngress.urlFormat overrides it; empty: no UI Ingress unless a step sets one")
	fs.StringVar(&o.core.IngressClassName, "ingress-class-name", "", "spec.ingressClassName of every Ingress sparkplug makes (the UI's and driverIngressOptions'), as the Spark operator's flag; a step's sparkplug.uiIngress.ingressClassName overrides it; empty: the cluster's default IngressClass")
	fs.DurationVar(&o.core.Submit.RequestTimeout, "kubernetes-request-timeout", defaultKubernetesRequestTimeout, "spark-submit's connection and request timeout against the API server (KUBERNETES_REQUEST_TIMEOUT, spark.kubernetes.submission.connectionTimeout and requestTimeout); 0 keeps Spark's default of 10s")
	if err := fs.Parse(args); err != nil {
		return err
	}
	o.core.Submit.Env = inheritedEnv()
	if err := o.validate(); err != nil {
		return err
	}
	log, err := newLogger(stderr, o.logLevel, o.logFormat)
	if err != nil {
		return err
	}
	klog.SetSlogLogger(log.With("component", "client-go"))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	return serve(ctx, o, log)
}

// serve runs the plugin server until ctx is done, then shuts it down
// gracefully.
func serve(ctx context.Context, o serveOptions, log *slog.Logger) error {
	// Listen before anything slow: the agent's first calls fail after
	// about 15 s of refused connections.
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.addr, err)
	}
	defer ln.Close()

	cfg, err := restConfig(o.kubeconfig)
	if err != nil {
		return err
	}
	if o.wrapTransport != nil {
		cfg.Wrap(o.wrapTransport)
	}
	cfg.QPS, cfg.Burst = o.qps, o.burst
	cfg.UserAgent = "sparkplug/" + version
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	if o.core.Submit.SparkHome != "" {
		// spark-submit authenticates as the plugin does.
		dir, err := os.MkdirTemp(o.core.Submit.TempDir, "sparkplug-client-")
		if err != nil {
			return fmt.Errorf("directory for spark-submit's kubeconfig: %w", err)
		}
		defer os.RemoveAll(dir)
		if o.core.Submit.Client, err = submit.NewClient(cfg, dir); err != nil {
			return err
		}
		log.Info("spark-submit launcher ready", "spark_home", o.core.Submit.SparkHome, "master", o.core.Submit.Client.Master, "default_launcher", o.core.Launcher)
	}
	wf, err := wfclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("argo client: %w", err)
	}
	var tmpl fs.FS = templates.FS
	if o.templatesDir != "" {
		tmpl = os.DirFS(o.templatesDir)
	}
	builder, err := build.New(tmpl)
	if err != nil {
		return fmt.Errorf("load templates: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	clients := scope.Clients{Kube: kube, Workflows: wf, Dynamic: dyn}
	registry := scope.NewRegistry(clients, o.idleTimeout, log, o.core.Now)
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	defer broadcaster.Shutdown()
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "sparkplug"})
	m := metrics.New()
	core := execute.New(o.core, clients, registry, builder, recorder, m, log)
	ready := &server.Ready{}
	srv := &http.Server{
		Handler:           server.New(core, &server.TokenFile{Path: o.tokenFile}, ready, m, log),
		ReadHeaderTimeout: 10 * time.Second,
	}
	if o.metricsAddr != "" {
		mln, err := net.Listen("tcp", o.metricsAddr)
		if err != nil {
			return fmt.Errorf("listen for metrics on %s: %w", o.metricsAddr, err)
		}
		msrv := &http.Server{Handler: m.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = msrv.Serve(mln) }()
		defer msrv.Close()
		log.Info("serving metrics", "addr", mln.Addr().String())
	}
	go registry.Run(ctx)
	go core.Run(ctx, o.ttlInterval)
	go watchReadiness(ctx, kube, ready, log)

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	log.Info("serving", "addr", ln.Addr().String(), "version", version)
	if o.listening != nil {
		o.listening(ln.Addr().String())
	}
	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), o.shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	// The agent pod, and with it this sidecar, is deleted when its
	// workflow ends: delete what still runs for a stopped workflow.
	if err := core.SweepEnding(shutdownCtx); err != nil {
		log.Error("cleanup at shutdown incomplete", "error", err.Error())
	}
	return nil
}

// watchReadiness marks the server ready once the API server answers.
func watchReadiness(ctx context.Context, kube kubernetes.Interface, ready *server.Ready, log *slog.Logger) {
	for {
		_, err := kube.Discovery().ServerVersion()
		ready.Set(err)
		if err == nil {
			return
		}
		log.Warn("API server not reachable yet", "error", err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Second):
		}
	}
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster config (set --kubeconfig outside a cluster): %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
	}
	return cfg, nil
}

// inheritedEnv is what spark-submit gets of the plugin's environment.
func inheritedEnv() map[string]string {
	env := map[string]string{}
	for _, k := range submit.InheritedEnv {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	return env
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: l}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return slog.New(slog.NewJSONHandler(w, opts)), nil
}
