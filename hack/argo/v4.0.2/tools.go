//go:build tools

// Package tools pins Argo Workflows v4.0.2's workflow-controller, argoexec and argo CLI
// for `make e2e ARGO=v4.0.2` (hack/argo.sh builds them; see hack/tools/argo for
// the version make test runs). It is never compiled into sparkplug.
package tools

import (
	_ "github.com/argoproj/argo-workflows/v4/cmd/argo"
	_ "github.com/argoproj/argo-workflows/v4/cmd/argoexec"
	_ "github.com/argoproj/argo-workflows/v4/cmd/workflow-controller"
)
