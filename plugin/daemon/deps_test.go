package daemon

import (
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/depstest"
)

// The set-up the modes share imports neither mode, nor the monitor, nor
// what follows a node: each mode calls it, never the other way round.
func TestDaemonImportsNoMode(t *testing.T) {
	const plugin = "github.com/sparkplug-io/sparkplug/plugin/"
	depstest.Check(t, depstest.Rule{
		Pkg:  ".",
		Self: plugin + "daemon",
		Forbid: []string{
			plugin + "controller",
			plugin + "sidecar",
			plugin + "monitor",
			plugin + "execute",
			plugin + "request",
			plugin + "server",
			plugin + "acksrv",
			"github.com/gin-gonic/gin",
		},
	})
}
