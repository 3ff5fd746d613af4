package manifests

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/argoproj/argo-workflows/v3/pkg/plugins/spec"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// Controller mode for kustomize (manifests/modes/controller): the
// acknowledger's plugin ConfigMap (from plugin-ack.yaml), sparkplug
// controller's Deployment, Service, NetworkPolicy and RBAC.
const (
	controllerModeDir   = "modes/controller"
	ackPluginFile       = "../plugin-ack.yaml"
	ackConfigMapFile    = controllerModeDir + "/spark-executor-plugin-configmap.yaml"
	controllerRBACFile  = controllerModeDir + "/rbac.yaml"
	controllerName      = "sparkplug-controller"
	controllerLeaseRole = controllerName + "-leader-election"
	// ackImageRepository is the acknowledger's image (make ack-image).
	ackImageRepository = "ghcr.io/sparkplug-io/sparkplug-ack"
)

// access is one thing a Role allows: a verb on a group's resource
// (subresource included, "pods/log"), by name when resourceName is set.
type access struct{ group, resource, verb, resourceName string }

// accesses expands rules into what they allow, one access per verb,
// resource, group and name: rules that allow the same are equal however
// they are split or ordered.
func accesses(rules ...[]rbacv1.PolicyRule) map[access]bool {
	m := map[access]bool{}
	for _, rs := range rules {
		for _, r := range rs {
			names := r.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						for _, n := range names {
							m[access{g, res, v, n}] = true
						}
					}
				}
			}
		}
	}
	return m
}

// sortedAccesses lists them for a readable diff.
func sortedAccesses(m map[access]bool) []string {
	var out []string
	for a := range m {
		out = append(out, a.group+"/"+a.resource+" "+a.verb+" "+a.resourceName)
	}
	slices.Sort(out)
	return out
}

// controllerRules is what the controller's Role in a job namespace must
// allow: the sidecar's Role (rbac.yaml) and the monitor's
// (monitor/rbac.yaml) together, since it does the work of both, plus
// finding workflows by their WorkflowTaskSets and writing node results,
// which the sidecar's Role happens to hold already.
func controllerRules(t *testing.T) map[access]bool {
	t.Helper()
	var sidecar []rbacv1.PolicyRule
	for _, o := range decodeDocs(t, rbacFile) {
		if r, ok := o.(*rbacv1.Role); ok {
			sidecar = r.Rules
		}
	}
	monitorRole := manifestsRoles(t, monitorDir+"/rbac.yaml")["sparkplug-monitor"]
	if len(sidecar) == 0 || monitorRole == nil {
		t.Fatalf("no Role in %s or %s/rbac.yaml", rbacFile, monitorDir)
	}
	own := []rbacv1.PolicyRule{
		{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflowtasksets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflowtasksets/status"}, Verbs: []string{"patch"}},
	}
	return accesses(sidecar, monitorRole.Rules, own)
}

// manifestsRoles are a file's Roles by name.
func manifestsRoles(t *testing.T, path string) map[string]*rbacv1.Role {
	t.Helper()
	m := map[string]*rbacv1.Role{}
	for _, o := range decodeDocs(t, path) {
		if r, ok := o.(*rbacv1.Role); ok {
			m[r.Name] = r
		}
	}
	return m
}

// TestControllerModeRBAC: the controller's Role allows exactly what a
// sidecar and the monitor need together, no more (a verb added to either
// must be added here, and nothing else may be); its Lease Role is the
// monitor's for its own Lease; each Role is bound to its ServiceAccount
// only; nothing cluster-scoped, no Secrets.
func TestControllerModeRBAC(t *testing.T) {
	var sas, bindings []string
	roles := map[string]*rbacv1.Role{}
	for _, o := range decodeDocs(t, controllerRBACFile) {
		switch o := o.(type) {
		case *corev1.ServiceAccount:
			sas = append(sas, o.Name)
		case *rbacv1.Role:
			roles[o.Name] = o
		case *rbacv1.RoleBinding:
			bindings = append(bindings, o.Name)
			if diff := cmp.Diff([]rbacv1.Subject{{Kind: "ServiceAccount", Name: controllerName}}, o.Subjects); diff != "" {
				t.Errorf("RoleBinding %s subjects (-want +got):\n%s", o.Name, diff)
			}
			if o.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: o.Name}) {
				t.Errorf("RoleBinding %s binds %+v", o.Name, o.RoleRef)
			}
		default:
			t.Errorf("unexpected %T in %s", o, controllerRBACFile)
		}
	}
	if !slices.Equal(sas, []string{controllerName}) {
		t.Errorf("ServiceAccounts %q, want %s alone", sas, controllerName)
	}
	slices.Sort(bindings)
	if want := []string{controllerName, controllerLeaseRole}; !slices.Equal(bindings, want) || len(roles) != 2 {
		t.Fatalf("RoleBindings %q and Roles %q, want %q each", bindings, sortedKeys(roles), want)
	}
	got := accesses(roles[controllerName].Rules)
	if diff := cmp.Diff(sortedAccesses(controllerRules(t)), sortedAccesses(got)); diff != "" {
		t.Errorf("the controller's Role (-sidecar+monitor +%s):\n%s", controllerRBACFile, diff)
	}
	for a := range got {
		if a.resource == "secrets" || a.verb == "*" || a.resource == "*" {
			t.Errorf("the controller's Role allows %+v", a)
		}
	}
	// The monitor's Lease rules, for the Lease the Deployment names.
	lease := manifestsRoles(t, monitorDir+"/rbac.yaml")["sparkplug-monitor-leader-election"].DeepCopy()
	for i := range lease.Rules {
		for j, n := range lease.Rules[i].ResourceNames {
			if n == "sparkplug-monitor" {
				lease.Rules[i].ResourceNames[j] = controllerName
			}
		}
	}
	if diff := cmp.Diff(lease.Rules, roles[controllerLeaseRole].Rules); diff != "" {
		t.Errorf("the Lease's Role (-monitor's for %s +got):\n%s", controllerName, diff)
	}
}

