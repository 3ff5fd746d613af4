package controller

import (
	"github.com/sparkplug-io/sparkplug/plugin/cleanup"
	"github.com/sparkplug-io/sparkplug/plugin/daemon"
	"github.com/sparkplug-io/sparkplug/plugin/execute"
	"github.com/sparkplug-io/sparkplug/plugin/monitor"
	"github.com/sparkplug-io/sparkplug/plugin/setting"
)

// Config is everything one controller replica runs with.
type Config struct {
	// Monitor are the monitor's settings, which the controller shares:
	// the namespaces it runs Spark steps in, leader election, metrics,
	// health, cleanup, the Kubernetes client.
	Monitor monitor.Options
	// Core are the reconciler's settings, the sidecar's.
	Core execute.Options
	// TemplatesDir overrides the built-in object templates; empty: none.
	TemplatesDir string
	// PprofAddr serves Go's profiles there (loopback only); empty:
	// nowhere.
	PprofAddr string
}

// DefaultLeaseName is the controller's Lease: not the monitor's, so that
// a monitor left running beside it does not take its leadership.
const DefaultLeaseName = "sparkplug-controller"

// DefaultConfig is the controller's defaults, defined here once.
func DefaultConfig() Config {
	m := monitor.DefaultOptions()
	m.LeaderElectionID = DefaultLeaseName
	// One client for every workflow of the namespaces: the sidecar's
	// launch budget (three writes per driver) for the whole
	// cluster, which Argo's own controller matches with its defaults.
	m.QPS, m.Burst = 135, 270
	// The leftovers are searched as often as a sidecar searches its
	// namespace's (--ttl-leftover-interval).
	m.LeftoverInterval = cleanup.DefaultLeftoverInterval
	core := execute.DefaultOptions()
	core.ReleaseEnded = true
	core.SharedLog = true
	return Config{Monitor: m, Core: core}
}

// Validate rejects a config the controller cannot run with, naming the
// setting, and fills the core's zero settings.
func (c *Config) Validate() error {
	if err := c.Monitor.Validate(); err != nil {
		return err
	}
	if c.PprofAddr != "" && !daemon.Loopback(c.PprofAddr) {
		return setting.Errorf("pprof-addr", "%q is not a loopback address: profiles are served on 127.0.0.1, ::1 or localhost only (reach them with kubectl port-forward)", c.PprofAddr)
	}
	c.Core.ReleaseEnded = true
	c.Core.SharedLog = true
	return c.Core.Validate()
}
