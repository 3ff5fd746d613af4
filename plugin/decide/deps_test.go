package decide

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Decide cannot act: nothing it depends on holds a client of the API
// server (the typed clientset, the dynamic client, informers) or a package
// of sparkplug's that acts. (Argo's API types bring client-go's rest
// package along; it is not a client of any object.)
func TestDecideImportsNoClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/sparkplug-io/sparkplug/plugin/decide") {
		t.Fatalf("go list -deps did not list decide itself: %v", deps)
	}
	for _, forbidden := range []string{
		"k8s.io/client-go/kubernetes",
		"k8s.io/client-go/dynamic",
		"k8s.io/client-go/tools/cache",
		"github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned",
		"github.com/sparkplug-io/sparkplug/plugin/kube",
		"github.com/sparkplug-io/sparkplug/plugin/scope",
		"github.com/sparkplug-io/sparkplug/plugin/execute",
		"github.com/sparkplug-io/sparkplug/plugin/nodestatus",
	} {
		if slices.Contains(deps, forbidden) {
			t.Errorf("decide depends on %s", forbidden)
		}
	}
}
