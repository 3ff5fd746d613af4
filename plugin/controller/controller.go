package controller

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/sparkplug-io/sparkplug/plugin/daemon"
	"github.com/sparkplug-io/sparkplug/plugin/execute"
	"github.com/sparkplug-io/sparkplug/plugin/kube"
	"github.com/sparkplug-io/sparkplug/plugin/monitor"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
)

// eventsFlushWait bounds the wait for the last Events at exit.
const eventsFlushWait = 5 * time.Second

// Run runs one controller replica until ctx is done: it serves /metrics,
// /healthz and /readyz, stands for leadership (or leads, without leader
// election) and, while it leads, runs the Spark steps of its namespaces
// and the monitor's duties. c must have been validated. It returns an
// error only when it cannot start.
func Run(ctx context.Context, c Config, log *slog.Logger) error {
	duties, err := monitor.NewDuties(c.Monitor, log)
	if err != nil {
		return err
	}
	client := c.Monitor.Client()
	client.UserAgent = "sparkplug-controller/" + c.Monitor.Version.Version
	steps, err := daemon.Start(daemon.Setup{Client: client, Policy: c.Core.Policy,
		TemplatesDir: c.TemplatesDir, PprofAddr: c.PprofAddr, Limits: c.Monitor.ServerLimits}, log)
	if err != nil {
		return err
	}
	defer steps.Close()
	c.Core.Policy = steps.Policy
	duties.Registry().MustRegister(steps.Metrics.Collectors()...)

	ready, watchdog := &daemon.Ready{}, daemon.NewWatchdog()
	stop, err := daemon.ServeHealth(c.Monitor.Health(duties.Registry(), ready, watchdog), log)
	if err != nil {
		return err
	}
	defer stop()
	// The monitor's duties reach the API server as the monitor does:
	// named sparkplug-monitor (user agent, Events' source), with a rate
	// limit of their own beside the steps'.
	monCfg := rest.CopyConfig(steps.Config)
	monCfg.UserAgent = c.Monitor.Client().UserAgent
	mon, stopEvents, err := monitor.Connect(ctx, monCfg)
	if err != nil {
		return err
	}
	defer stopEvents()
	go kube.WatchReadiness(ctx, mon.Kube, ready.Set, log)

	log.Info("controller starting", "namespaces", c.Monitor.Namespaces, "leader_elect", c.Monitor.LeaderElect, "version", c.Monitor.Version.Version)
	err = daemon.Lead(ctx, c.Monitor.Election(), mon.Kube, watchdog, func(ctx context.Context) {
		leadership(ctx, func(ctx context.Context) (func(context.Context), func()) {
			return runSteps(ctx, c, steps, log)
		}, duties, mon)
	}, log)
	flushCtx, cancel := context.WithTimeout(context.Background(), eventsFlushWait)
	defer cancel()
	if !steps.Events.Flush(flushCtx) {
		log.Info("some Events were not written before shutdown")
	}
	return err
}

// duties are the monitor's work for one leadership (monitor.Duties).
type duties interface {
	Lead(ctx context.Context, c monitor.Clients, expire func(context.Context))
}

// leadership is one leadership of the controller, until ctx ends: it
// starts the Spark steps (start returns at once), runs the monitor's
// duties, whose one cleanup loop expires the finished drivers of the
// workflows the steps follow, and waits for the steps to end.
func leadership(ctx context.Context, start func(context.Context) (expire func(context.Context), wait func()), d duties, c monitor.Clients) {
	if ctx.Err() != nil {
		return
	}
	expire, wait := start(ctx)
	defer wait()
	d.Lead(ctx, c, expire)
}

// runSteps starts running Spark steps for one leadership: a fresh
// reconciler and fresh caches, rebuilt from the cluster, until ctx (the
// leadership) ends. It returns at once: expire expires the finished
// drivers of the workflows it follows, for the leader's one cleanup loop
// (monitor.Duties.Lead), and wait waits for the leadership's work to end.
func runSteps(ctx context.Context, c Config, s *daemon.Steps, log *slog.Logger) (expire func(context.Context), wait func()) {
	// One cache per kind and namespace, shared by the workflows there:
	// one watch per workflow (its Workflow) instead of six.
	registry := scope.NewSharedRegistry(s.Clients, log)
	core := execute.New(c.Core, s.Clients, registry, s.Builder, s.Events.Recorder(), s.Metrics, log)
	var wg sync.WaitGroup
	wg.Go(func() { registry.Run(ctx) })
	wg.Go(func() { core.Run(ctx) })
	wg.Go(func() {
		var synced []cache.InformerSynced
		for _, ns := range c.Monitor.Namespaces {
			hasSynced, err := discover(ctx, s.Clients.Workflows, ns, coreFollower{core}, log)
			if err != nil {
				log.Error("cannot discover the Spark workflows of a namespace", "namespace", ns, "error", err.Error())
				continue
			}
			synced = append(synced, hasSynced)
		}
		if cache.WaitForCacheSync(ctx.Done(), synced...) {
			log.Info("following the Spark workflows of the namespaces", "namespaces", c.Monitor.Namespaces)
		}
		<-ctx.Done()
	})
	expire = func(ctx context.Context) { core.Cleaner().ExpireAll(ctx, registry.Scopes()) }
	return expire, func() {
		wg.Wait()
		log.Info("stopped running Spark steps: leadership ended")
	}
}
