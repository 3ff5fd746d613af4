package manifests

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// The Kueue component (manifests/components/kueue): the RBAC of queueing
// Spark steps with Kueue, added only where Kueue is used.
const (
	kueueDir          = "components/kueue"
	kueueRBACFile     = kueueDir + "/rbac.yaml"
	kueuePerNamespace = kueueDir + "/per-namespace"
	kueueGroup        = "kueue.x-k8s.io"
)

var (
	// kueueRoleRules: in the namespace, Workloads created, followed and
	// deleted, and their status read and patched (PodsReady). Never
	// updated or patched. A LocalQueue's pending workloads read (a
	// waiting Workload's place) where Kueue serves its visibility API.
	kueueRoleRules = []rbacv1.PolicyRule{
		{APIGroups: []string{kueueGroup}, Resources: []string{"workloads"}, Verbs: []string{"get", "list", "watch", "create", "delete"}},
		{APIGroups: []string{kueueGroup}, Resources: []string{"workloads/status"}, Verbs: []string{"get", "patch"}},
		{APIGroups: []string{"visibility.kueue.x-k8s.io"}, Resources: []string{"localqueues/pendingworkloads"}, Verbs: []string{"get"}},
	}
	// kueueReadRules: cluster-scoped objects, read only.
	kueueReadRules = []rbacv1.PolicyRule{
		{APIGroups: []string{kueueGroup}, Resources: []string{"resourceflavors", "workloadpriorityclasses"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"scheduling.k8s.io"}, Resources: []string{"priorityclasses"}, Verbs: []string{"get", "list", "watch"}},
	}
)

// kueueRBAC is the component's rbac.yaml: its Role, RoleBinding,
// ClusterRole and ClusterRoleBinding, and nothing else.
type kueueRBAC struct {
	role  *rbacv1.Role
	rb    *rbacv1.RoleBinding
	cr    *rbacv1.ClusterRole
	crb   *rbacv1.ClusterRoleBinding
	other []string
}

func loadKueueRBAC(t *testing.T) kueueRBAC {
	t.Helper()
	var k kueueRBAC
	for _, o := range decodeDocs(t, kueueRBACFile) {
		switch o := o.(type) {
		case *rbacv1.Role:
			k.role = o
		case *rbacv1.RoleBinding:
			k.rb = o
		case *rbacv1.ClusterRole:
			k.cr = o
		case *rbacv1.ClusterRoleBinding:
			k.crb = o
		default:
			k.other = append(k.other, kindOf(o))
		}
	}
	if k.role == nil || k.rb == nil || k.cr == nil || k.crb == nil || len(k.other) > 0 {
		t.Fatalf("%s: want a Role, a RoleBinding, a ClusterRole and a ClusterRoleBinding; also has %q", kueueRBACFile, k.other)
	}
	return k
}

