//go:build e2e

package realnode

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/node"
)

// The release's chart, installed with helm into a namespace of its own,
// runs the released image (pinned by digest, pulled by the kubelet from
// the registry) as the sidecar of a Spark step there.
func TestHelmInstalledReleaseRunsASparkStep(t *testing.T) {
	t.Parallel()
	const ns = "realnode-helm"
	ctx := t.Context()
	helmInstall(t, ns, append([]string{"--set", "driver.serviceAccount.create=true", "--set", "agentRBAC.create=true"},
		onTheNode(t, `"--min-executors=1"`)...)...)
	start := time.Now()
	w := submit(t, env.Given(t).Namespace(ns).
		Workflow(workflow("helm", "main", "    - name: main\n"+sparkStep(1, `"--min-executors=1"`)))).
		WaitForWorkflow(framework.ToBeSucceeded, wfTimeout)
	t.Logf("workflow Succeeded in %.1fs", time.Since(start).Seconds())
	expectSucceeded(w)

	// helm test: the chart's test Pod (the released image, sparkplug run)
	// runs its Spark step to its end, and deletes the Workflow.
	out, err := helmTest(t, ns)
	if err != nil {
		t.Fatalf("helm test: %v", err)
	}
	if !testSucceeded.MatchString(out) ||
		!regexp.MustCompile(`(?m)^  sparkplug-test-\w+  Succeeded  COMPLETED.*  application-id=spark-[0-9a-f]{32}  driver-pod=\S+-driver$`).MatchString(out) {
		t.Errorf("helm test --logs has not the Workflow's and its Spark node's success")
	}
	if left := testWorkflows(t, ns); len(left) != 0 {
		t.Errorf("helm test left Workflows %q; sparkplug run deletes one that Succeeded", left)
	}

	// A test step that fails fails helm test, with the node's message in
	// the test Pod's log, and keeps its Workflow.
	if out, err := env.Helm(ctx, append([]string{"upgrade", "sparkplug", rel.Chart, "--namespace", ns, "--reuse-values"},
		onTheNode(t, `"--exit=3"`)...)...); err != nil {
		t.Fatalf("helm upgrade: %v\n%s", err, out)
	}
	out, err = helmTest(t, ns)
	if err == nil {
		t.Fatal("helm test passed with a step that fails")
	}
	if !regexp.MustCompile(`(?m)^  sparkplug-test-\w+  Failed  FAILED: driver exited 3`).MatchString(out) || !strings.Contains(out, "kubectl -n "+ns+" delete workflow sparkplug-test-") {
		t.Errorf("helm test --logs has not the node's failure and how to delete the kept Workflow")
	}
	if left := testWorkflows(t, ns); len(left) != 1 {
		t.Errorf("after a failed helm test, Workflows %q; want the failed one kept", left)
	}
}

// onTheNode are helm's --set-json of the chart's test: its Spark step
// (the stand-in with args, YAML flow items) with its agent, driver and
// executor, and the test Pod, on the real node.
func onTheNode(t *testing.T, args string) []string {
	t.Helper()
	var step struct {
		Plugin struct {
			Spark map[string]any `json:"spark"`
		} `json:"plugin"`
	}
	lines := strings.Split(sparkStep(1, args), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "      ") // the template's indent
	}
	if err := yaml.Unmarshal([]byte(strings.Join(lines, "\n")), &step); err != nil {
		t.Fatal(err)
	}
	if len(step.Plugin.Spark) == 0 {
		t.Fatalf("no spark body in the step:\n%s", strings.Join(lines, "\n"))
	}
	body, err := json.Marshal(step.Plugin.Spark)
	if err != nil {
		t.Fatal(err)
	}
	sel, tol := placement()
	return []string{
		"--set-json", "tests.spark=" + string(body),
		"--set-json", fmt.Sprintf(`tests.workflowSpec={"nodeSelector": %s, "tolerations": %s}`, sel, tol),
		"--set-json", "tests.nodeSelector=" + sel,
		"--set-json", "tests.tolerations=" + tol,
		"--set", "tests.timeout=3m",
	}
}

// testWorkflows are the names of the Workflows helm test made in ns.
func testWorkflows(t *testing.T, ns string) []string {
	t.Helper()
	list, err := env.Workflows.ArgoprojV1alpha1().Workflows(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range list.Items {
		if strings.HasPrefix(w.Name, "sparkplug-test-") {
			names = append(names, w.Name)
		}
	}
	return names
}

// helmInstall installs the release's chart as release sparkplug into ns,
// a new namespace, with helm test's account (tests.enabled, off by
// default) and more helm args, and makes what Argo's quick-start
// makes there and the chart does not: the default ServiceAccount's token
// Secret, which Argo mounts into the agent pod by name.
func helmInstall(t *testing.T, ns string, args ...string) {
	t.Helper()
	ctx := t.Context()
	start := time.Now()
	install := append([]string{"install", "sparkplug", rel.Chart, "--namespace", ns, "--create-namespace", "--set", "tests.enabled=true"}, args...)
	if out, err := env.Helm(ctx, install...); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	t.Logf("helm install in %.1fs", time.Since(start).Seconds())
	// The namespace is new: its default ServiceAccount may not be made yet.
	if err := env.Cluster.EnsureServiceAccount(ctx, ns, "default"); err != nil {
		t.Fatal(err)
	}
	token := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "default.service-account-token", Namespace: ns,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: "default"}},
		Type: corev1.SecretTypeServiceAccountToken,
	}
	if _, err := env.Kube.CoreV1().Secrets(ns).Create(ctx, token, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// placement is the real node's node selector and toleration, as JSON for
// helm's --set-json.
func placement() (nodeSelector, tolerations string) {
	return fmt.Sprintf(`{%q: "true"}`, node.LabelKey),
		fmt.Sprintf(`[{"key": %q, "operator": "Equal", "value": "true", "effect": "NoSchedule"}]`, node.TaintKey)
}

// testSucceeded is the line of helm test --logs that says the test's
// Workflow Succeeded (sparkplug run's report).
var testSucceeded = regexp.MustCompile(`(?m)^workflow sparkplug-test-\w+ Succeeded in [0-9hms.]+$`)

// helmTest runs helm test --logs of release sparkplug in ns.
func helmTest(t *testing.T, ns string) (string, error) {
	t.Helper()
	start := time.Now()
	out, err := env.Helm(t.Context(), "test", "sparkplug", "--namespace", ns, "--logs", "--timeout", "4m")
	t.Logf("helm test in %.1fs: %v\n%s", time.Since(start).Seconds(), err, out)
	return out, err
}

// expectSucceeded checks that w's Spark step, its root node, Succeeded
// with an application id.
func expectSucceeded(w *framework.When) {
	w.Then().ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
		if n.Phase != wfv1.NodeSucceeded || !appIDPattern.MatchString(param(*n, "application-id")) {
			t.Errorf("node %s %q, outputs %+v", n.Phase, n.Message, n.Outputs)
		}
	})
}
