//go:build chart

package manifests

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// servesPolicies is the --api-versions of a cluster that serves
// ValidatingAdmissionPolicy (helm install adds it from discovery).
const servesPolicies = "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy"

// namedVariables are the policy's variables that name a release's
// accounts, token Secrets, Argo's controller and the plugin's image: the
// chart's and manifests/admission's differ in those alone (and in the
// trusted users' matchCondition).
var namedVariables = []string{"sparkplug", "protected", "tokens", "argoController", "pluginImage"}

// renderPolicy renders the chart as release name in namespace ns with
// --set overrides and returns its policy (nil when none) and binding.
func renderPolicy(t *testing.T, name, ns string, sets ...string) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	args := []string{"template", name, chartDir, "--namespace", ns, "--api-versions", servesPolicies}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	out, err := helm(t, args...)
	if err != nil {
		t.Fatalf("helm template %v: %v", sets, err)
	}
	var pol *admissionv1.ValidatingAdmissionPolicy
	var bind *admissionv1.ValidatingAdmissionPolicyBinding
	for _, o := range decodeObjects(t, out) {
		switch o := o.(type) {
		case *admissionv1.ValidatingAdmissionPolicy:
			pol = o
		case *admissionv1.ValidatingAdmissionPolicyBinding:
			bind = o
		}
	}
	if (pol == nil) != (bind == nil) {
		t.Fatalf("%v: policy %v, binding %v; want both or neither", sets, pol != nil, bind != nil)
	}
	return pol, bind
}

// variable is the expression of the policy's variable name.
func variable(pol *admissionv1.ValidatingAdmissionPolicy, name string) string {
	for _, v := range pol.Spec.Variables {
		if v.Name == name {
			return v.Expression
		}
	}
	return ""
}

// TestChartAdmissionPolicy: the policy is installed where the cluster
// serves ValidatingAdmissionPolicy (admissionPolicy.enabled null), always
// with true, never with false; it is manifests/admission's, rule for rule,
// but for the variables that name accounts and the trusted users.
func TestChartAdmissionPolicy(t *testing.T) {
	if objs := byKind(decodeObjects(t, render(t, chartDir, "default.values.yaml"))); len(objs["ValidatingAdmissionPolicy"]) > 0 {
		t.Error("a cluster that does not serve ValidatingAdmissionPolicy gets one")
	}
	if pol, _ := renderPolicy(t, releaseName, releaseNamespace, "admissionPolicy.enabled=false"); pol != nil {
		t.Error("admissionPolicy.enabled=false installs the policy")
	}
	pol, bind := renderPolicy(t, releaseName, releaseNamespace)
	if pol == nil {
		t.Fatal("a cluster that serves ValidatingAdmissionPolicy gets none")
	}
	if objs := byKind(decodeObjects(t, render(t, chartDir, "confined.values.yaml"))); len(objs["ValidatingAdmissionPolicy"]) != 1 {
		t.Error("admissionPolicy.enabled=true installs no policy")
	}
	var want *admissionv1.ValidatingAdmissionPolicy
	var wantBind *admissionv1.ValidatingAdmissionPolicyBinding
	for _, o := range decodeDocs(t, admissionDir+"/policy.yaml") {
		switch o := o.(type) {
		case *admissionv1.ValidatingAdmissionPolicy:
			want = o
		case *admissionv1.ValidatingAdmissionPolicyBinding:
			wantBind = o
		}
	}
	ignore := cmpopts.IgnoreSliceElements(func(v admissionv1.Variable) bool {
		for _, n := range namedVariables {
			if v.Name == n {
				return true
			}
		}
		return false
	})
	trusted := cmpopts.IgnoreSliceElements(func(c admissionv1.MatchCondition) bool { return c.Name == "not-trusted-installer" })
	if diff := cmp.Diff(want.Spec, pol.Spec, ignore, trusted); diff != "" {
		t.Errorf("policy spec but the names (-manifests +chart):\n%s", diff)
	}
	for _, n := range namedVariables {
		if variable(pol, n) == "" || variable(want, n) == "" {
			t.Errorf("variable %s: chart %q, manifests %q; want both", n, variable(pol, n), variable(want, n))
		}
	}
	wantBind.Spec.PolicyName = pol.Name
	if diff := cmp.Diff(wantBind.Spec, bind.Spec, cmpopts.IgnoreFields(admissionv1.ValidatingAdmissionPolicyBindingSpec{}, "MatchResources")); diff != "" {
		t.Errorf("binding spec but where it holds (-manifests +chart):\n%s", diff)
	}
	// The release's namespaces only: another release's policy names
	// other accounts.
	wantMatch := &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: []string{releaseNamespace, "argo"}}}}}
	if diff := cmp.Diff(wantMatch, bind.Spec.MatchResources); diff != "" {
		t.Errorf("binding's match (-want +got):\n%s", diff)
	}
}

