package controller

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The controller answers no agent request (the acknowledger in the agent
// pod does): nothing it depends on holds the sidecar's request path
// (package request), nor the sidecar's server and wiring.
func TestControllerImportsNoRequestPath(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/sparkplug-io/sparkplug/plugin/controller") {
		t.Fatalf("go list -deps did not list controller itself: %v", deps)
	}
	for _, forbidden := range []string{
		"github.com/sparkplug-io/sparkplug/plugin/request",
		"github.com/sparkplug-io/sparkplug/plugin/server",
		"github.com/sparkplug-io/sparkplug/plugin/sidecar",
	} {
		if slices.Contains(deps, forbidden) {
			t.Errorf("controller depends on %s", forbidden)
		}
	}
}
