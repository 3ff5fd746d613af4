//go:build tools

// Package tools pins ORAS, whose oras binary pushes the chart's Artifact
// Hub repository metadata (manifests/chart/artifacthub-repo.yml) as
// docs/install.md shows, in the release's integration test. It is never
// compiled into sparkplug: hack/helm.sh builds the oras binary from this
// module, beside helm.
package tools

import (
	_ "oras.land/oras/cmd/oras"
)
