//go:build tools

// Package tools pins Argo Workflows v3.6.18's workflow-controller, argoexec and argo CLI
// for `make e2e ARGO=v3.6.18` (hack/argo.sh builds them; see hack/tools/argo for
// the version make test runs). It is never compiled into sparkplug.
package tools

import (
	_ "github.com/argoproj/argo-workflows/v3/cmd/argo"
	_ "github.com/argoproj/argo-workflows/v3/cmd/argoexec"
	_ "github.com/argoproj/argo-workflows/v3/cmd/workflow-controller"
)
