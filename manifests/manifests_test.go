package manifests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/spec"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	sparkspec "github.com/sparkplug-io/sparkplug/plugin/spec"
)

const (
	pluginFile    = "../plugin.yaml"
	configMapFile = "spark-executor-plugin-configmap.yaml"
	rbacFile      = "rbac.yaml"
	patchFile     = "controller/executor-plugins-patch.yaml"

	// pluginName is what steps write: plugin: {spark: ...}.
	pluginName = "spark"
	// serviceAccount is the account Argo mounts into the sidecar:
	// <plugin name>-executor-plugin (workflow/controller/agent.go).
	serviceAccount = pluginName + "-executor-plugin"
	// argoAgentUID is the uid of the agent's init container, which writes
	// the token file 0440 (common.MinimalCtrSC in Argo v3.3 to v4.x).
	argoAgentUID = 8737
	// labelKeyConfigMapType is Argo's common.LabelKeyConfigMapType.
	labelKeyConfigMapType = "workflows.argoproj.io/configmap-type"
)

// loadPlugin decodes plugin.yaml strictly with Argo's own types, as
// `argo executor-plugin build` does.
func loadPlugin(t *testing.T) *spec.Plugin {
	t.Helper()
	b, err := os.ReadFile(pluginFile)
	if err != nil {
		t.Fatal(err)
	}
	p := &spec.Plugin{}
	if err := yaml.UnmarshalStrict(b, p); err != nil {
		t.Fatalf("decode %s: %v", pluginFile, err)
	}
	return p
}

func TestPluginManifestIsValid(t *testing.T) {
	p := loadPlugin(t)
	if err := p.Validate(); err != nil {
		t.Fatalf("Argo's Validate: %v", err)
	}
	if p.APIVersion != "argoproj.io/v1alpha1" || p.Kind != "ExecutorPlugin" {
		t.Errorf("apiVersion/kind = %s/%s, want argoproj.io/v1alpha1/ExecutorPlugin", p.APIVersion, p.Kind)
	}
	if p.Name != pluginName {
		t.Errorf("metadata.name = %q, want %q", p.Name, pluginName)
	}
	if p.Namespace != "" {
		t.Errorf("metadata.namespace = %q: leave it to kubectl -n", p.Namespace)
	}
	if p.Annotations["workflows.argoproj.io/description"] == "" {
		t.Error("no workflows.argoproj.io/description annotation")
	}
	if !p.Spec.Sidecar.AutomountServiceAccountToken {
		t.Error("automountServiceAccountToken is false: the sidecar would have no Kubernetes token")
	}
	// The token directory is named after the container, and the plugin is
	// named after the ConfigMap: keep both spark-executor-plugin.
	if c := p.Spec.Sidecar.Container; c.Name != serviceAccount {
		t.Errorf("container name = %q, want %q", c.Name, serviceAccount)
	}
}

// TestPluginListensOnContainerPort ties `sparkplug serve --addr` to the port
// the agent calls (http://localhost:<first containerPort>).
func TestPluginListensOnContainerPort(t *testing.T) {
	c := loadPlugin(t).Spec.Sidecar.Container
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Fatalf("args = %q, want serve first", c.Args)
	}
	var addr string
	for _, a := range c.Args[1:] {
		if v, ok := strings.CutPrefix(a, "--addr="); ok {
			addr = v
		}
	}
	if addr == "" {
		t.Fatalf("args = %q: no --addr=HOST:PORT", c.Args)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("--addr=%s: %v", addr, err)
	}
	if want := strconv.Itoa(int(c.Ports[0].ContainerPort)); port != want {
		t.Errorf("serve listens on port %s, the agent calls the first containerPort %s", port, want)
	}
	loopback := host == "localhost" || net.ParseIP(host).IsLoopback()
	for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe, "startup": c.StartupProbe} {
		if loopback && p != nil && (p.HTTPGet != nil || p.TCPSocket != nil) {
			t.Errorf("%s probe: the kubelet connects to the pod IP, but serve listens on %s only", name, host)
		}
	}
}

