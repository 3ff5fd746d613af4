//go:build tools

// Package tools pins the argo command (argo server) that the e2e tests of
// driver-log archiving call, at the Argo Workflows version of the test
// control plane (hack/tools/argo). It is never compiled into sparkplug.
//
// hack/servers.sh builds it from a patched copy of the module, as
// hack/tools.sh builds the controller: signal_linux.go restored, and an
// empty ui/dist/app, which argo server embeds and module zips lack (the
// tests call its API, not its web UI).
package tools

import (
	_ "github.com/argoproj/argo-workflows/v3/cmd/argo"
)
