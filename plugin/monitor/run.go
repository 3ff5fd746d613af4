package monitor

import (
	"context"
	"log/slog"

	"github.com/sparkplug-io/sparkplug/plugin/daemon"
	"github.com/sparkplug-io/sparkplug/plugin/kube"
)

// Run is `sparkplug monitor`: it serves /metrics, /healthz and /readyz at
// once, then stands for leadership (or leads, without leader election)
// and, while it leads, counts and cleans up (Duties). o must have been
// validated. It returns an error only when it cannot start.
func Run(ctx context.Context, o Options, log *slog.Logger) error {
	d, err := NewDuties(o, log)
	if err != nil {
		return err
	}
	// Serve before anything slow: probes and scrapes answer while the
	// clients and the Lease are set up.
	ready, watchdog := &daemon.Ready{}, daemon.NewWatchdog()
	stop, err := daemon.ServeHealth(o.Health(d.Registry(), ready, watchdog), log)
	if err != nil {
		return err
	}
	defer stop()

	cfg, err := o.Client().RESTConfig()
	if err != nil {
		return err
	}
	c, stopEvents, err := Connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer stopEvents()
	go kube.WatchReadiness(ctx, c.Kube, ready.Set, log)

	log.Info("monitor starting", "namespaces", o.Namespaces, "leader_elect", o.LeaderElect, "version", o.Version.Version)
	return daemon.Lead(ctx, o.Election(), c.Kube, watchdog, func(ctx context.Context) { d.Lead(ctx, c, nil) }, log)
}