// TestPluginCanReadToken: the agent's init container writes
// /var/run/argo/token as uid 8737, mode 0440, gid whatever the runtime
// gives (0); only the owner is sure to read it (argo #13015).
func TestPluginCanReadToken(t *testing.T) {
	sc := loadPlugin(t).Spec.Sidecar.Container.SecurityContext
	if sc == nil {
		t.Fatal("no securityContext")
	}
	if sc.RunAsUser == nil || *sc.RunAsUser != argoAgentUID {
		t.Errorf("runAsUser = %s, want %d, the owner of the token file", fmtPtr(sc.RunAsUser), argoAgentUID)
	}
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Error("runAsNonRoot is not true")
	}
	if sc.RunAsGroup == nil || *sc.RunAsGroup == 0 {
		t.Error("runAsGroup is unset or 0: the sidecar would run in the root group")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("readOnlyRootFilesystem is not true")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("allowPrivilegeEscalation is not false")
	}
	if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
		t.Errorf("capabilities = %+v, want drop [ALL] and nothing added", sc.Capabilities)
	}
}

func TestPluginImageIsAReleaseTag(t *testing.T) {
	image := loadPlugin(t).Spec.Sidecar.Container.Image
	if !regexp.MustCompile(`^ghcr\.io/sparkplug-io/sparkplug:v\d+\.\d+\.\d+$`).MatchString(image) {
		t.Errorf("image = %q, want ghcr.io/sparkplug-io/sparkplug:vMAJOR.MINOR.PATCH", image)
	}
}

// TestPluginResourcesStaySmall: the sidecar runs in every agent pod of
// every workflow, Spark or not.
func TestPluginResourcesStaySmall(t *testing.T) {
	c := loadPlugin(t).Spec.Sidecar.Container
	for _, tc := range []struct {
		name       corev1.ResourceName
		maxRequest string
	}{
		{corev1.ResourceCPU, "100m"},
		{corev1.ResourceMemory, "128Mi"},
	} {
		req, lim := c.Resources.Requests[tc.name], c.Resources.Limits[tc.name]
		if req.IsZero() || lim.IsZero() {
			t.Errorf("%s: request %s, limit %s: both are needed", tc.name, req.String(), lim.String())
			continue
		}
		if req.Cmp(resource.MustParse(tc.maxRequest)) > 0 {
			t.Errorf("%s request %s is above %s", tc.name, req.String(), tc.maxRequest)
		}
		if req.Cmp(lim) > 0 {
			t.Errorf("%s request %s is above its limit %s", tc.name, req.String(), lim.String())
		}
	}
	for _, e := range c.Env {
		if e.Name != "GOMEMLIMIT" {
			continue
		}
		soft, err := resource.ParseQuantity(strings.TrimSuffix(e.Value, "B"))
		if err != nil {
			t.Fatalf("GOMEMLIMIT=%s: %v", e.Value, err)
		}
		if lim := c.Resources.Limits[corev1.ResourceMemory]; soft.Cmp(lim) >= 0 {
			t.Errorf("GOMEMLIMIT %s is not below the memory limit %s", e.Value, lim.String())
		}
	}
}

