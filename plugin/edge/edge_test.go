package edge

import (
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/depstest"
)

// Package edge is what the acknowledger shares with the sidecar, so it
// links nothing but the standard library (no gin, no Argo types, no
// Kubernetes client, no other package of sparkplug).
func TestImportsTheStandardLibraryOnly(t *testing.T) {
	depstest.Check(t, depstest.Rule{Pkg: ".", Self: "github.com/sparkplug-io/sparkplug/plugin/edge", Allow: []string{"github.com/sparkplug-io/sparkplug/plugin/edge"}})
}
