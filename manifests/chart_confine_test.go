//go:build chart

package manifests

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// renderWith is helm template of a values set with --set overrides.
func renderWith(t *testing.T, values string, sets ...string) []byte {
	t.Helper()
	args := []string{"template", releaseName, chartDir, "--namespace", releaseNamespace, "--values", filepath.Join(chartTestdir, values)}
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

// TestChartAdmissionPolicy: admissionPolicy.enabled renders
// manifests/admission's policy and binding, spec for spec; off by default.
func TestChartAdmissionPolicy(t *testing.T) {
	if objs := byKind(decodeObjects(t, render(t, chartDir, "default.values.yaml"))); len(objs["ValidatingAdmissionPolicy"])+len(objs["ValidatingAdmissionPolicyBinding"]) > 0 {
		t.Error("the default values install an admission policy")
	}
	var wantPol *admissionv1.ValidatingAdmissionPolicy
	var wantBind *admissionv1.ValidatingAdmissionPolicyBinding
	for _, o := range decodeDocs(t, admissionDir+"/policy.yaml") {
		switch o := o.(type) {
		case *admissionv1.ValidatingAdmissionPolicy:
			wantPol = o
		case *admissionv1.ValidatingAdmissionPolicyBinding:
			wantBind = o
		}
	}
	objs := byKind(decodeObjects(t, render(t, chartDir, "confined.values.yaml")))
	if len(objs["ValidatingAdmissionPolicy"]) != 1 || len(objs["ValidatingAdmissionPolicyBinding"]) != 1 {
		t.Fatalf("%d policies, %d bindings; want 1 each", len(objs["ValidatingAdmissionPolicy"]), len(objs["ValidatingAdmissionPolicyBinding"]))
	}
	pol := objs["ValidatingAdmissionPolicy"][0].(*admissionv1.ValidatingAdmissionPolicy)
	bind := objs["ValidatingAdmissionPolicyBinding"][0].(*admissionv1.ValidatingAdmissionPolicyBinding)
	if pol.Name != wantPol.Name || pol.Namespace != "" || bind.Name != wantBind.Name {
		t.Errorf("policy %s/%s, binding %s; want %s and %s, cluster-scoped", pol.Namespace, pol.Name, bind.Name, wantPol.Name, wantBind.Name)
	}
	if diff := cmp.Diff(wantPol.Spec, pol.Spec); diff != "" {
		t.Errorf("policy spec (-manifests +chart):\n%s", diff)
	}
	if diff := cmp.Diff(wantBind.Spec, bind.Spec); diff != "" {
		t.Errorf("binding spec (-manifests +chart):\n%s", diff)
	}
}
