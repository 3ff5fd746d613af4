package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const (
	deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
	namespace  = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: jobs\n"
)

// kinds lists the kinds of a rendered stream, in order.
func kinds(yml []byte) []string {
	var out []string
	for _, line := range strings.Split(string(yml), "\n") {
		if k, ok := strings.CutPrefix(line, "kind: "); ok {
			out = append(out, k)
		}
	}
	return out
}

// As `kubectl kustomize`: without sortOptions, kustomize's legacy order
// (a Namespace before what goes into it), not the input order that
// krusty's own default options keep; with sortOptions, theirs.
func TestOrderIsKubectls(t *testing.T) {
	for _, tc := range []struct {
		name, kustomization, want string
	}{
		{"legacy", "resources: [deployment.yaml, namespace.yaml]\n", "Namespace,Deployment"},
		{"fifo", "resources: [deployment.yaml, namespace.yaml]\nsortOptions:\n  order: fifo\n", "Deployment,Namespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, map[string]string{"kustomization.yaml": tc.kustomization,
				"deployment.yaml": deployment, "namespace.yaml": namespace})
			yml, err := render(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(kinds(yml), ","); got != tc.want {
				t.Errorf("kinds %s, want %s:\n%s", got, tc.want, yml)
			}
		})
	}
}

// As `kubectl kustomize`: a resource outside the kustomization's root is
// refused (LoadRestrictionsRootOnly).
func TestFilesOutsideTheRootAreRefused(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"namespace.yaml": namespace})
	dir := filepath.Join(root, "base")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, map[string]string{"kustomization.yaml": "resources: [../namespace.yaml]\n"})
	if _, err := render(dir); err == nil || !strings.Contains(err.Error(), "security") {
		t.Errorf("a file outside the root: %v, want kustomize's load restriction", err)
	}
}

// The command writes the same YAML to -out as to stdout, and refuses a
// call without one directory.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"kustomization.yaml": "resources: [namespace.yaml]\n", "namespace.yaml": namespace})
	var stdout, stderr bytes.Buffer
	if err := run([]string{dir}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != namespace {
		t.Errorf("stdout %q, want %q", stdout.String(), namespace)
	}
	out := filepath.Join(t.TempDir(), "out.yaml")
	if err := run([]string{"-out", out, dir}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != namespace {
		t.Errorf("-out: %q, %v", b, err)
	}
	if err := run(nil, &stdout, &stderr); err == nil {
		t.Error("no directory: no error")
	}
}

// The install's own kustomizations render, the plugin ConfigMap among
// them (what hack/release.sh makes the install bundle of).
func TestManifestsRender(t *testing.T) {
	for dir, want := range map[string]string{
		"../../../manifests":                  "ConfigMap",
		"../../../manifests/modes/controller": "Deployment",
		"../../../manifests/monitor":          "Deployment",
	} {
		yml, err := render(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(","+strings.Join(kinds(yml), ",")+",", ","+want+",") {
			t.Errorf("%s renders %v, no %s", dir, kinds(yml), want)
		}
	}
}
