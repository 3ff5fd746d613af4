package decide

import (
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/depstest"
)

// Decide cannot act: nothing it depends on holds a client of the API
// server (the typed clientset, the dynamic client, informers) or a package
// of sparkplug's that acts. Of client-go it links only what Argo's API
// types bring along (the API group package names client-go's rest
// package, a REST config and no client of any object): no package of
// sparkplug's, Kubernetes' or Argo's but that one imports client-go.
func TestDecideImportsNoClient(t *testing.T) {
	depstest.Check(t, depstest.Rule{
		Pkg:  ".",
		Self: "github.com/sparkplug-io/sparkplug/plugin/decide",
		Forbid: []string{
			"k8s.io/client-go/kubernetes",
			"k8s.io/client-go/dynamic",
			"k8s.io/client-go/tools/cache",
			"k8s.io/client-go/informers",
			"github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned",
			"github.com/sparkplug-io/sparkplug/plugin/kube",
			"github.com/sparkplug-io/sparkplug/plugin/scope",
			"github.com/sparkplug-io/sparkplug/plugin/execute",
			"github.com/sparkplug-io/sparkplug/plugin/nodestatus",
		},
		Only: map[string][]string{
			"k8s.io/client-go/": {"github.com/argoproj/argo-workflows/v3/pkg/apis/workflow"},
		},
	})
}
