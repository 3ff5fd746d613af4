//go:build tools

// Package tools pins Kueue (sigs.k8s.io/kueue), whose controller manager
// the Kueue end-to-end tier (make e2e-kueue) runs as a host process against
// the test control plane, so that Spark steps queue through a real Kueue.
// It is never compiled into sparkplug.
//
// hack/kueue.sh builds cmd/kueue from it and copies the module's CRDs
// (config/components/crd/bases) next to the binary.
package tools

import (
	_ "sigs.k8s.io/kueue/cmd/kueue"
)
