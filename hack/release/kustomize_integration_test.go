//go:build integration

package release

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// hack/release/kustomize, which renders the release's install bundles,
// writes what `kubectl kustomize` (the test control plane's kubectl, which
// rendered them before) writes, byte for byte, for every kustomization of
// manifests/.
func TestKustomizeIsKubectlKustomize(t *testing.T) {
	kubectl := filepath.Join(os.Getenv("SPARKPLUG_TOOLS_BIN"), "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("kubectl of the tools: %v (run make tools, or set SPARKPLUG_TOOLS_BIN)", err)
	}
	root := filepath.Join("..", "..")
	helper := filepath.Join(t.TempDir(), "kustomize")
	if b, err := exec.Command("go", "build", "-o", helper, "./kustomize").CombinedOutput(); err != nil {
		t.Fatalf("go build ./hack/release/kustomize: %v\n%s", err, b)
	}
	var dirs []string
	err := filepath.WalkDir(filepath.Join(root, "manifests"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "kustomization.yaml" {
			dirs = append(dirs, filepath.Dir(path))
		}
		return err
	})
	if err != nil || len(dirs) < 4 {
		t.Fatalf("kustomizations under manifests/: %v, %v", dirs, err)
	}
	for _, dir := range dirs {
		want, werr := exec.Command(kubectl, "kustomize", dir).Output()
		got, gerr := exec.Command(helper, dir).Output()
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: kubectl kustomize %v, the helper %v", dir, werr, gerr)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the helper's %d bytes are not kubectl kustomize's %d:\n%s", dir, len(got), len(want), got)
		}
	}
}
