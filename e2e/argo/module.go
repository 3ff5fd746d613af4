package argo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// Module is the Go module path of Argo Workflows.
const Module = "github.com/argoproj/argo-workflows/v3"

// ModuleDir returns the directory of the Argo Workflows module that
// repoRoot's go.mod requires (its CRDs and RBAC examples are read from
// there): from `go list -m`, else from the build info and the module cache.
func ModuleDir(ctx context.Context, repoRoot string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", Module)
	cmd.Dir = repoRoot
	if out, err := cmd.Output(); err == nil {
		if dir := strings.TrimSpace(string(out)); dir != "" {
			return dir, nil
		}
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", errors.New("find the Argo module: go list failed and there is no build info")
	}
	for _, d := range info.Deps {
		if d.Path != Module {
			continue
		}
		modcache := os.Getenv("GOMODCACHE")
		if modcache == "" {
			gopath := os.Getenv("GOPATH")
			if gopath == "" {
				home, _ := os.UserHomeDir()
				gopath = filepath.Join(home, "go")
			}
			modcache = filepath.Join(gopath, "pkg", "mod")
		}
		dir := filepath.Join(modcache, Module+"@"+d.Version)
		if _, err := os.Stat(dir); err != nil {
			return "", fmt.Errorf("find the Argo module (go mod download): %w", err)
		}
		return dir, nil
	}
	return "", fmt.Errorf("find the Argo module: %s is not a dependency", Module)
}
