package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/pflag"

	"github.com/sparkplug-io/sparkplug/plugin/execute"
	"github.com/sparkplug-io/sparkplug/plugin/setting"
	"github.com/sparkplug-io/sparkplug/plugin/sidecar"
)

type serveOptions struct {
	sidecar.Config
	logLevel, logFormat string
}

func (o *serveOptions) validate() error {
	if o.logFormat != "json" && o.logFormat != "text" {
		return fmt.Errorf("--log-format must be json or text, got %q", o.logFormat)
	}
	return setting.Flags(o.Config.Validate())
}

// serveFlags binds serve's flags to o, which they set to
// sidecar.DefaultConfig first.
func serveFlags(o *serveOptions, stdout io.Writer) *pflag.FlagSet {
	d := sidecar.DefaultConfig()
	o.Config = d
	c := &o.Core
	fs := newFlagSet("serve", "Serve the Argo agent's template.execute calls for `plugin: {spark: ...}` steps.", stdout)
	fs.StringVar(&o.Addr, "addr", d.Addr, "address to listen on (the agent calls localhost at the port in plugin.yaml)")
	fs.StringVar(&o.TokenFile, "token-file", d.TokenFile, "file holding the bearer token the agent sends")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig file; empty means the in-cluster service account")
	fs.StringVar(&o.TemplatesDir, "templates-dir", "", "directory overriding the built-in object templates")
	fs.StringVar(&o.PprofAddr, "pprof-addr", "", "serve Go's profiles (net/http/pprof, /debug/pprof/) at this loopback address (127.0.0.1, ::1 or localhost only), e.g. 127.0.0.1:6060 to measure memory with go tool pprof through kubectl port-forward; empty: off")
	fs.StringVar(&o.MetricsAddr, "metrics-addr", "", "also serve Prometheus metrics at this address (they are always at /metrics on --addr, which is loopback in the agent pod)")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&o.logFormat, "log-format", "json", "json or text")
	fs.StringVar(&o.PodName, "pod-name", os.Getenv("POD_NAME"), "the agent pod this sidecar runs in (plugin.yaml sets POD_NAME from the downward API): its workflow is followed from the start, before any request; empty: the first request names it")
	fs.StringVar(&o.PodNamespace, "pod-namespace", os.Getenv("POD_NAMESPACE"), "the agent pod's namespace (plugin.yaml sets POD_NAMESPACE from the downward API)")
	fs.DurationVar(&o.TTLInterval, "ttl-interval", d.TTLInterval, "how often finished drivers are checked against their timeToLiveSeconds")
	fs.DurationVar(&o.LeftoverInterval, "ttl-leftover-interval", d.LeftoverInterval, "how often the namespace is searched for drivers of finished workflows whose timeToLiveSeconds ran out (their own sidecar is gone)")
	fs.DurationVar(&o.ShutdownGrace, "shutdown-grace", d.ShutdownGrace, "how long in-flight requests may finish after SIGTERM")
	fs.Float32Var(&o.QPS, "kube-api-qps", d.QPS, "Kubernetes client queries per second")
	fs.IntVar(&o.Burst, "kube-api-burst", d.Burst, "Kubernetes client burst")
	coreFlags(fs, c, d.Core)
	return fs
}

