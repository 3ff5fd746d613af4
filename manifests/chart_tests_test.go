//go:build chart

package manifests

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/google/go-cmp/cmp"

	"github.com/sparkplug-io/sparkplug/plugin/golden"
	"github.com/sparkplug-io/sparkplug/plugin/run"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// renderTests is helm template of the chart for job namespaces team-a
// and team-b, released in a namespace of its own, with tests.enabled and
// the test hooks, and --set overrides.
func renderTests(t *testing.T, sets ...string) ([]byte, error) {
	t.Helper()
	args := []string{"template", releaseName, chartDir, "--namespace", systemNamespace,
		"--set", "jobNamespaces={team-a,team-b}", "--set", "tests.enabled=true", "--show-only", "templates/tests/spark-step.yaml", "--show-only", "templates/tests-rbac.yaml"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	return helmWithTests(t, args...)
}

// TestChartGoldenTestHooks: helm template of the test hooks and their
// RBAC is test-hooks.golden.yaml (make update rewrites it, as every test
// named Golden).
func TestChartGoldenTestHooks(t *testing.T) {
	out, err := renderTests(t)
	if err != nil {
		t.Fatal(err)
	}
	golden.Compare(t, filepath.Join(chartTestdir, "test-hooks.golden.yaml"), string(out))
}

// TestChartTestHooks: helm test's Pods are test hooks in the release's
// namespace (where helm test --logs reads them), one per job namespace,
// named for it, and the only test hooks (helm test --logs reads every test
// hook as a Pod); each runs sparkplug run on its namespace as a
// ServiceAccount that may only create, get and delete Workflows in the job
// namespaces; the Workflow it runs (its annotation, a file through the
// downward API) is one sparkplug run reads, with a Spark body sparkplug
// takes as valid.
func TestChartTestHooks(t *testing.T) {
	out, err := renderTests(t)
	if err != nil {
		t.Fatal(err)
	}
	const account = "sparkplug-test"
	var objects, pods []string
	for _, o := range decodeObjects(t, out) {
		m, err := meta.Accessor(o)
		if err != nil {
			t.Fatal(err)
		}
		kind := o.GetObjectKind().GroupVersionKind().Kind
		objects = append(objects, kind+"/"+m.GetNamespace()+"/"+m.GetName())
		if hook := m.GetAnnotations()["helm.sh/hook"]; (hook == "test") != (kind == "Pod") {
			t.Errorf("%s/%s in %s: hook %q; want the Pods, and only them, test hooks", kind, m.GetName(), m.GetNamespace(), hook)
		}
		switch o := o.(type) {
		case *corev1.Pod:
			pods = append(pods, o.Name)
			ns := strings.TrimPrefix(o.Name, account+"-")
			c := o.Spec.Containers[0]
			wantArgs := []string{"run", "-f", "/test/workflow.yaml", "-n", ns, "--timeout", "10m"}
			if !slices.Equal(c.Args, wantArgs) || o.Spec.ServiceAccountName != account || o.Spec.RestartPolicy != corev1.RestartPolicyNever {
				t.Errorf("Pod %s: args %q, ServiceAccount %q, restartPolicy %q", o.Name, c.Args, o.Spec.ServiceAccountName, o.Spec.RestartPolicy)
			}
			if !strings.HasPrefix(c.Image, "ghcr.io/sparkplug-io/sparkplug:") {
				t.Errorf("Pod %s runs %q, want the sidecar's image", o.Name, c.Image)
			}
			v := o.Spec.Volumes[0].DownwardAPI
			if v == nil || v.Items[0].Path != "workflow.yaml" || v.Items[0].FieldRef.FieldPath != "metadata.annotations['sparkplug.io/test-workflow']" {
				t.Errorf("Pod %s: volume %+v, want the annotation as workflow.yaml", o.Name, o.Spec.Volumes[0])
			}
			checkTestWorkflow(t, o.Annotations["sparkplug.io/test-workflow"], "spark")
		case *rbacv1.Role:
			rules := []rbacv1.PolicyRule{{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflows"}, Verbs: []string{"create", "get", "delete"}}}
			if diff := cmp.Diff(rules, o.Rules); diff != "" {
				t.Errorf("Role in %s: %+v, want only create, get, delete on workflows", o.Namespace, o.Rules)
			}
		case *rbacv1.RoleBinding:
			if len(o.Subjects) != 1 || o.Subjects[0].Namespace != systemNamespace || o.Subjects[0].Name != account {
				t.Errorf("RoleBinding in %s binds %+v, want the test ServiceAccount", o.Namespace, o.Subjects)
			}
		}
	}
	slices.Sort(objects)
	want := []string{
		"Pod/" + systemNamespace + "/sparkplug-test-team-a", "Pod/" + systemNamespace + "/sparkplug-test-team-b",
		"Role/team-a/" + account, "Role/team-b/" + account,
		"RoleBinding/team-a/" + account, "RoleBinding/team-b/" + account,
		"ServiceAccount/" + systemNamespace + "/" + account,
	}
	if !slices.Equal(objects, want) {
		t.Errorf("objects %q, want %q", objects, want)
	}
}

// checkTestWorkflow: doc is a Workflow sparkplug run takes, with one
// Spark step whose body sparkplug takes as valid and whose driver runs as
// driverAccount.
func checkTestWorkflow(t *testing.T, doc, driverAccount string) {
	t.Helper()
	wf, err := run.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("sparkplug run would refuse the test Workflow: %v\n%s", err, doc)
	}
	if len(wf.Spec.Templates) != 1 || wf.Spec.Templates[0].Plugin == nil || wf.Spec.Entrypoint != wf.Spec.Templates[0].Name {
		t.Fatalf("the test Workflow is not one plugin step:\n%s", doc)
	}
	var plugin struct {
		Spark json.RawMessage `json:"spark"`
	}
	if err := json.Unmarshal(wf.Spec.Templates[0].Plugin.Value, &plugin); err != nil {
		t.Fatal(err)
	}
	body, err := spec.Parse(plugin.Spark)
	if err != nil {
		t.Fatalf("the test step's body is invalid: %v", err)
	}
	if body.Driver.ServiceAccount == nil || *body.Driver.ServiceAccount != driverAccount {
		t.Errorf("the test driver's ServiceAccount is %v, want %q", body.Driver.ServiceAccount, driverAccount)
	}
}

// TestChartTestHooksValues: the test's values reach its objects, a
// workflowSpec that would replace the step fails with a message naming the
// value, and tests.enabled=false renders no hook.
func TestChartTestHooksValues(t *testing.T) {
	out, err := renderTests(t, "tests.timeout=30m", "tests.spark.driver.serviceAccount=etl",
		"tests.workflowSpec.serviceAccountName=runner", "tests.nodeSelector.pool=spark")
	if err != nil {
		t.Fatal(err)
	}
	var pod *corev1.Pod
	for _, o := range decodeObjects(t, out) {
		if o, ok := o.(*corev1.Pod); ok {
			pod = o
			doc := o.Annotations["sparkplug.io/test-workflow"]
			checkTestWorkflow(t, doc, "etl")
			if wf, _ := run.Parse([]byte(doc)); wf == nil || wf.Spec.ServiceAccountName != "runner" {
				t.Errorf("the test Workflow's serviceAccountName is not tests.workflowSpec's:\n%s", doc)
			}
		}
	}
	if pod == nil || !slices.Contains(pod.Spec.Containers[0].Args, "30m") || pod.Spec.NodeSelector["pool"] != "spark" {
		t.Errorf("the test Pod does not take tests.timeout and tests.nodeSelector: %+v", pod)
	}

	_, err = renderTests(t, "tests.workflowSpec.entrypoint=other")
	if err == nil || !strings.Contains(err.Error(), "tests.workflowSpec.entrypoint: the chart sets the test Workflow's entrypoint") {
		t.Errorf("tests.workflowSpec.entrypoint: %v, want a message naming it", err)
	}

	all, err := helmWithTests(t, "template", releaseName, chartDir, "--namespace", releaseNamespace, "--set", "tests.enabled=false")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(all), "helm.sh/hook: test") || strings.Contains(string(all), "sparkplug-test") {
		t.Error("tests.enabled=false still renders the test or its ServiceAccount and Roles")
	}

	// Job namespaces whose Pod names would be the same once cut to 63
	// characters are refused, naming both.
	long := strings.Repeat("n", 55)
	_, err = helmWithTests(t, "template", releaseName, chartDir, "--namespace", systemNamespace,
		"--set", "tests.enabled=true", "--set", "jobNamespaces={"+long+"-a,"+long+"-b}")
	if err == nil || !strings.Contains(err.Error(), "give the same test Pod name") {
		t.Errorf("job namespaces with one test Pod name: %v", err)
	}
}
