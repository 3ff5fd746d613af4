//go:build chart

package manifests

import (
	"maps"
	"strings"
	"testing"
)

// TestChartServiceAccountAnnotations: each of sparkplug's ServiceAccounts
// and the drivers' carries its own annotations (IRSA, Workload Identity)
// and no other's, and the plugin's token Secret carries only the one that
// names its account, whatever is set.
func TestChartServiceAccountAnnotations(t *testing.T) {
	const key = "eks.amazonaws.com/role-arn"
	sets := []string{
		"--set", "serviceAccount.annotations." + escapeKey(key) + "=plugin",
		"--set", "driver.serviceAccount.create=true",
		"--set", "driver.serviceAccount.annotations." + escapeKey(key) + "=driver",
		"--set", "controller.serviceAccount.annotations." + escapeKey(key) + "=controller",
		"--set", "monitor.serviceAccount.annotations." + escapeKey(key) + "=monitor",
	}
	for _, tc := range []struct {
		mode string
		want map[string]string // ServiceAccount: the annotation's value
	}{
		{"monitor.enabled=true", map[string]string{
			"ServiceAccount team-a/spark-executor-plugin": "plugin",
			"ServiceAccount team-a/spark":                 "driver",
			"ServiceAccount team-a/sparkplug-monitor":     "monitor",
		}},
		{"mode=controller", map[string]string{
			"ServiceAccount team-a/spark":                "driver",
			"ServiceAccount team-a/sparkplug-controller": "controller",
		}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			objs := objects(t, helmTemplate(t, append([]string{"--set", tc.mode}, sets...)...))
			got := map[string]string{}
			for name, o := range objs {
				if o.GetKind() == "ServiceAccount" {
					got[name] = o.GetAnnotations()[key]
				}
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("ServiceAccounts' %s: %v, want %v", key, got, tc.want)
			}
			if s := objs["Secret team-a/spark-executor-plugin.service-account-token"]; s != nil {
				want := map[string]string{"kubernetes.io/service-account.name": "spark-executor-plugin"}
				if !maps.Equal(s.GetAnnotations(), want) {
					t.Errorf("token Secret's annotations %v, want %v", s.GetAnnotations(), want)
				}
			} else if tc.mode != "mode=controller" {
				t.Error("no token Secret")
			}
		})
	}
}

// escapeKey escapes the dots of a key for helm's --set.
func escapeKey(k string) string { return strings.ReplaceAll(k, ".", `\.`) }
