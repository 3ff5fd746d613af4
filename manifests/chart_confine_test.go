//go:build chart

package manifests

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
)

// renderWith is helm template of a values set with --set overrides.
func renderWith(t *testing.T, values string, sets ...string) []byte {
	t.Helper()
	args := []string{"template", releaseName, chartDir, "--namespace", namespaceOf(values), "--values", filepath.Join(chartTestdir, values)}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	out, err := helm(t, args...)
	if err != nil {
		t.Fatalf("helm template %s %v: %v", values, sets, err)
	}
	return out
}

// TestChartSparkSubmitRBAC: spark-submit's patch on ConfigMaps and
// Services (manifests/spark-submit's Role) is rendered where the
// spark-submit launcher can run (serve.sparkHome) or rbac.sparkSubmit
// says so, and nowhere else; the plugin's own Role never has it.
func TestChartSparkSubmitRBAC(t *testing.T) {
	var want *rbacv1.Role
	for _, o := range decodeDocs(t, sparkSubmitDir+"/"+rbacFile) {
		if r, ok := o.(*rbacv1.Role); ok {
			want = r
		}
	}
	for _, tc := range []struct {
		name   string
		values string
		sets   []string
		want   bool
	}{
		{"default", "default.values.yaml", nil, false},
		{"sparkHome set", "digest-flags.values.yaml", nil, true},
		{"sparkHome set, rbac.sparkSubmit false", "digest-flags.values.yaml", []string{"rbac.sparkSubmit=false"}, false},
		{"rbac.sparkSubmit true", "confined.values.yaml", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := byKind(decodeObjects(t, renderWith(t, tc.values, tc.sets...)))
			var got *rbacv1.Role
			for _, o := range objs["Role"] {
				r := o.(*rbacv1.Role)
				if r.Name == want.Name {
					got = r
				}
				if r.Name == serviceAccount {
					for _, rule := range r.Rules {
						for _, res := range rule.Resources {
							if (res == "configmaps" || res == "services") && len(rule.Verbs) != 4 {
								t.Errorf("the plugin's Role grants %s %v", res, rule.Verbs)
							}
						}
					}
				}
			}
			if (got != nil) != tc.want {
				t.Fatalf("Role %s rendered: %v, want %v", want.Name, got != nil, tc.want)
			}
			if got == nil {
				return
			}
			if diff := cmp.Diff(want.Rules, got.Rules); diff != "" {
				t.Errorf("rules (-manifests +chart):\n%s", diff)
			}
			bound := false
			for _, o := range objs["RoleBinding"] {
				rb := o.(*rbacv1.RoleBinding)
				bound = bound || rb.RoleRef.Name == want.Name && len(rb.Subjects) == 1 && rb.Subjects[0].Name == serviceAccount && rb.Subjects[0].Namespace == releaseNamespace
			}
			if !bound {
				t.Errorf("Role %s is not bound to %s/%s", want.Name, releaseNamespace, serviceAccount)
			}
		})
	}
}
