//go:build tools

// Package tools pins KWOK, which simulates the fake node and the pod
// lifecycles of the test clusters. It is never compiled into sparkplug:
// hack/tools.sh builds the kwok binary from this module.
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
