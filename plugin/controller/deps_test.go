package controller

import (
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/depstest"
)

// The controller answers no agent request (the acknowledger in the agent
// pod does): nothing it depends on holds the sidecar's request path
// (package request), the sidecar's server and wiring, the acknowledger's
// server, or gin.
func TestControllerImportsNoRequestPath(t *testing.T) {
	depstest.Check(t, depstest.Rule{
		Pkg:  ".",
		Self: "github.com/sparkplug-io/sparkplug/plugin/controller",
		Forbid: []string{
			"github.com/sparkplug-io/sparkplug/plugin/request",
			"github.com/sparkplug-io/sparkplug/plugin/server",
			"github.com/sparkplug-io/sparkplug/plugin/sidecar",
			"github.com/sparkplug-io/sparkplug/plugin/acksrv",
			"github.com/gin-gonic/gin",
		},
	})
}
