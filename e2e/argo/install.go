package argo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/cluster"
)

const (
	// Namespace is where the workflow-controller runs and reads its
	// ConfigMap.
	Namespace = "argo"
	// ConfigMapName is the workflow-controller's ConfigMap.
	ConfigMapName = "workflow-controller-configmap"
	// AgentRoleName is the Role that Argo's agent needs, from Argo's
	// quick-start manifests.
	AgentRoleName = "agent"
)

// controllerConfig turns off the controller's metrics and telemetry
// servers (no extra listeners on the machine). Keys as in Argo v3.7's
// config.Config, one data key per field.
var controllerConfig = map[string]string{
	"metricsConfig":   "enabled: false\n",
	"telemetryConfig": "enabled: false\n",
}

// CRD flavours in the Argo module: full CRDs carry the OpenAPI schema of
// every field (the API server validates what is created); minimal ones
// accept any spec and establish in a fraction of the time.
const (
	CRDsFull    = "full"
	CRDsMinimal = "minimal"
)

// InstallCRDs applies Argo's CRDs of the given flavour from the Argo module
// at moduleDir: the named resources (plural names such as "workflows"), or
// all of them when none is named.
func InstallCRDs(ctx context.Context, c *cluster.Cluster, moduleDir, flavour string, plurals ...string) error {
	crdDir := filepath.Join(moduleDir, "manifests", "base", "crds", flavour)
	var files []string
	if len(plurals) == 0 {
		var err error
		if files, err = filepath.Glob(filepath.Join(crdDir, "argoproj.io_*.yaml")); err != nil || len(files) == 0 {
			return fmt.Errorf("no Argo CRDs in %s (go mod download %s): %v", crdDir, Module, err)
		}
	}
	for _, p := range plurals {
		files = append(files, filepath.Join(crdDir, "argoproj.io_"+p+".yaml"))
	}
	sort.Strings(files)
	// The full CRDs hold 8 MB of schema: about 12 s to establish on 2
	// cores. Applying them side by side is no faster.
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read Argo CRD (go mod download %s): %w", Module, err)
		}
		if err := c.Apply(ctx, b); err != nil {
			return fmt.Errorf("apply Argo CRD %s: %w", filepath.Base(f), err)
		}
	}
	return nil
}

// Install applies Argo's full CRDs from the Argo module at moduleDir,
// creates the controller's namespace and its ConfigMap.
func Install(ctx context.Context, c *cluster.Cluster, moduleDir string) error {
	if err := InstallCRDs(ctx, c, moduleDir, CRDsFull); err != nil {
		return err
	}
	if err := EnsureNamespace(ctx, c, Namespace); err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigMapName, Namespace: Namespace},
		Data:       controllerConfig,
	}
	if _, err := c.Client.CoreV1().ConfigMaps(Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %s: %w", ConfigMapName, err)
	}
	return nil
}

// InstallForDryRun prepares a cluster for server-side dry runs of Argo's
// kinds: the full CRDs (the schema of every field) of the plurals, from the
// Argo module of the repository at repoRoot, and the namespace. Only the
// kinds a test needs: each full CRD takes seconds to establish.
func InstallForDryRun(ctx context.Context, c *cluster.Cluster, repoRoot, namespace string, plurals ...string) error {
	dir, err := ModuleDir(ctx, repoRoot)
	if err != nil {
		return err
	}
	if err := InstallCRDs(ctx, c, dir, CRDsFull, plurals...); err != nil {
		return err
	}
	return EnsureNamespace(ctx, c, namespace)
}

// EnsureNamespace creates namespace name if it does not exist.
func EnsureNamespace(ctx context.Context, c *cluster.Cluster, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// InstallAgentRBAC gives the ServiceAccounts that workflows of namespace
// run as the agent Role of Argo's quick-start manifests (list and watch
// WorkflowTaskSets, patch their status), creating the accounts that do not
// exist. Calling it again for more accounts adds them to the binding.
func InstallAgentRBAC(ctx context.Context, c *cluster.Cluster, moduleDir, namespace string, serviceAccounts ...string) error {
	b, err := os.ReadFile(filepath.Join(moduleDir, "manifests", "quick-start", "base", "agent-role.yaml"))
	if err != nil {
		return fmt.Errorf("read Argo's agent role: %w", err)
	}
	var role rbacv1.Role
	if err := yaml.UnmarshalStrict(b, &role); err != nil {
		return fmt.Errorf("decode Argo's agent role: %w", err)
	}
	if role.Name != AgentRoleName {
		return fmt.Errorf("Argo's agent role is named %q, want %q", role.Name, AgentRoleName)
	}
	role.Namespace = namespace
	if _, err := c.Client.RbacV1().Roles(namespace).Create(ctx, &role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create role %s/%s: %w", namespace, role.Name, err)
	}
	for _, sa := range serviceAccounts {
		if err := c.EnsureServiceAccount(ctx, namespace, sa); err != nil {
			return err
		}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: AgentRoleName + "-" + sa, Namespace: namespace},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: AgentRoleName},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: namespace}},
		}
		if _, err := c.Client.RbacV1().RoleBindings(namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("bind %s to %s/%s: %w", AgentRoleName, namespace, sa, err)
		}
	}
	return nil
}

// versionOf runs `<bin> version` and returns the version it reports on the
// line "<name>: <version>".
func versionOf(out []byte, name string) string {
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+": "); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