// TestChartAdmissionPolicyNames: the policy names the accounts the release
// creates, exactly, from its name and namespace: the plugin's of each job
// namespace (sidecar) or <release>-controller (controller mode), the
// monitor's, helm test's, Argo's (argo.*), who makes agent pods (any
// account of Argo's namespace, or argo.controllerServiceAccount), the
// plugin's image; the trusted users; it is named for the release and
// bound in its namespaces only (job namespaces, its own, Argo's).
func TestChartAdmissionPolicyNames(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sets   []string
		policy string
		says   map[string][]string // variable: what it must name
		not    map[string][]string
		where  []string // the binding's namespaces
	}{
		{"sidecar", []string{"jobNamespaces={team-a,team-b}", "monitor.enabled=true", "tests.enabled=true"}, "spark.platform.sparkplug.io",
			map[string][]string{
				"sparkplug": {`["system:serviceaccount:team-a:spark-executor-plugin","system:serviceaccount:team-b:spark-executor-plugin"]`},
				"protected": {`"team-a:spark-executor-plugin"`, `"team-b:spark-executor-plugin"`, `"platform:spark-monitor"`,
					`"platform:spark-sparkplug-test"`, `"argo:argo"`, `"argo:argo-server"`, `"argo:argo-workflows-workflow-controller"`},
				"tokens":         {`"spark-executor-plugin.service-account-token"`, `"spark-monitor.service-account-token"`, `"argo.service-account-token"`},
				"argoController": {`request.userInfo.username.startsWith('system:serviceaccount:argo:')`},
				"pluginImage":    {`c.image == 'ghcr.io/sparkplug-io/sparkplug:`},
			},
			map[string][]string{"sparkplug": {"controller", "monitor"}},
			[]string{"team-a", "team-b", "platform", "argo"}},
		{"controller", []string{"mode=controller", "jobNamespaces={team-a,team-b}", "argo.namespace=workflows",
			"argo.controllerServiceAccount=argo-workflows-workflow-controller", "argo.serviceAccounts={argo-workflows-workflow-controller,argo-workflows-server}",
			"admissionPolicy.trustedUsers={system:serviceaccount:flux-system:helm-controller}"}, "spark.platform.sparkplug.io",
			map[string][]string{
				"sparkplug":      {`["system:serviceaccount:platform:spark-controller"]`},
				"protected":      {`"platform:spark-controller"`, `"workflows:argo-workflows-workflow-controller"`, `"workflows:argo-workflows-server"`},
				"argoController": {`request.userInfo.username == 'system:serviceaccount:workflows:argo-workflows-workflow-controller'`},
			},
			map[string][]string{"sparkplug": {"spark-executor-plugin"}, "protected": {"spark-executor-plugin", "argo:argo"}},
			[]string{"team-a", "team-b", "platform", "workflows"}},
		// The names follow fullnameOverride and nameOverride: the policy's
		// and the accounts' it names.
		{"fullnameOverride", []string{"mode=controller", "jobNamespaces={team-a,team-b}", "fullnameOverride=etl"}, "etl.platform.sparkplug.io",
			map[string][]string{
				"sparkplug": {`["system:serviceaccount:platform:etl-controller"]`},
				"protected": {`"platform:etl-controller"`},
			},
			map[string][]string{"sparkplug": {"spark-controller"}, "protected": {"spark-controller"}},
			[]string{"team-a", "team-b", "platform", "argo"}},
		{"nameOverride", []string{"jobNamespaces={team-a,team-b}", "monitor.enabled=true", "tests.enabled=true", "nameOverride=batch"}, "spark-batch.platform.sparkplug.io",
			map[string][]string{
				"protected": {`"platform:spark-batch-monitor"`, `"platform:spark-batch-sparkplug-test"`, `"team-a:spark-executor-plugin"`},
				"tokens":    {`"spark-batch-monitor.service-account-token"`},
			},
			map[string][]string{"protected": {`"platform:spark-monitor"`}},
			[]string{"team-a", "team-b", "platform", "argo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pol, bind := renderPolicy(t, "spark", "platform", tc.sets...)
			if pol == nil {
				t.Fatal("no policy")
			}
			if pol.Name != tc.policy || bind.Name != tc.policy || bind.Spec.PolicyName != tc.policy {
				t.Errorf("policy %s, binding %s of %s; want %s", pol.Name, bind.Name, bind.Spec.PolicyName, tc.policy)
			}
			for v, says := range tc.says {
				for _, s := range says {
					if !strings.Contains(variable(pol, v), s) {
						t.Errorf("variable %s = %s; want it to name %s", v, variable(pol, v), s)
					}
				}
			}
			for v, nots := range tc.not {
				for _, s := range nots {
					if strings.Contains(variable(pol, v), s) {
						t.Errorf("variable %s = %s names %s", v, variable(pol, v), s)
					}
				}
			}
			if m := bind.Spec.MatchResources; m == nil || m.NamespaceSelector == nil || len(m.NamespaceSelector.MatchExpressions) != 1 ||
				!slices.Equal(m.NamespaceSelector.MatchExpressions[0].Values, tc.where) {
				t.Errorf("binding matches %+v; want namespaces %q", m, tc.where)
			}
			trusted := pol.Spec.MatchConditions[1].Expression
			if wantTrusted := strings.Contains(strings.Join(tc.sets, " "), "trustedUsers"); wantTrusted != strings.Contains(trusted, `"system:serviceaccount:flux-system:helm-controller"`) {
				t.Errorf("trusted users' condition %s", trusted)
			}
		})
	}
}

