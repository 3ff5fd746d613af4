package depstest

import "testing"

// Each mode's entry links what it runs and no more, and the set-up the
// modes share links none of them.
func TestEachModeInItsOwnRoom(t *testing.T) {
	const plugin = module + "plugin/"
	for _, r := range []struct {
		name string
		rule Rule
	}{
		// The controller answers no agent request (the acknowledger in
		// the agent pod does): nothing it depends on holds the sidecar's
		// request path (package request), the sidecar's server and
		// wiring, the acknowledger's server, or gin.
		{"the controller links no request path", Rule{Pkg: "../controller", Self: plugin + "controller", Forbid: []string{
			plugin + "request", plugin + "server", plugin + "sidecar", plugin + "acksrv", "github.com/gin-gonic/gin",
		}}},
		// `sparkplug monitor` alone never runs Spark steps: the
		// controller runs the monitor's duties, never the other way
		// round.
		{"the monitor links no step runner", Rule{Pkg: "../monitor", Self: plugin + "monitor", Forbid: []string{
			plugin + "controller", plugin + "sidecar", plugin + "execute", plugin + "request", plugin + "server",
			plugin + "decide", plugin + "submit", plugin + "nodestatus",
		}}},
		// The set-up the modes share is called by each, never the other
		// way round.
		{"daemon links no mode", Rule{Pkg: "../daemon", Self: plugin + "daemon", Forbid: []string{
			plugin + "controller", plugin + "sidecar", plugin + "monitor", plugin + "execute", plugin + "request",
			plugin + "server", plugin + "acksrv", "github.com/gin-gonic/gin",
		}}},
	} {
		t.Run(r.name, func(t *testing.T) { Check(t, r.rule) })
	}
}
