package depstest

import (
	"strings"
	"testing"
)

const module = "github.com/sparkplug-io/sparkplug/"

// Each kind of rule finds what breaks it: a package outside Allow, a
// Forbid one or one under a Forbid tree, and a
// package go list did not list.
func TestViolationsAreFound(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule Rule
		want string
	}{
		{"allow", Rule{Pkg: "../ack", Self: module + "plugin/ack", Allow: []string{module + "plugin/ack"}},
			"plugin/ack imports " + module + "plugin/spark"},
		{"forbid", Rule{Pkg: "../ack", Self: module + "plugin/ack", Forbid: []string{module + "plugin/"}},
			"plugin/ack depends on " + module + "plugin/spark"},
		{"forbid a tree", Rule{Pkg: "../step", Self: module + "plugin/step", Forbid: []string{"k8s.io/client-go/"}},
			"plugin/step depends on k8s.io/client-go/rest"},
		{"self", Rule{Pkg: "../ack", Self: module + "plugin/edge"}, "did not list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Violations(t, tc.rule)
			if !strings.Contains(strings.Join(got, "\n"), tc.want) {
				t.Errorf("violations %q; want one saying %q", got, tc.want)
			}
		})
	}
}

// A package that keeps its rule has no violation.
func TestAKeptRuleHasNone(t *testing.T) {
	if got := Violations(t, Rule{Pkg: "../spark", Self: module + "plugin/spark", Allow: []string{module + "plugin/spark"}}); len(got) > 0 {
		t.Errorf("violations %q; want none", got)
	}
}
