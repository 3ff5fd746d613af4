package controller

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"

	"github.com/sparkplug-io/sparkplug/plugin/daemon"
	"github.com/sparkplug-io/sparkplug/plugin/execute"
	"github.com/sparkplug-io/sparkplug/plugin/kube"
	"github.com/sparkplug-io/sparkplug/plugin/metrics"
	"github.com/sparkplug-io/sparkplug/plugin/monitor"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/templates"
)

// eventsFlushWait bounds the wait for the last Events at exit.
const eventsFlushWait = 5 * time.Second

// Run runs one controller replica until ctx is done. c must have been
// validated. It returns an error only when it cannot start.
func Run(ctx context.Context, c Config, log *slog.Logger) error {
	cfg, err := kube.RESTConfig(c.Monitor.Kubeconfig)
	if err != nil {
		return err
	}
	if c.Monitor.WrapTransport != nil {
		cfg.Wrap(c.Monitor.WrapTransport)
	}
	cfg.QPS, cfg.Burst = c.Monitor.QPS, c.Monitor.Burst
	cfg.UserAgent = "sparkplug-controller/" + c.Monitor.Version.Version
	if sa := kube.TokenServiceAccount(cfg); sa != "" && !slices.Contains(c.Core.Policy.PluginServiceAccounts, sa) {
		// No driver runs as the controller's own account.
		c.Core.Policy.PluginServiceAccounts = append(slices.Clone(c.Core.Policy.PluginServiceAccounts), sa)
	}
	log.Info("policy", "plugin_service_accounts", c.Core.Policy.PluginServiceAccounts, "pod_security_level", c.Core.Policy.PodSecurity)
	clients, err := daemon.Clients(cfg)
	if err != nil {
		return err
	}
	var tmpl fs.FS = templates.FS
	if c.TemplatesDir != "" {
		tmpl = os.DirFS(c.TemplatesDir)
	}
	builder, err := objects.New(tmpl)
	if err != nil {
		return fmt.Errorf("load templates: %w", err)
	}
	if c.PprofAddr != "" {
		_, stop, err := daemon.ServePprof(c.PprofAddr, c.Monitor.ServerLimits, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	m := metrics.New()
	events := daemon.NewEvents(clients.Kube, "sparkplug")
	defer events.Shutdown()

	mon := c.Monitor
	mon.Collectors = append(slices.Clone(mon.Collectors), m.Collectors()...)
	mon.Lead = func(ctx context.Context) (func(context.Context), func()) {
		return lead(ctx, c, clients, builder, events, m, log)
	}
	err = monitor.Run(ctx, mon, log)
	flushCtx, cancel := context.WithTimeout(context.Background(), eventsFlushWait)
	defer cancel()
	if !events.Flush(flushCtx) {
		log.Info("some Events were not written before shutdown")
	}
	return err
}

// lead starts running Spark steps for one leadership: a fresh reconciler
// and fresh caches, rebuilt from the cluster, until ctx (the leadership)
// ends. It returns at once: expire expires the finished drivers of the
// workflows it follows, for the leader's one cleanup loop (monitor.Run),
// and wait waits for the leadership's work to end.
func lead(ctx context.Context, c Config, clients scope.Clients, builder *objects.Builder, events *daemon.Events, m *metrics.Metrics, log *slog.Logger) (expire func(context.Context), wait func()) {
	// One cache per kind and namespace, shared by the workflows there:
	// one watch per workflow (its Workflow) instead of six.
	registry := scope.NewSharedRegistry(clients, log)
	core := execute.New(c.Core, clients, registry, builder, events.Recorder(), m, log)
	var wg sync.WaitGroup
	wg.Go(func() { registry.Run(ctx) })
	wg.Go(func() { core.Run(ctx) })
	wg.Go(func() {
		var synced []cache.InformerSynced
		for _, ns := range c.Monitor.Namespaces {
			s, err := discover(ctx, clients.Workflows, ns, coreFollower{core}, log)
			if err != nil {
				log.Error("cannot discover the Spark workflows of a namespace", "namespace", ns, "error", err.Error())
				continue
			}
			synced = append(synced, s)
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
