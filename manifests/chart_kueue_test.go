//go:build chart

package manifests

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// TestChartKueue: kueue.enabled renders components/kueue's Role in each
// job namespace and its read-only ClusterRole, rule for rule, bound to the
// account that runs the steps (the sidecar's of each namespace, or the
// controller's), and kueue.defaultQueue becomes --kueue-queue of serve or
// of the controller, kueue.allowedPriorityClasses
// --allowed-workload-priority-classes. Without kueue.enabled nothing of Kueue is rendered,
// and a defaultQueue alone is refused.
func TestChartKueue(t *testing.T) {
	k := loadKueueRBAC(t)
	jobNamespaces := []string{"team-a", "team-b"}
	controllerSA := "sparkplug-controller"
	for _, tc := range []struct {
		values   string
		sets     []string
		prefix   string           // the Roles' name prefix
		subjects []rbacv1.Subject // of every binding: ClusterRoleBinding's, and a namespace's RoleBinding has its own
		queue    string
	}{
		{"kueue.values.yaml", nil, serviceAccount, []rbacv1.Subject{
			{Kind: "ServiceAccount", Name: serviceAccount, Namespace: "team-a"},
			{Kind: "ServiceAccount", Name: serviceAccount, Namespace: "team-b"},
		}, "lq-spark"},
		{"kueue-controller.values.yaml", nil, controllerSA, []rbacv1.Subject{
			{Kind: "ServiceAccount", Name: controllerSA, Namespace: systemNamespace},
		}, "lq-spark"},
		{"kueue.values.yaml", []string{"kueue.defaultQueue="}, serviceAccount, []rbacv1.Subject{
			{Kind: "ServiceAccount", Name: serviceAccount, Namespace: "team-a"},
			{Kind: "ServiceAccount", Name: serviceAccount, Namespace: "team-b"},
		}, ""},
	} {
		t.Run(tc.values+strings.Join(tc.sets, ","), func(t *testing.T) {
			objs := objects(t, renderWith(t, tc.values, tc.sets...))
			var roles []string
			for key := range objs {
				if strings.Contains(key, "kueue") {
					roles = append(roles, key)
				}
			}
			slices.Sort(roles)
			name := "sparkplug-kueue-read." + namespaceOf(tc.values)
			want := []string{"ClusterRole /" + name, "ClusterRoleBinding /" + name}
			for _, ns := range jobNamespaces {
				want = append(want, "Role "+ns+"/"+tc.prefix+"-kueue", "RoleBinding "+ns+"/"+tc.prefix+"-kueue")
			}
			slices.Sort(want)
			if diff := cmp.Diff(want, roles); diff != "" {
				t.Errorf("Kueue objects (-want +got):\n%s", diff)
			}
			for i, ns := range jobNamespaces {
				var role rbacv1.Role
				typed(t, objs["Role "+ns+"/"+tc.prefix+"-kueue"], &role)
				if diff := cmp.Diff(k.role.Rules, role.Rules); diff != "" {
					t.Errorf("%s: Role (-components/kueue +chart):\n%s", ns, diff)
				}
				var rb rbacv1.RoleBinding
				typed(t, objs["RoleBinding "+ns+"/"+tc.prefix+"-kueue"], &rb)
				sub := tc.subjects[min(i, len(tc.subjects)-1)]
				if rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != role.Name || !slices.Equal(rb.Subjects, []rbacv1.Subject{sub}) {
					t.Errorf("%s: RoleBinding %+v to %+v, want Role %s to %+v", ns, rb.RoleRef, rb.Subjects, role.Name, sub)
				}
			}
			var cr rbacv1.ClusterRole
			typed(t, objs["ClusterRole /"+name], &cr)
			if diff := cmp.Diff(k.cr.Rules, cr.Rules); diff != "" {
				t.Errorf("ClusterRole (-components/kueue +chart):\n%s", diff)
			}
			var crb rbacv1.ClusterRoleBinding
			typed(t, objs["ClusterRoleBinding /"+name], &crb)
			if crb.RoleRef.Kind != "ClusterRole" || crb.RoleRef.Name != name {
				t.Errorf("ClusterRoleBinding refers to %+v, want ClusterRole %s", crb.RoleRef, name)
			}
			if diff := cmp.Diff(tc.subjects, crb.Subjects); diff != "" {
				t.Errorf("ClusterRoleBinding subjects (-want +got):\n%s", diff)
			}

			// The flag, where the steps run: the controller, or each
			// namespace's sidecar.
			argsOf := map[string][]string{}
			if tc.prefix == controllerSA {
				var d appsv1.Deployment
				typed(t, objs["Deployment "+systemNamespace+"/"+controllerSA], &d)
				argsOf["the controller"] = d.Spec.Template.Spec.Containers[0].Args
				for _, ns := range jobNamespaces {
					if a := ackContainer(t, objs, ns).Args; slices.ContainsFunc(a, func(s string) bool { return strings.Contains(s, "kueue") }) {
						t.Errorf("%s: the acknowledger got %q", ns, a)
					}
				}
			} else {
				for _, ns := range jobNamespaces {
					var cm corev1.ConfigMap
					typed(t, objs["ConfigMap "+ns+"/"+serviceAccount], &cm)
					argsOf["the sidecar of "+ns] = sidecarContainer(t, &cm).Args
				}
			}
			var wantFlags []string
			if tc.queue != "" {
				wantFlags = []string{"--kueue-queue=" + tc.queue}
			}
			wantFlags = append(wantFlags, "--allowed-workload-priority-classes=batch,low")
			for who, args := range argsOf {
				var got []string
				for _, a := range args {
					if strings.HasPrefix(a, "--kueue") || strings.HasPrefix(a, "--allowed-workload-priority-classes") {
						got = append(got, a)
					}
				}
				if !slices.Equal(got, wantFlags) {
					t.Errorf("%s: Kueue flags %q, want %q (args %q)", who, got, wantFlags, args)
				}
			}
		})
	}

	// Off: nothing of Kueue in any mode, whatever else is set.
	for _, values := range valuesSets(t) {
		if strings.HasPrefix(values, "kueue") {
			continue
		}
		if out := string(render(t, chartDir, values)); strings.Contains(strings.ToLower(out), "kueue") {
			t.Errorf("%s renders something of Kueue without kueue.enabled", values)
		}
	}
	// A default queue without the RBAC would queue steps whose account
	// may not create Workloads: refused, in both modes.
	for _, mode := range []string{"sidecar", "controller"} {
		_, err := helm(t, "template", releaseName, chartDir, "--namespace", releaseNamespace,
			"--set", "mode="+mode, "--set", "kueue.defaultQueue=lq-spark")
		if err == nil || !strings.Contains(err.Error(), "kueue.enabled is false") {
			t.Errorf("mode %s, kueue.defaultQueue without kueue.enabled: %v, want refused", mode, err)
		}
	}
}