// TestChartRefusesBorrowableAccounts: an account of the release's
// namespace bound in every job namespace (the controller's, the monitor's,
// helm test's) is refused while the release's namespace is one of several
// job namespaces, the message naming the value and the namespaces; a
// release in a namespace of its own, or one job namespace that is the
// release's, is installed.
func TestChartRefusesBorrowableAccounts(t *testing.T) {
	for _, set := range []string{"mode=controller", "monitor.enabled=true", "tests.enabled=true"} {
		_, err := helmWithTests(t, "template", releaseName, chartDir, "--namespace", releaseNamespace,
			"--set", "jobNamespaces={team-a,team-b}", "--set", set)
		if err == nil {
			t.Errorf("--set %s with the release's namespace among jobNamespaces: installed", set)
			continue
		}
		for _, says := range []string{`the release's namespace "team-a" is listed in jobNamespaces while ` + set, "act in team-b", "a namespace of its own"} {
			if !strings.Contains(err.Error(), says) {
				t.Errorf("--set %s: %v; want it to say %q", set, err, says)
			}
		}
		for _, args := range [][]string{
			{"--namespace", systemNamespace, "--set", "jobNamespaces={team-a,team-b}"},
			{"--namespace", releaseNamespace},
			{"--namespace", releaseNamespace, "--set", "jobNamespaces={team-a}"},
		} {
			if _, err := helmWithTests(t, append(append([]string{"template", releaseName, chartDir}, args...), "--set", set)...); err != nil {
				t.Errorf("--set %s %q: %v; want it installed", set, args, err)
			}
		}
	}
}
