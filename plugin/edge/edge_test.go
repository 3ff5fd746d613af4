package edge

import (
	"os/exec"
	"strings"
	"testing"
)

// Package edge is what the acknowledger shares with the sidecar, so it
// links nothing but the standard library (no gin, no Argo types, no
// Kubernetes client, no other package of sparkplug).
func TestImportsTheStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, d := range strings.Fields(string(out)) {
		if d != "github.com/sparkplug-io/sparkplug/plugin/edge" {
			t.Errorf("package edge imports %s; it may import the standard library only", d)
		}
	}
}
