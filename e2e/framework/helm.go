package framework

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Helm runs the pinned helm (built by hack/helm.sh into its cache on first
// use) against the environment's cluster as its admin, and returns what it
// printed.
func (e *Env) Helm(ctx context.Context, args ...string) (string, error) {
	return e.HelmAs(ctx, e.Cluster.Kubeconfig, args...)
}

// HelmAs is Helm as the identity of kubeconfig (Confined's).
func (e *Env) HelmAs(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	e.helmOnce.Do(func() {
		build := exec.CommandContext(ctx, "bash", filepath.Join(e.RepoRoot, "hack", "helm.sh"), "build")
		if out, err := build.CombinedOutput(); err != nil {
			e.helmErr = fmt.Errorf("hack/helm.sh build: %w\n%s", err, out)
			return
		}
		dir, err := exec.CommandContext(ctx, "bash", filepath.Join(e.RepoRoot, "hack", "helm.sh"), "bindir").Output()
		if err != nil {
			e.helmErr = fmt.Errorf("hack/helm.sh bindir: %w", err)
			return
		}
		e.helm = filepath.Join(strings.TrimSpace(string(dir)), "helm")
	})
	if e.helmErr != nil {
		return "", e.helmErr
	}
	cmd := exec.CommandContext(ctx, e.helm, append(args, "--kubeconfig", kubeconfig)...)
	cmd.Dir = e.RepoRoot
	cmd.Env = append(cmd.Environ(), "HELM_CACHE_HOME="+filepath.Join(e.dir, "helm", "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(e.dir, "helm", "config"), "HELM_DATA_HOME="+filepath.Join(e.dir, "helm", "data"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
