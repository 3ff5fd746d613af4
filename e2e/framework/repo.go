package framework

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/sparkplug-io/sparkplug/e2e/cluster"
)

// modulePath is this repository's module.
const modulePath = "github.com/sparkplug-io/sparkplug"

// RepoRoot finds the repository root: the nearest directory at or above
// the working directory whose go.mod declares this module.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the repository root: %w", err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module "+modulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find the repository root: no go.mod of " + modulePath + " above the working directory")
		}
		dir = parent
	}
}

// ToolsBin returns the tools bin dir: $SPARKPLUG_TOOLS_BIN, else what
// hack/tools.sh says (which the Makefile exports).
func ToolsBin(repoRoot string) (string, error) {
	if dir := os.Getenv(cluster.EnvToolsBin); dir != "" {
		return dir, nil
	}
	out, err := exec.Command("bash", filepath.Join(repoRoot, "hack", "tools.sh"), "bindir").Output()
	if err != nil {
		return "", fmt.Errorf("hack/tools.sh bindir: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}
