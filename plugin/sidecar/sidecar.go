package sidecar

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/cleanup"
	"github.com/sparkplug-io/sparkplug/plugin/daemon"
	"github.com/sparkplug-io/sparkplug/plugin/edge"
	"github.com/sparkplug-io/sparkplug/plugin/execute"
	"github.com/sparkplug-io/sparkplug/plugin/kube"
	"github.com/sparkplug-io/sparkplug/plugin/request"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/server"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/submit"
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

	steps, err := daemon.Start(daemon.Setup{
		Client: daemon.Client{Kubeconfig: c.Kubeconfig, QPS: c.QPS, Burst: c.Burst,
			UserAgent: "sparkplug/" + c.Version, WrapTransport: c.WrapTransport},
		Policy: c.Core.Policy, TemplatesDir: c.TemplatesDir, PprofAddr: c.PprofAddr, Limits: c.ServerLimits}, log)
	if err != nil {
		return err
	}
	// Events outlive ctx: the shutdown sweep records the deletions it
	// makes after SIGTERM, and they are flushed before the process ends.
	defer steps.Close()
	c.Core.Policy = steps.Policy
	clients, m := steps.Clients, steps.Metrics
	if c.Core.Submit.SparkHome != "" {
		// spark-submit authenticates as the plugin does.
		dir, err := os.MkdirTemp(c.Core.Submit.TempDir, "sparkplug-client-")
		if err != nil {
			return fmt.Errorf("directory for spark-submit's kubeconfig: %w", err)
		}
		defer os.RemoveAll(dir)
		if c.Core.Submit.Client, err = submit.NewClient(steps.Config, dir); err != nil {
			return err
		}
		log.Info("spark-submit launcher ready", "spark_home", c.Core.Submit.SparkHome, "master", c.Core.Submit.Client.Master, "default_launcher", c.Core.Launcher)
	}
	registry := scope.NewRegistry(clients, log)
	core := execute.New(c.Core, clients, registry, steps.Builder, steps.Events.Recorder(), m, log)
	answerer := request.New(core, log)
	ready := &daemon.Ready{}
	srv := edge.HTTPServer(server.New(answerer, &edge.TokenFile{Path: c.TokenFile}, ready, m, log), c.ServerLimits)
	if c.MetricsAddr != "" {
		_, stop, err := daemon.Serve("metrics", c.MetricsAddr, m.Handler(), c.ServerLimits, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	go registry.Run(ctx)
	go core.Run(ctx)
	// The process's cleanup, once: its workflow's finished drivers, and
	// the leftovers of its namespace.
	cleaner := core.Cleaner()
	go cleanup.Run(ctx, cleanup.Loop{
		TTLInterval:      c.TTLInterval,
		Expire:           func(ctx context.Context) { cleaner.ExpireAll(ctx, registry.Scopes()) },
		LeftoverInterval: c.LeftoverInterval,
		Leftovers:        func(ctx context.Context) { cleaner.LeftoversOf(ctx, registry.Scopes()) },
	})
	if c.PodName != "" {
		go followOwnWorkflow(ctx, answerer, clients, c.PodNamespace, c.PodName, log)
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
	if !steps.Events.Flush(shutdownCtx) {
		log.Info("some Events were not written before shutdown")
	}
	return nil
}

// followOwnWorkflow finds the workflow of the agent pod this sidecar runs
// in and follows it: its nodes are reconciled from the start, whether or
// not the agent asks (it asks about a node once per agent process). It
// tries again while the API server cannot say.
func followOwnWorkflow(ctx context.Context, answerer *request.Answerer, clients scope.Clients, namespace, pod string, log *slog.Logger) {
	for wait := time.Second; ; wait = min(2*wait, 5*time.Second) {
		name, uid, err := kube.AgentWorkflow(ctx, clients.Kube, namespace, pod)
		if err == nil {
			answerer.Pin(spark.WorkflowRef{Name: name, Namespace: namespace, UID: uid})
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