// TestPluginDescriptionExample: the Workflow in the description decodes as
// an Argo Workflow and its spark body passes sparkplug's own Parse.
func TestPluginDescriptionExample(t *testing.T) {
	desc := loadPlugin(t).Annotations["workflows.argoproj.io/description"]
	_, example, ok := strings.Cut(desc, "Example:\n\n")
	if !ok {
		t.Fatal("the description has no \"Example:\" section")
	}
	var lines []string
	for l := range strings.Lines(example) {
		lines = append(lines, strings.TrimPrefix(l, "    "))
	}
	var wf wfv1.Workflow
	if err := yaml.UnmarshalStrict([]byte(strings.Join(lines, "")), &wf); err != nil {
		t.Fatalf("decode the example Workflow: %v", err)
	}
	var bodies int
	for _, tmpl := range wf.Spec.Templates {
		if tmpl.Plugin == nil {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(tmpl.Plugin.Value, &m); err != nil {
			t.Fatal(err)
		}
		if _, err := sparkspec.Parse(m[pluginName]); err != nil {
			t.Errorf("template %s: %v", tmpl.Name, err)
		}
		bodies++
	}
	if bodies == 0 {
		t.Error("the example has no spark step")
	}
}

// TestConfigMapMatchesPlugin reads the checked-in ConfigMap back as Argo's
// controller does (FromConfigMap) and compares it with plugin.yaml; the
// byte-for-byte check is in hack/genplugin.
func TestConfigMapMatchesPlugin(t *testing.T) {
	p := loadPlugin(t)
	var cm corev1.ConfigMap
	decodeFile(t, configMapFile, &cm)
	if want := p.Name + "-executor-plugin"; cm.Name != want {
		t.Errorf("name = %q, want %q", cm.Name, want)
	}
	if got := cm.Labels[labelKeyConfigMapType]; got != "ExecutorPlugin" {
		t.Errorf("label %s = %q, want ExecutorPlugin", labelKeyConfigMapType, got)
	}
	if got := cm.Data["sidecar.automountServiceAccountToken"]; got != strconv.FormatBool(p.Spec.Sidecar.AutomountServiceAccountToken) {
		t.Errorf("sidecar.automountServiceAccountToken = %q", got)
	}
	var c corev1.Container
	if err := yaml.UnmarshalStrict([]byte(cm.Data["sidecar.container"]), &c); err != nil {
		t.Fatalf("sidecar.container: %v", err)
	}
	if diff := cmp.Diff(p.Spec.Sidecar.Container, c); diff != "" {
		t.Errorf("%s is stale (run make plugin); plugin.yaml -> ConfigMap (-+):\n%s", configMapFile, diff)
	}
}

func TestKustomizationListsTheInstall(t *testing.T) {
	var k struct {
		Resources []string `json:"resources"`
	}
	b, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	if want := []string{configMapFile, rbacFile}; !slices.Equal(k.Resources, want) {
		t.Errorf("resources = %q, want %q", k.Resources, want)
	}
}

// TestRBAC pins the Role, rule for rule and verb for verb, to what calls
// the API with the plugin's credentials: the plugin (launch and follow
// drivers, create a stopped driver's tombstone, read its WorkflowTaskSet
// and Workflow, record Events) and spark-submit, which the spark-submit
// launcher runs with them (create its driver, delete it when the rest
// fails; its server-side apply of its ConfigMap and Service is
// spark-submit/'s, TestSparkSubmitRBAC). Nothing
// cluster-scoped, no Secrets, no namespace of its own. A verb added here
// is a widening to review: say in rbac.yaml what calls it.
func TestRBAC(t *testing.T) {
	objs := decodeDocs(t, rbacFile)
	var (
		sa     *corev1.ServiceAccount
		secret *corev1.Secret
		role   *rbacv1.Role
		rb     *rbacv1.RoleBinding
	)
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ServiceAccount:
			sa = o
		case *corev1.Secret:
			secret = o
		case *rbacv1.Role:
			role = o
		case *rbacv1.RoleBinding:
			rb = o
		default:
			t.Errorf("unexpected %T in %s", o, rbacFile)
		}
		if ns := o.(interface{ GetNamespace() string }).GetNamespace(); ns != "" {
			t.Errorf("%T has namespace %q: leave it to kubectl -n", o, ns)
		}
	}
	if sa == nil || secret == nil || role == nil || rb == nil {
		t.Fatalf("want a ServiceAccount, Secret, Role and RoleBinding in %s", rbacFile)
	}
	if sa.Name != serviceAccount {
		t.Errorf("ServiceAccount %q, want %q", sa.Name, serviceAccount)
	}
	// Argo finds the token Secret by this name (util/secrets.TokenName)
	// when the ServiceAccount lists no secrets.
	if want := serviceAccount + ".service-account-token"; secret.Name != want {
		t.Errorf("Secret %q, want %q", secret.Name, want)
	}
	if secret.Type != corev1.SecretTypeServiceAccountToken || secret.Annotations[corev1.ServiceAccountNameKey] != serviceAccount {
		t.Errorf("Secret is %s for %q, want a %s for %q", secret.Type, secret.Annotations[corev1.ServiceAccountNameKey], corev1.SecretTypeServiceAccountToken, serviceAccount)
	}
	wantRules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "create", "delete", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
		// Nothing changes or deletes a ConfigMap, Service or Ingress: each
		// goes with its owner, and a tombstone is a ConfigMap of its own.
		// get reads one a create found exists, to take it only if it is
		// the run's. spark-submit's patch is spark-submit/'s.
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch", "create"}},
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "list", "watch", "create"}},
		{APIGroups: []string{"scheduling.volcano.sh", "scheduling.x-k8s.io"}, Resources: []string{"podgroups"}, Verbs: []string{"get", "create", "patch", "delete"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: []string{"get", "list", "watch", "create"}},
		{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflowtasksets"}, Verbs: []string{"get", "list", "watch"}},
		// Node results go into the TaskSet's status, never its spec.
		{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflowtasksets/status"}, Verbs: []string{"patch"}},
		{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}
	if diff := cmp.Diff(wantRules, role.Rules); diff != "" {
		t.Errorf("Role rules (-want +got):\n%s", diff)
	}
	for _, r := range role.Rules {
		for _, s := range slices.Concat(r.APIGroups, r.Resources, r.Verbs) {
			if s == "*" {
				t.Errorf("wildcard in rule %+v", r)
			}
		}
		for _, res := range r.Resources {
			// Two subresources alone: pods/log (get), the logs archived,
			// and workflowtasksets/status (patch), the node results; no
			// exec, attach, eviction or other subresource.
			allowed := map[string][]string{"pods/log": {"get"}, "workflowtasksets/status": {"patch"}}
			if res == "secrets" || strings.Contains(res, "/") && !slices.Equal(r.Verbs, allowed[res]) {
				t.Errorf("rule grants %s %v", res, r.Verbs)
			}
		}
	}
	wantRef := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}
	if rb.RoleRef != wantRef {
		t.Errorf("roleRef = %+v, want %+v", rb.RoleRef, wantRef)
	}
	// No subject namespace: in a RoleBinding it means the binding's own.
	wantSubjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount}}
	if diff := cmp.Diff(wantSubjects, rb.Subjects); diff != "" {
		t.Errorf("subjects (-want +got):\n%s", diff)
	}
}

