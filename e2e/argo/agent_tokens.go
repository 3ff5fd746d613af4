package argo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// TokenMode is how agents find the plugin token at /var/run/argo.
type TokenMode string

const (
	// TokenMountNamespace: each agent runs in a private mount namespace
	// with the harness's run dir bind-mounted over /run.
	TokenMountNamespace TokenMode = "mount-namespace"
	// TokenHostFile: the token files are written to /var/run/argo on the
	// host (root only, when no mount namespace can be made).
	TokenHostFile TokenMode = "host-file"
)

// Mode says how agents get their token.
func (a *Agents) Mode() TokenMode { return a.mode }

// chooseTokenMode tries a private mount namespace (as root, else in a user
// namespace), and falls back to host files for root.
func (a *Agents) chooseTokenMode(ctx context.Context) error {
	const probe = ".sparkplug-probe"
	if err := os.WriteFile(filepath.Join(a.run, probe), nil, 0o644); err != nil {
		return fmt.Errorf("write probe: %w", err)
	}
	candidates := [][]string{{"unshare", "--mount", "--propagation", "private"}}
	if os.Geteuid() != 0 {
		candidates = [][]string{{"unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"}}
	}
	var tried []string
	for _, u := range candidates {
		args := append(append([]string{}, u[1:]...), "--", "/bin/sh", "-c", `mount --bind "$0" /run && test -f /run/`+probe, a.run)
		out, err := exec.CommandContext(ctx, u[0], args...).CombinedOutput()
		if err == nil {
			a.mode, a.unsh = TokenMountNamespace, u
			return nil
		}
		tried = append(tried, fmt.Sprintf("%v: %v: %s", u, err, out))
	}
	if os.Geteuid() == 0 {
		a.mode = TokenHostFile
		return nil
	}
	return fmt.Errorf("agents cannot read a plugin token from %s: no mount namespace (%v) and not root", varRunArgo, tried)
}

// writeTokens writes the token file of each plugin.
func (a *Agents) writeTokens(plugins []string) error {
	root := filepath.Join(a.run, "argo")
	if a.mode == TokenHostFile {
		root = varRunArgo
	}
	for _, name := range plugins {
		if name == "" || filepath.Base(name) != name {
			return fmt.Errorf("plugin name %q is not a file name", name)
		}
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create token dir: %w", err)
		}
		path := filepath.Join(dir, "token")
		if b, err := os.ReadFile(path); err == nil && string(b) == a.opts.Token {
			continue
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(a.opts.Token), 0o440); err != nil {
			return fmt.Errorf("write token of plugin %s: %w", name, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("write token of plugin %s: %w", name, err)
		}
		if a.mode == TokenHostFile {
			a.mu.Lock()
			a.hostTokens = append(a.hostTokens, path)
			a.mu.Unlock()
		}
	}
	return nil
}
