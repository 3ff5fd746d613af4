package decide

import (
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/depstest"
)

// Decide cannot act: it links nothing of client-go, nor of Argo's
// (Argo's API types bring client-go's rest package along; decide speaks
// Argo's phases as state.Phase and is told of loops by gather), nor a
// package of sparkplug's that reads or writes the cluster.
func TestDecideImportsNoClient(t *testing.T) {
	depstest.Check(t, depstest.Rule{
		Pkg:  ".",
		Self: "github.com/sparkplug-io/sparkplug/plugin/decide",
		Forbid: []string{
			"k8s.io/client-go/",
			"github.com/argoproj/",
			"github.com/sparkplug-io/sparkplug/plugin/kube",
			"github.com/sparkplug-io/sparkplug/plugin/scope",
			"github.com/sparkplug-io/sparkplug/plugin/execute",
			"github.com/sparkplug-io/sparkplug/plugin/nodestatus",
		},
	})
}