func runServe(args []string, stdout, stderr io.Writer) error {
	o := serveOptions{}
	fs := serveFlags(&o, stdout)
	if err := parseFlags(fs, "serve", args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("serve", fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	o.Version = buildVersion().Version
	o.Core.Submit.Env = sidecar.InheritedEnv()
	if err := o.validate(); err != nil {
		return usageError("serve", err)
	}
	return runProcess("serve", stderr, o.logLevel, o.logFormat, func(ctx context.Context, log *slog.Logger) error {
		return sidecar.Run(ctx, o.Config, log)
	})
}

// coreFlags binds the flags of the step reconciler's settings to c,
// which they set to d first: serve's and controller's alike.
func coreFlags(fs *pflag.FlagSet, c *execute.Options, d execute.Options) {
	*c = d
	fs.DurationVar(&c.ProgressInterval, "progress-interval", d.ProgressInterval, "step of the elapsed time a running node's message shows (\"RUNNING 3/3 executors, 4m30s\"), rounded down to it so the message, and with it the node's duration in the Argo UI, changes at most once per interval; each change is a write of the workflow's WorkflowTaskSet and a Workflow update, so the default costs at most 2 Workflow updates a minute per running node; 0 turns it off")
	fs.DurationVar(&c.NotFoundGrace, "not-found-grace", d.NotFoundGrace, "how long a missing driver pod is tolerated before the attempt fails \"driver pod not found\"")
	fs.IntVar(&c.Workers, "workers", d.Workers, "how many Spark nodes are reconciled at once")
	fs.DurationVar(&c.Resync, "resync", d.Resync, "how often every listed Spark node is reconciled again without an event (time limits and backoffs move with the clock alone)")
	fs.DurationVar(&c.WriteGap, "write-gap", d.WriteGap, "the least time between two writes of a workflow's WorkflowTaskSet, where node results go (each write is a Workflow update by Argo's controller)")
	fs.DurationVar(&c.InterimHold, "interim-hold", d.InterimHold, "how long a node stays in a state every run passes through (SUBMITTED or QUEUED while its driver has not started, a finished driver's log being stored) before that state is written: one that ends sooner costs Argo no write, so a normal run is three writes (the driver's record, Running, its result; two when the driver runs by the first write); a result recording a new driver's uid is never held, since that record is the defence against a pod put in the driver's place; 0 writes every state at once")
	fs.StringVar(&c.Launcher, "launcher", d.Launcher, "what creates the driver of a spark body whose sparkplug.launcher names none: native (sparkplug, in Go) or spark-submit (Spark's own client, from --spark-home)")
	fs.StringVar(&c.Submit.SparkHome, "spark-home", "", "Spark distribution whose bin/spark-submit launches the drivers of the spark-submit launcher (it needs Java too); empty: no spark-submit, and bodies asking for it fail")
	fs.IntVar(&c.MaxSubmits, "max-spark-submits", d.MaxSubmits, "how many spark-submits (each a JVM) may run at once; a step beyond it waits, Pending, for a slot")
	fs.DurationVar(&c.Submit.Timeout, "submit-timeout", d.Submit.Timeout, "how long one spark-submit may run before it is killed and counts as a failed submission")
	fs.StringVar(&c.IngressURLFormat, "ingress-url-format", "", "URL of the Spark UI's Ingress of every step with a UI Service (sparkUIOptions, or client mode), as the Spark operator's flag: a host, a path or both, with {{$appName}} (the run's name), {{$appNamespace}} and {{$appId}}, e.g. '{{$appName}}.spark.example.com' or 'spark.example.com/{{$appNamespace}}/{{$appName}}' (a path becomes spark.ui.proxyBase); a step's sparkplug.uiIngress.urlFormat overrides it; empty: no UI Ingress unless a step sets one")
	fs.StringVar(&c.IngressClassName, "ingress-class-name", "", "spec.ingressClassName of every Ingress sparkplug makes (the UI's and driverIngressOptions'), as the Spark operator's flag; a step's sparkplug.uiIngress.ingressClassName overrides it; empty: the cluster's default IngressClass")
	fs.StringVar(&c.HistoryServerURL, "history-server-url", "", "base URL of the Spark History Server that reads the steps' event logs (spark.eventLog.dir), e.g. 'https://spark-history.example.com': every Spark node then reports the output history-ui, <url>/history/<application id>/, which outlives the driver; a step's sparkplug.historyServerURL overrides it (\"\" turns it off); empty: no history-ui output unless a step sets one")
	fs.StringVar(&c.KueueQueue, "kueue-queue", "", "Kueue LocalQueue (in each workflow's namespace) of the Spark steps whose template metadata names none with the label kueue.x-k8s.io/queue-name: each attempt then waits for Kueue to admit its driver and executors together before anything of it is created. The plugin's Role needs the Kueue rules (manifests/components/kueue, the chart's kueue.enabled); empty: only labelled steps are queued")
	fs.BoolVar(&c.ArchiveLogs, "archive-logs", false, "store every step's driver log, once the driver ends, in the workflow's Argo artifact repository (S3), as the node's output artifact driver-log, which the Argo UI opens; a step's sparkplug.archiveLogs overrides it. The plugin's Role needs get on the repository's credentials Secret (the chart's logArchive.secretNames)")
	fs.IntVar(&c.Archive.MaxBytes, "archive-logs-max-bytes", d.Archive.MaxBytes, "the most of a driver's log archived: its end, where a failure shows, after a line saying how much was dropped; also the most memory one upload holds")
	fs.DurationVar(&c.Archive.Timeout, "archive-logs-timeout", d.Archive.Timeout, "how long one driver log's upload (reading the log and storing it) may take")
	fs.DurationVar(&c.Submit.RequestTimeout, "kubernetes-request-timeout", d.Submit.RequestTimeout, "spark-submit's connection and request timeout against the API server (KUBERNETES_REQUEST_TIMEOUT, spark.kubernetes.submission.connectionTimeout and requestTimeout); 0 keeps Spark's default of 10s")
	policyFlags(fs, &c.Policy)
}