// TestControllerPatch merges the patch into the workflow-controller
// Deployment of Argo's install, as kubectl patch does.
func TestControllerPatch(t *testing.T) {
	argo := &appsv1.Deployment{}
	if err := yaml.UnmarshalStrict([]byte(argoControllerDeployment), argo); err != nil {
		t.Fatal(err)
	}
	patch, err := os.ReadFile(patchFile)
	if err != nil {
		t.Fatal(err)
	}
	patchJSON, err := yaml.YAMLToJSON(patch)
	if err != nil {
		t.Fatal(err)
	}
	original, err := json.Marshal(argo)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := strategicpatch.StrategicMergePatch(original, patchJSON, appsv1.Deployment{})
	if err != nil {
		t.Fatalf("strategic merge: %v", err)
	}
	var got appsv1.Deployment
	if err := json.Unmarshal(merged, &got); err != nil {
		t.Fatal(err)
	}
	if got.Name != "workflow-controller" || len(got.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("the patch changed the Deployment's identity or containers: %s", merged)
	}
	want := []corev1.EnvVar{
		{Name: "ARGO_EXECUTOR_PLUGINS", Value: "true"},
		argo.Spec.Template.Spec.Containers[0].Env[0],
	}
	if diff := cmp.Diff(want, got.Spec.Template.Spec.Containers[0].Env); diff != "" {
		t.Errorf("env after the patch (-want +got):\n%s", diff)
	}
}

// argoControllerDeployment is the part of Argo's
// manifests/base/workflow-controller/workflow-controller-deployment.yaml
// that the patch meets.
const argoControllerDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: workflow-controller
spec:
  selector:
    matchLabels:
      app: workflow-controller
  template:
    metadata:
      labels:
        app: workflow-controller
    spec:
      serviceAccountName: argo
      containers:
        - name: workflow-controller
          image: quay.io/argoproj/workflow-controller:latest
          command: [workflow-controller]
          env:
            - name: LEADER_ELECTION_IDENTITY
              valueFrom:
                fieldRef:
                  apiVersion: v1
                  fieldPath: metadata.name
`

func decodeFile(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
}

// decodeDocs decodes every YAML document of path into its typed object.
func decodeDocs(t *testing.T, path string) []runtime.Object {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var objs []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("read %s: %v", path, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("decode %s: %v", path, err)
		}
		objs = append(objs, obj)
	}
}

func fmtPtr[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}