// TestControllerModeSparkSubmit: the spark-submit Component of controller
// mode grants manifests/spark-submit's rule, to the controller.
func TestControllerModeSparkSubmit(t *testing.T) {
	want := manifestsRoles(t, "spark-submit/rbac.yaml")["spark-executor-plugin-spark-submit"]
	got := manifestsRoles(t, controllerModeDir+"/spark-submit/rbac.yaml")[controllerName+"-spark-submit"]
	if want == nil || got == nil {
		t.Fatal("a spark-submit Role is missing")
	}
	if diff := cmp.Diff(want.Rules, got.Rules); diff != "" {
		t.Errorf("rules (-spark-submit/ +%s/spark-submit):\n%s", controllerModeDir, diff)
	}
	for _, o := range decodeDocs(t, controllerModeDir+"/spark-submit/rbac.yaml") {
		if rb, ok := o.(*rbacv1.RoleBinding); ok {
			if !slices.Equal(rb.Subjects, []rbacv1.Subject{{Kind: "ServiceAccount", Name: controllerName}}) || rb.RoleRef.Name != got.Name {
				t.Errorf("RoleBinding %s: %+v to %+v", rb.Name, rb.Subjects, rb.RoleRef)
			}
		}
	}
}

// TestControllerModeKustomization: manifests/modes/controller lists its
// files, the ack ConfigMap among them and not manifests/' RBAC.
func TestControllerModeKustomization(t *testing.T) {
	var k struct {
		Resources []string `json:"resources"`
	}
	b, err := os.ReadFile(controllerModeDir + "/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	want := []string{"spark-executor-plugin-configmap.yaml", "rbac.yaml", "deployment.yaml", "service.yaml", "networkpolicy.yaml"}
	if !slices.Equal(k.Resources, want) {
		t.Errorf("resources %q, want %q", k.Resources, want)
	}
}

// loadAckPlugin decodes plugin-ack.yaml strictly with Argo's types.
func loadAckPlugin(t *testing.T) *spec.Plugin {
	t.Helper()
	b, err := os.ReadFile(ackPluginFile)
	if err != nil {
		t.Fatal(err)
	}
	p := &spec.Plugin{}
	if err := yaml.UnmarshalStrict(b, p); err != nil {
		t.Fatalf("decode %s: %v", ackPluginFile, err)
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("%s: %v", ackPluginFile, err)
	}
	return p
}

// TestAckPlugin: controller mode's plugin is the same plugin as the
// sidecar's to Argo and to steps (name spark, the ConfigMap's name, the
// container's name, so the token's directory, and port), runs the
// acknowledger of the same release without a ServiceAccount token, as the
// uid that can read the agent's token file; and its ConfigMap is the one
// generated from it.
func TestAckPlugin(t *testing.T) {
	ack, sidecar := loadAckPlugin(t), loadPlugin(t)
	if ack.Name != sidecar.Name || ack.Kind != sidecar.Kind {
		t.Errorf("plugin %s %s, want the sidecar's %s %s", ack.Kind, ack.Name, sidecar.Kind, sidecar.Name)
	}
	if diff := cmp.Diff(sidecar.Annotations, ack.Annotations); diff != "" {
		t.Errorf("annotations (-plugin.yaml +%s):\n%s", ackPluginFile, diff)
	}
	if ack.Spec.Sidecar.AutomountServiceAccountToken {
		t.Error("the acknowledger gets a ServiceAccount token: it calls no Kubernetes API")
	}
	c, sc := ack.Spec.Sidecar.Container, sidecar.Spec.Sidecar.Container
	if c.Name != sc.Name {
		t.Errorf("container %q, want the sidecar's %q: the agent's token is under /var/run/argo/<container name>", c.Name, sc.Name)
	}
	if !cmp.Equal(c.Ports, sc.Ports) || !slices.Contains(c.Args, "--addr=127.0.0.1:"+strconv.Itoa(int(c.Ports[0].ContainerPort))) {
		t.Errorf("ports %v, args %q: want the sidecar's port %v, on loopback", c.Ports, c.Args, sc.Ports)
	}
	_, tag, _ := strings.Cut(sc.Image, ":")
	if want := ackImageRepository + ":" + tag; c.Image != want {
		t.Errorf("image %q, want %q (the sidecar's release)", c.Image, want)
	}
	if s := c.SecurityContext; s == nil || s.RunAsUser == nil || *s.RunAsUser != argoAgentUID || s.ReadOnlyRootFilesystem == nil || !*s.ReadOnlyRootFilesystem {
		t.Errorf("securityContext %+v, want uid %d, read-only root", s, argoAgentUID)
	}
	if c.Resources.Limits.Memory().Cmp(*sc.Resources.Limits.Memory()) >= 0 {
		t.Errorf("memory limit %s, want less than the sidecar's %s", c.Resources.Limits.Memory(), sc.Resources.Limits.Memory())
	}

	var cm corev1.ConfigMap
	decodeFile(t, ackConfigMapFile, &cm)
	if cm.Name != serviceAccount || cm.Labels[labelKeyConfigMapType] != "ExecutorPlugin" {
		t.Errorf("ConfigMap %s, labels %v", cm.Name, cm.Labels)
	}
	if got := cm.Data["sidecar.automountServiceAccountToken"]; got != "false" {
		t.Errorf("sidecar.automountServiceAccountToken = %q, want false", got)
	}
	var got corev1.Container
	if err := yaml.UnmarshalStrict([]byte(cm.Data["sidecar.container"]), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, got); diff != "" {
		t.Errorf("%s is stale (run make plugin) (-%s +ConfigMap):\n%s", ackConfigMapFile, ackPluginFile, diff)
	}
}

// TestControllerDeployment: the controller runs the release's image (the
// sidecar's) with `sparkplug controller`, serves its own namespace, elects
// its leader with the Lease its Role names, and its Service and
// NetworkPolicy select its pods and open the metrics port only.
func TestControllerDeployment(t *testing.T) {
	var d appsv1.Deployment
	decodeFile(t, controllerModeDir+"/deployment.yaml", &d)
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	if want := loadPlugin(t).Spec.Sidecar.Container.Image; c.Image != want {
		t.Errorf("image %q, want plugin.yaml's %q", c.Image, want)
	}
	want := []string{"controller", "--namespaces=$(POD_NAMESPACE)", "--metrics-addr=:9090", "--health-addr=:8081",
		"--leader-elect=true", "--leader-election-id=" + controllerName}
	if diff := cmp.Diff(want, c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
		t.Errorf("replicas %s, want 2 (a standby)", fmtPtr(d.Spec.Replicas))
	}
	if pod.ServiceAccountName != controllerName {
		t.Errorf("serviceAccountName %q", pod.ServiceAccountName)
	}
	if len(c.Env) == 0 || c.Env[0].Name != "POD_NAMESPACE" || c.Env[0].ValueFrom == nil ||
		c.Env[0].ValueFrom.FieldRef == nil || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.namespace" {
		t.Errorf("env %+v, want POD_NAMESPACE from metadata.namespace first", c.Env)
	}
	if s := c.SecurityContext; s == nil || s.ReadOnlyRootFilesystem == nil || !*s.ReadOnlyRootFilesystem ||
		s.AllowPrivilegeEscalation == nil || *s.AllowPrivilegeEscalation {
		t.Errorf("securityContext %+v", s)
	}
	lease := manifestsRoles(t, controllerRBACFile)[controllerLeaseRole]
	if lease == nil || !slices.ContainsFunc(lease.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Equal(r.ResourceNames, []string{controllerName})
	}) {
		t.Errorf("the Lease Role does not name the Lease %s", controllerName)
	}
	// The same Service and NetworkPolicy as the monitor's, for the
	// controller's pods.
	for _, f := range []string{"service.yaml", "networkpolicy.yaml"} {
		mon, ctl := decodeDocs(t, monitorDir+"/"+f), decodeDocs(t, controllerModeDir+"/"+f)
		if len(mon) != 1 || len(ctl) != 1 {
			t.Fatalf("%s: %d and %d objects", f, len(mon), len(ctl))
		}
		mb, _ := yaml.Marshal(mon[0])
		cb, _ := yaml.Marshal(ctl[0])
		if diff := cmp.Diff(strings.ReplaceAll(string(mb), "monitor", "controller"), string(cb)); diff != "" {
			t.Errorf("%s (-monitor's, renamed +controller's):\n%s", f, diff)
		}
	}
	for k, v := range d.Spec.Selector.MatchLabels {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("the selector %v does not select the pods %v", d.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
		}
	}
}

// sidecarContainer decodes a plugin ConfigMap's container as Argo's
// FromConfigMap does, strictly.
func sidecarContainer(t *testing.T, cm *corev1.ConfigMap) corev1.Container {
	t.Helper()
	var c corev1.Container
	if err := yaml.UnmarshalStrict([]byte(cm.Data["sidecar.container"]), &c); err != nil {
		t.Fatalf("%s/%s sidecar.container: %v", cm.Namespace, cm.Name, err)
	}
	return c
}
