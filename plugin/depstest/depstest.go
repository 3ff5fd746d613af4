package depstest

import (
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Rule is what one package may link, beside the standard library.
type Rule struct {
	// Pkg is the package, as go list takes it: "." or a relative
	// directory, or an import path.
	Pkg string
	// Self is its import path, which its dependencies must list (a check
	// that go list listed the package meant).
	Self string
	// Allow, when not empty, is all it may link: each dependency is one
	// of these, or under one that ends in "/".
	Allow []string
	// Forbid is what it may not link: these packages, or any under one
	// that ends in "/".
	Forbid []string
}

// Check holds each rule's package to it.
func Check(t *testing.T, rules ...Rule) {
	t.Helper()
	for _, r := range rules {
		for _, v := range Violations(t, r) {
			t.Error(v)
		}
	}
}

// Violations says how r's package breaks r, one line each; none when it
// keeps it.
func Violations(t testing.TB, r Rule) []string {
	t.Helper()
	imports := Imports(t, r.Pkg)
	if _, ok := imports[r.Self]; !ok {
		return []string{fmt.Sprintf("go list -deps %s did not list %s", r.Pkg, r.Self)}
	}
	var out []string
	for _, d := range slices.Sorted(maps.Keys(imports)) {
		if len(r.Allow) > 0 && !matches(d, r.Allow) {
			out = append(out, fmt.Sprintf("%s imports %s; it may import %s and the standard library only", r.Self, d, strings.Join(r.Allow, ", ")))
		}
		if matches(d, r.Forbid) {
			out = append(out, fmt.Sprintf("%s depends on %s", r.Self, d))
		}
	}
	return out
}

// Imports is every package pkg depends on (and pkg itself), the standard
// library left out, with the packages each imports, as `go list -deps`
// lists them.
func Imports(t testing.TB, pkg string) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}} {{join .Imports \" \"}}{{end}}", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
	}
	m := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) > 0 {
			m[f[0]] = f[1:]
		}
	}
	if len(m) == 0 {
		t.Fatalf("go list -deps %s listed nothing", pkg)
	}
	return m
}

func matches(d string, patterns []string) bool {
	for _, p := range patterns {
		if d == p || strings.HasSuffix(p, "/") && strings.HasPrefix(d, p) {
			return true
		}
	}
	return false
}
