package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/pflag"

	"github.com/sparkplug-io/sparkplug/plugin/controller"
	"github.com/sparkplug-io/sparkplug/plugin/setting"
	"github.com/sparkplug-io/sparkplug/plugin/sidecar"
)

type controllerOptions struct {
	controller.Config
	logLevel, logFormat string
}

const controllerSummary = `Run the Spark steps of every workflow in the namespaces given, for the whole
install (controller mode): launch each node's driver, follow it, retry,
clean up and write each node's result into its workflow's WorkflowTaskSet,
as the sidecar does for its own workflow. Agent pods then carry only the
acknowledger (sparkplug-ack). It is also the monitor: the Spark operator's
metrics, cleanup after ended workflows. Replicas elect a leader through a
Lease: only the leader acts; another takes over, from what the cluster
holds, when it goes. Every replica serves /metrics, /healthz and /readyz.`

// controllerFlags binds controller's flags to o, which they set to
// controller.DefaultConfig first: the monitor's, and the step flags of
// serve.
func controllerFlags(o *controllerOptions, stdout io.Writer) *pflag.FlagSet {
	d := controller.DefaultConfig()
	o.Config = d
	fs := newFlagSet("controller", controllerSummary, stdout)
	watchFlags(fs, &o.Monitor, d.Monitor)
	coreFlags(fs, &o.Core, d.Core)
	fs.DurationVar(&o.Monitor.LeftoverInterval, "ttl-leftover-interval", d.Monitor.LeftoverInterval, "how often the leader searches the namespaces for drivers no one follows: timeToLiveSeconds run out after their workflow ended, still running after it ended, or of a workflow gone")
	fs.StringVar(&o.TemplatesDir, "templates-dir", "", "directory overriding the built-in object templates")
	fs.StringVar(&o.PprofAddr, "pprof-addr", "", "serve Go's profiles (net/http/pprof, /debug/pprof/) at this loopback address (127.0.0.1, ::1 or localhost only); empty: off")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&o.logFormat, "log-format", "json", "json or text")
	return fs
}

func runController(args []string, stdout, stderr io.Writer) error {
	o := controllerOptions{}
	fs := controllerFlags(&o, stdout)
	if err := parseFlags(fs, "controller", args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("controller", fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	for i, ns := range o.Monitor.Namespaces {
		o.Monitor.Namespaces[i] = strings.TrimSpace(ns)
	}
	o.Monitor.Version = buildVersion()
	o.Core.Submit.Env = sidecar.InheritedEnv()
	if o.logFormat != "json" && o.logFormat != "text" {
		return usageError("controller", fmt.Errorf("--log-format must be json or text, got %q", o.logFormat))
	}
	if err := setting.Flags(o.Validate()); err != nil {
		return usageError("controller", err)
	}
	return runProcess("controller", stderr, o.logLevel, o.logFormat, func(ctx context.Context, log *slog.Logger) error {
		return controller.Run(ctx, o.Config, log)
	})
}