// TestKueueComponent: components/kueue is a kustomize Component of
// rbac.yaml whose Role allows exactly what sparkplug does with Workloads
// and whose ClusterRole only reads the cluster-scoped objects it needs;
// the bindings name the kustomization's ServiceAccount (a replacement)
// and per-namespace/ names the ClusterRoleBinding after the namespace.
// That the API server grants exactly this is TestKueueRBACGrants'
// (integration).
func TestKueueComponent(t *testing.T) {
	var kust struct {
		Kind         string   `json:"kind"`
		Resources    []string `json:"resources"`
		Replacements []struct {
			Source struct {
				Kind      string `json:"kind"`
				Name      string `json:"name"`
				FieldPath string `json:"fieldPath"`
			} `json:"source"`
			Targets []struct {
				Select struct {
					Kind string `json:"kind"`
					Name string `json:"name"`
				} `json:"select"`
				FieldPaths []string `json:"fieldPaths"`
			} `json:"targets"`
		} `json:"replacements"`
	}
	b, err := os.ReadFile(kueueDir + "/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &kust); err != nil {
		t.Fatal(err)
	}
	if kust.Kind != "Component" || !slices.Equal(kust.Resources, []string{"rbac.yaml"}) {
		t.Errorf("%s/kustomization.yaml: kind %s, resources %q; want a Component of rbac.yaml", kueueDir, kust.Kind, kust.Resources)
	}

	k := loadKueueRBAC(t)
	if diff := cmp.Diff(kueueRoleRules, k.role.Rules); diff != "" {
		t.Errorf("Role %s rules (-want +got):\n%s", k.role.Name, diff)
	}
	if diff := cmp.Diff(kueueReadRules, k.cr.Rules); diff != "" {
		t.Errorf("ClusterRole %s rules (-want +got):\n%s", k.cr.Name, diff)
	}
	// A Role of its own: the base Roles stay as they are.
	if k.role.Name == serviceAccount || k.role.Name == controllerName {
		t.Errorf("Role %s has the name of a base Role", k.role.Name)
	}
	if k.rb.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: k.role.Name}) {
		t.Errorf("RoleBinding %s refers to %+v, want Role %s", k.rb.Name, k.rb.RoleRef, k.role.Name)
	}
	if k.crb.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: k.cr.Name}) {
		t.Errorf("ClusterRoleBinding %s refers to %+v, want ClusterRole %s", k.crb.Name, k.crb.RoleRef, k.cr.Name)
	}
	// Left unreplaced, the binding's name is one the API server refuses.
	if !strings.Contains(k.crb.Name, "%") {
		t.Errorf("ClusterRoleBinding %s: want a placeholder with '%%' until per-namespace/ names it", k.crb.Name)
	}
	for _, subjects := range [][]rbacv1.Subject{k.rb.Subjects, k.crb.Subjects} {
		if len(subjects) != 1 || subjects[0].Kind != rbacv1.ServiceAccountKind {
			t.Errorf("subjects %+v, want the one ServiceAccount", subjects)
		}
	}

	// The replacement: the ServiceAccount's name into both bindings.
	targets := map[string]bool{}
	for _, r := range kust.Replacements {
		if r.Source.Kind != "ServiceAccount" || r.Source.Name != "" || r.Source.FieldPath != "metadata.name" {
			t.Errorf("replacement source %+v, want the kustomization's (one) ServiceAccount's name", r.Source)
		}
		for _, tg := range r.Targets {
			if slices.Equal(tg.FieldPaths, []string{"subjects.0.name"}) {
				targets[tg.Select.Kind+"/"+tg.Select.Name] = true
			}
		}
	}
	for _, want := range []string{"RoleBinding/" + k.rb.Name, "ClusterRoleBinding/" + k.crb.Name} {
		if !targets[want] {
			t.Errorf("no replacement sets the ServiceAccount of %s (targets %v)", want, targets)
		}
	}

	// per-namespace/: a transformer that puts the namespace into the
	// ClusterRoleBinding's name.
	rt, err := os.ReadFile(kueuePerNamespace + "/replacement.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var transformer struct {
		APIVersion, Kind string
		Replacements     []struct {
			Source struct {
				Kind, Name, FieldPath string
			}
			Targets []struct {
				Select struct{ Kind, Name string }
			}
		}
	}
	if err := yaml.Unmarshal(rt, &transformer); err != nil {
		t.Fatal(err)
	}
	if transformer.APIVersion != "builtin" || transformer.Kind != "ReplacementTransformer" || len(transformer.Replacements) != 1 ||
		transformer.Replacements[0].Source.FieldPath != "metadata.namespace" || len(transformer.Replacements[0].Targets) != 1 ||
		transformer.Replacements[0].Targets[0].Select.Name != k.crb.Name {
		t.Errorf("%s/replacement.yaml: %+v; want a ReplacementTransformer of the namespace into ClusterRoleBinding %s", kueuePerNamespace, transformer, k.crb.Name)
	}
}

// TestKueueIsOptIn: without the component nothing of Kueue is installed:
// no base Role (the sidecar's, the controller's, the monitor's) has a
// rule on Kueue's group, and no base kustomization uses the component.
func TestKueueIsOptIn(t *testing.T) {
	for _, file := range []string{rbacFile, controllerRBACFile, monitorDir + "/rbac.yaml", sparkSubmitDir + "/" + rbacFile} {
		for _, o := range decodeDocs(t, file) {
			var rules []rbacv1.PolicyRule
			switch o := o.(type) {
			case *rbacv1.Role:
				rules = o.Rules
			case *rbacv1.ClusterRole:
				rules = o.Rules
			}
			for _, r := range rules {
				if slices.Contains(r.APIGroups, kueueGroup) || slices.Contains(r.Resources, "priorityclasses") {
					t.Errorf("%s grants %v on %v: Kueue's rights belong in %s", file, r.Verbs, r.Resources, kueueDir)
				}
			}
		}
	}
	for _, dir := range []string{".", controllerModeDir, monitorDir} {
		b, err := os.ReadFile(dir + "/kustomization.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "kueue") {
			t.Errorf("%s/kustomization.yaml mentions kueue; the component is added by the user's own kustomization", dir)
		}
	}
}
