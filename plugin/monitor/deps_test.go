package monitor

import (
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/depstest"
)

// `sparkplug monitor` alone never runs Spark steps: nothing it depends on
// is the controller, the sidecar or the reconciler they run (the
// controller runs the monitor's Duties, never the other way round).
func TestMonitorLinksNoStepRunner(t *testing.T) {
	const plugin = "github.com/sparkplug-io/sparkplug/plugin/"
	depstest.Check(t, depstest.Rule{
		Pkg:  ".",
		Self: plugin + "monitor",
		Forbid: []string{
			plugin + "controller",
			plugin + "sidecar",
			plugin + "execute",
			plugin + "request",
			plugin + "server",
			plugin + "decide",
			plugin + "submit",
			plugin + "nodestatus",
		},
	})
}
