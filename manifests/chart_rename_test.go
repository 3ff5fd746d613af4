//go:build chart

package manifests

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// TestChartRenameKeeps: what docs/install.md, "Renaming an installed
// release", says a fullnameOverride or nameOverride set by helm upgrade
// keeps: the plugin's spark-executor-plugin objects and the drivers'
// ServiceAccount. Every other object of the release is renamed, so Helm
// replaces it; in either mode, with every optional object rendered. A
// nameOverride the release's name holds renames nothing.
func TestChartRenameKeeps(t *testing.T) {
	keeps := []string{
		"ConfigMap/team-a/spark-executor-plugin", "ConfigMap/team-b/spark-executor-plugin",
		"Role/team-a/spark-executor-plugin", "Role/team-b/spark-executor-plugin",
		"RoleBinding/team-a/spark-executor-plugin", "RoleBinding/team-b/spark-executor-plugin",
		"Secret/team-a/spark-executor-plugin.service-account-token", "Secret/team-b/spark-executor-plugin.service-account-token",
		"ServiceAccount/team-a/spark", "ServiceAccount/team-b/spark",
		"ServiceAccount/team-a/spark-executor-plugin", "ServiceAccount/team-b/spark-executor-plugin",
	}
	common := []string{"jobNamespaces={team-a,team-b}", "driver.serviceAccount.create=true", "agentRBAC.create=true",
		"tests.enabled=true", "monitoring.podMonitor.enabled=true", "admissionPolicy.enabled=true"}
	for _, tt := range []struct {
		name  string
		sets  []string
		keeps []string
	}{
		{"sidecar", []string{"monitor.enabled=true", "monitor.serviceMonitor.enabled=true", "monitor.prometheusRule.enabled=true",
			"monitor.grafanaDashboard.enabled=true", "kueue.enabled=true", "rbac.sparkSubmit=true"},
			append(slices.Clone(keeps), "Role/team-a/spark-executor-plugin-kueue", "Role/team-b/spark-executor-plugin-kueue",
				"RoleBinding/team-a/spark-executor-plugin-kueue", "RoleBinding/team-b/spark-executor-plugin-kueue",
				"Role/team-a/spark-executor-plugin-spark-submit", "Role/team-b/spark-executor-plugin-spark-submit",
				"RoleBinding/team-a/spark-executor-plugin-spark-submit", "RoleBinding/team-b/spark-executor-plugin-spark-submit")},
		{"controller", []string{"mode=controller", "kueue.enabled=true"},
			[]string{"ConfigMap/team-a/spark-executor-plugin", "ConfigMap/team-b/spark-executor-plugin",
				"ServiceAccount/team-a/spark", "ServiceAccount/team-b/spark"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			names := func(extra ...string) []string {
				args := []string{"template", releaseName, chartDir, "--namespace", systemNamespace, "--api-versions", "monitoring.coreos.com/v1"}
				for _, s := range append(append(slices.Clone(common), tt.sets...), extra...) {
					args = append(args, "--set", s)
				}
				out, err := helmWithTests(t, args...)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
				for {
					var o unstructured.Unstructured
					if err := dec.Decode(&o.Object); errors.Is(err, io.EOF) {
						return names
					} else if err != nil {
						t.Fatal(err)
					}
					if o.Object != nil {
						names = append(names, o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName())
					}
				}
			}
			before := names()
			// A nameOverride the release's name holds keeps the fullname,
			// and every name: only the label changes.
			if kept := names("nameOverride=spark"); !slices.Equal(kept, before) {
				t.Errorf("nameOverride=spark (held in %s): names %q, want %q as without it", releaseName, kept, before)
			}
			for _, override := range []string{"fullnameOverride=platform", "nameOverride=etl"} {
				after := names(override)
				var kept []string
				for _, n := range before {
					if slices.Contains(after, n) {
						kept = append(kept, n)
					}
				}
				slices.Sort(kept)
				want := slices.Sorted(slices.Values(tt.keeps))
				if !slices.Equal(kept, want) {
					t.Errorf("%s: kept %q; docs/install.md says %q", override, kept, want)
				}
			}
		})
	}
}
