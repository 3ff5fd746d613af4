package manifests

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

const (
	sparkSubmitDir = "spark-submit"
	admissionDir   = "admission"
)

// TestSparkSubmitRBAC: spark-submit/ grants patch on ConfigMaps and
// Services (Spark 4's server-side apply) in a Role of its own, bound to
// the plugin's ServiceAccount, and nothing else; it is a kustomize
// Component, added where spark-submit runs.
func TestSparkSubmitRBAC(t *testing.T) {
	var k struct {
		Kind      string   `json:"kind"`
		Resources []string `json:"resources"`
	}
	b, err := os.ReadFile(sparkSubmitDir + "/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	if k.Kind != "Component" || !slices.Equal(k.Resources, []string{rbacFile}) {
		t.Errorf("%s/kustomization.yaml: kind %s, resources %q; want a Component of %s", sparkSubmitDir, k.Kind, k.Resources, rbacFile)
	}
	var role *rbacv1.Role
	var rb *rbacv1.RoleBinding
	for _, o := range decodeDocs(t, sparkSubmitDir+"/"+rbacFile) {
		switch o := o.(type) {
		case *rbacv1.Role:
			role = o
		case *rbacv1.RoleBinding:
			rb = o
		default:
			t.Errorf("unexpected %T", o)
		}
	}
	if role == nil || rb == nil {
		t.Fatal("want a Role and a RoleBinding")
	}
	want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps", "services"}, Verbs: []string{"patch"}}}
	if diff := cmp.Diff(want, role.Rules); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	if rb.RoleRef.Name != role.Name || role.Name == serviceAccount || !slices.Equal(rb.Subjects, []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount}}) {
		t.Errorf("binding %+v to %+v; want the plugin's ServiceAccount bound to Role %s (not the plugin's own Role)", rb.Subjects, rb.RoleRef, role.Name)
	}
}

// TestAdmissionPolicy: admission/ is a ValidatingAdmissionPolicy and its
// binding (Deny, every namespace) that match creates, updates and deletes
// of every kind the plugin's Roles let it change, and ephemeral
// containers; whose variables name the accounts kustomize creates, the
// plugin's token and image and Argo's controller; and whose rules name
// the labels sparkplug and Argo use. That it refuses and allows what it
// says is the integration tests' (TestAdmissionPolicyConfinesThePlugin,
// TestAdmissionPolicyGuardsAccountsAndRuns).
func TestAdmissionPolicy(t *testing.T) {
	var k struct {
		Resources []string `json:"resources"`
	}
	b, err := os.ReadFile(admissionDir + "/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(k.Resources, []string{"policy.yaml"}) {
		t.Errorf("%s resources %q", admissionDir, k.Resources)
	}
	var pol *admissionv1.ValidatingAdmissionPolicy
	var bind *admissionv1.ValidatingAdmissionPolicyBinding
	for _, o := range decodeDocs(t, admissionDir+"/policy.yaml") {
		switch o := o.(type) {
		case *admissionv1.ValidatingAdmissionPolicy:
			pol = o
		case *admissionv1.ValidatingAdmissionPolicyBinding:
			bind = o
		default:
			t.Errorf("unexpected %T", o)
		}
	}
	if pol == nil || bind == nil {
		t.Fatal("want a ValidatingAdmissionPolicy and its binding")
	}
	if bind.Spec.PolicyName != pol.Name || !slices.Equal(bind.Spec.ValidationActions, []admissionv1.ValidationAction{admissionv1.Deny}) ||
		bind.Spec.MatchResources != nil || bind.Spec.ParamRef != nil {
		t.Errorf("binding %+v; want Deny of %s in every namespace", bind.Spec, pol.Name)
	}
	if pol.Spec.FailurePolicy == nil || *pol.Spec.FailurePolicy != admissionv1.Fail {
		t.Error("failurePolicy: want Fail")
	}
	// Every resource the plugin's Roles let it update, patch or delete.
	changeable := map[string]bool{}
	for _, file := range []string{rbacFile, sparkSubmitDir + "/" + rbacFile} {
		for _, o := range decodeDocs(t, file) {
			if r, ok := o.(*rbacv1.Role); ok {
				for _, rule := range r.Rules {
					if slices.ContainsFunc(rule.Verbs, func(v string) bool { return v == "update" || v == "patch" || v == "delete" }) {
						for _, g := range rule.APIGroups {
							for _, res := range rule.Resources {
								if !strings.Contains(res, "/") && res != "events" {
									changeable[g+"/"+res] = true
								}
							}
						}
					}
				}
			}
		}
	}
	matched := map[string]bool{}
	for _, rule := range pol.Spec.MatchConstraints.ResourceRules {
		if !slices.Equal(rule.Operations, []admissionv1.OperationType{admissionv1.Create, admissionv1.Update, admissionv1.Delete}) {
			t.Errorf("rule %+v: operations %v, want CREATE, UPDATE and DELETE", rule.APIGroups, rule.Operations)
		}
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				matched[g+"/"+res] = true
			}
		}
	}
	for res := range changeable {
		if !matched[res] {
			t.Errorf("the plugin may change %s, which the policy does not match", res)
		}
	}
	if !matched["/pods/ephemeralcontainers"] {
		t.Error("the policy does not match pods/ephemeralcontainers: an ephemeral container could mount an agent pod's token")
	}
	vars := map[string]string{}
	for _, v := range pol.Spec.Variables {
		vars[v.Name] = v.Expression
	}
	for name, says := range map[string]string{
		"sparkplug":      "':" + serviceAccount + "'",
		"protected":      "'" + serviceAccount + "'",
		"tokens":         "'" + serviceAccount + ".service-account-token'",
		"pluginToken":    "'" + serviceAccount + ".service-account-token'",
		"argoController": "'system:serviceaccount:argo:'",
		"pluginImage":    "'" + strings.SplitN(loadPlugin(t).Spec.Sidecar.Container.Image, ":", 2)[0] + ":'",
	} {
		if !strings.Contains(vars[name], says) {
			t.Errorf("variable %s = %q; want it to name %s", name, vars[name], says)
		}
	}
	var exprs []string
	for _, v := range pol.Spec.Validations {
		exprs = append(exprs, v.Expression)
		if v.Message == "" && v.MessageExpression == "" {
			t.Errorf("validation %q has no message", v.Expression)
		}
	}
	all := strings.Join(append(exprs, slices.Collect(maps.Values(vars))...), "\n")
	for _, label := range []string{"'" + labelKeyConfigMapType + "'", "'" + spark.LabelWorkflowUID + "'", "'workflows.argoproj.io/node-id'"} {
		if !strings.Contains(all, label) {
			t.Errorf("the policy never names label %s", label)
		}
	}
}
