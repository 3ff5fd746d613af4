package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sparkplug-io/sparkplug/plugin/monitor"
	"github.com/sparkplug-io/sparkplug/plugin/setting"
)

type monitorOptions struct {
	monitor.Options
	logLevel, logFormat string
}

const monitorSummary = `Watch sparkplug's Spark drivers and executors, Argo's Workflows and their
Events in the namespaces given; export the Spark operator's metrics (spark_*)
for Prometheus; delete drivers whose timeToLiveSeconds ran out, or whose
workflow ended or is gone, after the workflow's sidecar went with its agent
pod. Replicas elect a leader through a Lease: only the leader counts and
deletes; every replica serves /metrics, /healthz and /readyz.`

// monitorFlags binds monitor's flags to o, which they set to
// monitor.DefaultOptions first; the namespaces default to $POD_NAMESPACE.
func monitorFlags(o *monitorOptions, stdout io.Writer) *pflag.FlagSet {
	d := monitor.DefaultOptions()
	fs := newFlagSet("monitor", monitorSummary, stdout)
	watchFlags(fs, &o.Options, d)
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&o.logFormat, "log-format", "json", "json or text")
	return fs
}

// watchFlags binds the flags of the monitor's settings to o, which they
// set to d first: monitor's and controller's alike (the controller runs
// the monitor's duties beside its steps). The namespaces default to
// $POD_NAMESPACE.
func watchFlags(fs *pflag.FlagSet, o *monitor.Options, d monitor.Options) {
	*o = d
	podNamespace := os.Getenv(monitor.EnvPodNamespace)
	var namespaces []string
	if podNamespace != "" {
		namespaces = []string{podNamespace}
	}
	fs.StringSliceVar(&o.Namespaces, "namespaces", namespaces, "namespaces whose Spark drivers, executors, Workflows and Events to watch, comma-separated or repeated (one set of informers each: a Role per namespace suffices); default $"+monitor.EnvPodNamespace)
	fs.StringVar(&o.MetricsAddr, "metrics-addr", d.MetricsAddr, "address serving Prometheus metrics at /metrics")
	fs.StringVar(&o.HealthAddr, "health-addr", d.HealthAddr, "address serving /healthz and /readyz")
	fs.StringSliceVar(&o.MetricsLabels, "metrics-labels", nil, "pod labels that become labels of every spark_* metric, as the Spark operator's flag ('-' becomes '_'; \"Unknown\" when a pod lacks one), comma-separated or repeated")
	fs.Var(&floats{p: &o.StartLatencyBuckets}, "metrics-job-start-latency-buckets", "upper bounds (seconds) of spark_application_start_latency_seconds_histogram, comma-separated, as the Spark operator's flag")
	fs.DurationVar(&o.TTLInterval, "ttl-interval", d.TTLInterval, "how often drivers are checked: timeToLiveSeconds run out, workflow ended or gone")
	fs.BoolVar(&o.LeaderElect, "leader-elect", d.LeaderElect, "elect one leader among the replicas through a Lease; only the leader counts and deletes")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", podNamespace, "namespace of the Lease; default $"+monitor.EnvPodNamespace)
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", d.LeaderElectionID, "name of the Lease")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig file; empty means the in-cluster service account")
	fs.Float32Var(&o.QPS, "kube-api-qps", d.QPS, "Kubernetes client queries per second")
	fs.IntVar(&o.Burst, "kube-api-burst", d.Burst, "Kubernetes client burst")
}

func runMonitor(args []string, stdout, stderr io.Writer) error {
	o := monitorOptions{}
	fs := monitorFlags(&o, stdout)
	if err := parseFlags(fs, "monitor", args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("monitor", fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	for i, ns := range o.Namespaces {
		o.Namespaces[i] = strings.TrimSpace(ns)
	}
	o.Version = buildVersion()
	if o.logFormat != "json" && o.logFormat != "text" {
		return usageError("monitor", fmt.Errorf("--log-format must be json or text, got %q", o.logFormat))
	}
	if err := setting.Flags(o.Validate()); err != nil {
		return usageError("monitor", err)
	}
	return runProcess("monitor", stderr, o.logLevel, o.logFormat, func(ctx context.Context, log *slog.Logger) error {
		return monitor.Run(ctx, o.Options, log)
	})
}

// floats is a flag of numbers, comma-separated or repeated, shown as
// they are written (pflag's float64Slice shows 30.000000). As pflag's
// slices, the first use replaces the default and later ones append.
type floats struct {
	p   *[]float64
	set bool
}

func (f *floats) String() string {
	if f.p == nil {
		return ""
	}
	var s []string
	for _, v := range *f.p {
		s = append(s, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return strings.Join(s, ",")
}

func (f *floats) Set(value string) error {
	var out []float64
	for _, s := range strings.Split(value, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		out = append(out, v)
	}
	if f.set {
		out = append(*f.p, out...)
	}
	*f.p, f.set = out, true
	return nil
}

func (f *floats) Type() string { return "numbers" }
