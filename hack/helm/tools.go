//go:build tools

// Package tools pins Helm, whose helm binary lints and renders the chart in
// manifests/chart/sparkplug for the chart tests (make test-chart). It is
// never compiled into sparkplug: hack/helm.sh builds the helm binary from
// this module.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
