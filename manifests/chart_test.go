//go:build chart

package manifests

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/golden"
)

// The chart tests run the real helm, built by hack/helm.sh from the
// module pinned in hack/helm (make test-chart). Without it they fail,
// never skip.

const (
	chartDir     = "chart/sparkplug"
	chartTestdir = "chart/testdata"
	// envHelm names the helm binary; make test-chart sets it.
	envHelm = "SPARKPLUG_HELM"
	// releaseName and releaseNamespace are those of every render here.
	releaseName      = "sparkplug"
	releaseNamespace = "team-a"
	// systemNamespace is the release's namespace of the values sets that
	// enable an account bound in every job namespace (the controller's,
	// the monitor's): the chart refuses the release's namespace among
	// several job namespaces then.
	systemNamespace = "sparkplug-system"
)

// namespaceOf is the release's namespace a values set is rendered in.
func namespaceOf(values string) string {
	switch values {
	case "controller.values.yaml", "kueue-controller.values.yaml", "monitor.values.yaml":
		return systemNamespace
	}
	return releaseNamespace
}

// helmBin is the pinned helm: $SPARKPLUG_HELM, else hack/helm.sh's bin dir.
func helmBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(envHelm)
	if bin == "" {
		out, err := exec.Command("bash", "../hack/helm.sh", "bindir").Output()
		if err != nil {
			t.Fatalf("hack/helm.sh bindir: %v", err)
		}
		bin = filepath.Join(strings.TrimSpace(string(out)), "helm")
	}
	if fi, err := os.Stat(bin); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("no helm at %s (make test-chart builds it: bash hack/helm.sh build)", bin)
	}
	return bin
}

// helm runs the pinned helm with a config of its own (no repositories, no
// plugins, nothing of the user's) and returns stdout, or the error with
// stderr. helm template renders what helm install applies: without the
// test hooks (--skip-tests), which only helm test makes; helmWithTests
// renders them too.
func helm(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	if len(args) > 0 && args[0] == "template" {
		args = append(slices.Clone(args), "--skip-tests")
	}
	return helmWithTests(t, args...)
}

// helmWithTests is helm, with helm template rendering the test hooks.
func helmWithTests(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), helmBin(t), args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"KUBECONFIG="+filepath.Join(home, "no-kubeconfig"),
	)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, errors.New(strings.TrimSpace(err.Error() + ": " + stderr.String()))
	}
	return out, nil
}

// render is helm template of the chart with a values file of testdata
// ("" for none), as release sparkplug in namespace team-a (or
// namespaceOf the values), without what
// only helm test uses (tests.enabled=false: its Pods, ServiceAccount and
// Roles, which manifests/ has no counterpart of; TestChartTestHooks
// renders them).
func render(t *testing.T, chart, values string) []byte {
	t.Helper()
	args := []string{"template", releaseName, chart, "--namespace", namespaceOf(values), "--set", "tests.enabled=false"}
	if values != "" {
		args = append(args, "--values", filepath.Join(chartTestdir, values))
	}
	out, err := helm(t, args...)
	if err != nil {
		t.Fatalf("helm template %s: %v", values, err)
	}
	return out
}

// valuesSets are the values files under chart/testdata, each with a golden
// helm template output next to it.
func valuesSets(t *testing.T) []string {
	t.Helper()
	sets, err := filepath.Glob(filepath.Join(chartTestdir, "*.values.yaml"))
	if err != nil || len(sets) < 3 {
		t.Fatalf("values sets in %s: %q, %v", chartTestdir, sets, err)
	}
	for i, s := range sets {
		sets[i] = filepath.Base(s)
	}
	return sets
}

func TestChartLint(t *testing.T) {
	for _, values := range valuesSets(t) {
		out, err := helm(t, "lint", "--strict", chartDir, "--namespace", releaseNamespace,
			"--values", filepath.Join(chartTestdir, values))
		if err != nil {
			t.Errorf("helm lint --strict with %s: %v\n%s", values, err, out)
		}
	}
}

// TestChartGolden compares helm template of each values set with its
// golden file; make update rewrites them.
func TestChartGolden(t *testing.T) {
	for _, values := range valuesSets(t) {
		t.Run(values, func(t *testing.T) {
			golden.Compare(t, filepath.Join(chartTestdir, strings.TrimSuffix(values, ".values.yaml")+".golden.yaml"),
				string(render(t, chartDir, values)))
		})
	}
}

// TestChartPluginConfigMapIsGenerated: with the default values the chart's
// plugin ConfigMap is the one make plugin generates from plugin.yaml, read
// as Argo reads it: name, Argo's label, annotations, the keys, and the
// container decoded, compared field by field.
func TestChartPluginConfigMapIsGenerated(t *testing.T) {
	var want corev1.ConfigMap
	decodeFile(t, configMapFile, &want)
	objs := byKind(decodeObjects(t, render(t, chartDir, "default.values.yaml")))
	cms := objs["ConfigMap"]
	if len(cms) != 1 {
		t.Fatalf("%d ConfigMaps, want 1", len(cms))
	}
	got := cms[0].(*corev1.ConfigMap)
	if got.Name != want.Name || got.Namespace != releaseNamespace {
		t.Errorf("ConfigMap %s/%s, want %s/%s", got.Namespace, got.Name, releaseNamespace, want.Name)
	}
	for k, v := range want.Labels {
		if got.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, got.Labels[k], v)
		}
	}
	if diff := cmp.Diff(want.Annotations, got.Annotations); diff != "" {
		t.Errorf("annotations (-generated +chart):\n%s", diff)
	}
	if !slices.Equal(sortedKeys(want.Data), sortedKeys(got.Data)) {
		t.Errorf("data keys %q, want %q", sortedKeys(got.Data), sortedKeys(want.Data))
	}
	if k := "sidecar.automountServiceAccountToken"; got.Data[k] != want.Data[k] {
		t.Errorf("%s = %q, want %q", k, got.Data[k], want.Data[k])
	}
	wantC, gotC := sidecarContainer(t, &want), sidecarContainer(t, got)
	if diff := cmp.Diff(wantC, gotC); diff != "" {
		t.Errorf("sidecar.container (-generated +chart):\n%s", diff)
	}
}

// TestChartRBACIsRBACYAML: the chart's ServiceAccount, token Secret, Role
// and RoleBinding are rbac.yaml's (which TestRBAC pins), placed in the
// job namespace, so least privilege is written down once.
func TestChartRBACIsRBACYAML(t *testing.T) {
	want := byKind(decodeDocs(t, rbacFile))
	got := byKind(decodeObjects(t, render(t, chartDir, "default.values.yaml")))
	for _, kind := range []string{"ServiceAccount", "Secret", "Role", "RoleBinding"} {
		if len(got[kind]) != 1 || len(want[kind]) != 1 {
			t.Fatalf("%s: %d in the chart, %d in %s, want 1 each", kind, len(got[kind]), len(want[kind]), rbacFile)
		}
	}
	sa, wantSA := got["ServiceAccount"][0].(*corev1.ServiceAccount), want["ServiceAccount"][0].(*corev1.ServiceAccount)
	if sa.Name != wantSA.Name || sa.Namespace != releaseNamespace {
		t.Errorf("ServiceAccount %s/%s, want %s/%s", sa.Namespace, sa.Name, releaseNamespace, wantSA.Name)
	}
	secret, wantSecret := got["Secret"][0].(*corev1.Secret), want["Secret"][0].(*corev1.Secret)
	if secret.Name != wantSecret.Name || secret.Type != wantSecret.Type || !cmp.Equal(secret.Annotations, wantSecret.Annotations) {
		t.Errorf("Secret %s %s %v, want %s %s %v", secret.Name, secret.Type, secret.Annotations, wantSecret.Name, wantSecret.Type, wantSecret.Annotations)
	}
	role, wantRole := got["Role"][0].(*rbacv1.Role), want["Role"][0].(*rbacv1.Role)
	if role.Name != wantRole.Name {
		t.Errorf("Role %s, want %s", role.Name, wantRole.Name)
	}
	if diff := cmp.Diff(wantRole.Rules, role.Rules); diff != "" {
		t.Errorf("Role rules (-%s +chart):\n%s", rbacFile, diff)
	}
	rb, wantRB := got["RoleBinding"][0].(*rbacv1.RoleBinding), want["RoleBinding"][0].(*rbacv1.RoleBinding)
	if rb.Name != wantRB.Name || rb.RoleRef != wantRB.RoleRef {
		t.Errorf("RoleBinding %s to %+v, want %s to %+v", rb.Name, rb.RoleRef, wantRB.Name, wantRB.RoleRef)
	}
	wantSubjects := slices.Clone(wantRB.Subjects)
	for i := range wantSubjects {
		wantSubjects[i].Namespace = releaseNamespace
	}
	if diff := cmp.Diff(wantSubjects, rb.Subjects); diff != "" {
		t.Errorf("RoleBinding subjects (-want +chart):\n%s", diff)
	}
}

// TestChartJobNamespaces: each job namespace gets the plugin and its RBAC,
// the driver ServiceAccount and the agent Role when asked for, and no
// other namespace gets anything; nothing is cluster-scoped.
func TestChartJobNamespaces(t *testing.T) {
	objs := decodeObjects(t, render(t, chartDir, "two-namespaces.values.yaml"))
	perNS := map[string][]string{}
	for _, o := range objs {
		m := o.(interface {
			GetNamespace() string
			GetName() string
		})
		kind := kindOf(o)
		perNS[m.GetNamespace()] = append(perNS[m.GetNamespace()], kind+"/"+m.GetName())
	}
	want := []string{
		"ConfigMap/spark-executor-plugin",
		"Role/sparkplug-argo-agent",
		"Role/sparkplug-spark-driver",
		"Role/spark-executor-plugin",
		"RoleBinding/sparkplug-argo-agent",
		"RoleBinding/sparkplug-spark-driver",
		"RoleBinding/spark-executor-plugin",
		"Role/spark-executor-plugin-log-archive",
		"RoleBinding/spark-executor-plugin-log-archive",
		"Secret/spark-executor-plugin.service-account-token",
		"ServiceAccount/spark",
		"ServiceAccount/spark-executor-plugin",
	}
	slices.Sort(want)
	if got := sortedKeys(perNS); !slices.Equal(got, []string{"team-a", "team-b"}) {
		t.Errorf("namespaces %q, want team-a and team-b only", got)
	}
	for ns, got := range perNS {
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", ns, diff)
		}
	}
	for _, o := range objs {
		switch o := o.(type) {
		case *rbacv1.Role:
			if o.Name == "spark-executor-plugin-log-archive" {
				// get on the named Secrets (each once), nothing else.
				wantRules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"s3-credentials"}, Verbs: []string{"get"}}}
				if diff := cmp.Diff(wantRules, o.Rules); diff != "" {
					t.Errorf("%s log archive Role (-want +got):\n%s", o.Namespace, diff)
				}
				continue
			}
			if o.Name == "sparkplug-spark-driver" {
				// The verbs Spark's driver calls (driver-rbac.yaml says
				// which code calls each): no get, update or patch on
				// ConfigMaps, nothing on Services but their collection
				// delete at stop.
				wantRules := []rbacv1.PolicyRule{
					{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "create", "patch", "delete", "deletecollection"}},
					{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"create", "deletecollection"}},
					{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"deletecollection"}},
					{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"list", "create", "deletecollection"}},
				}
				if diff := cmp.Diff(wantRules, o.Rules); diff != "" {
					t.Errorf("%s driver Role (-want +got):\n%s", o.Namespace, diff)
				}
				continue
			}
			if o.Name != "sparkplug-argo-agent" {
				continue
			}
			// Argo's agent Role (docs/workflow-rbac.md), nothing more.
			wantRules := []rbacv1.PolicyRule{
				{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflowtasksets"}, Verbs: []string{"list", "watch"}},
				{APIGroups: []string{"argoproj.io"}, Resources: []string{"workflowtasksets/status"}, Verbs: []string{"patch"}},
			}
			if diff := cmp.Diff(wantRules, o.Rules); diff != "" {
				t.Errorf("%s agent Role (-want +got):\n%s", o.Namespace, diff)
			}
		case *rbacv1.RoleBinding:
			var want []rbacv1.Subject
			switch o.Name {
			case "sparkplug-argo-agent":
				for _, sa := range []string{"default", "etl"} {
					want = append(want, rbacv1.Subject{Kind: "ServiceAccount", Name: sa, Namespace: o.Namespace})
				}
			case "sparkplug-spark-driver":
				want = []rbacv1.Subject{{Kind: "ServiceAccount", Name: "spark", Namespace: o.Namespace}}
			case "spark-executor-plugin-log-archive":
				want = []rbacv1.Subject{{Kind: "ServiceAccount", Name: "spark-executor-plugin", Namespace: o.Namespace}}
			default:
				continue
			}
			if diff := cmp.Diff(want, o.Subjects); diff != "" {
				t.Errorf("%s RoleBinding %s subjects (-want +got):\n%s", o.Namespace, o.Name, diff)
			}
			if o.RoleRef.Name != o.Name || o.RoleRef.Kind != "Role" {
				t.Errorf("%s RoleBinding %s binds %+v", o.Namespace, o.Name, o.RoleRef)
			}
		}
	}
}

// TestChartImageAndFlags: the image pinned by digest and the serve flags
// of the values reach the sidecar container.
func TestChartImageAndFlags(t *testing.T) {
	objs := byKind(decodeObjects(t, render(t, chartDir, "digest-flags.values.yaml")))
	c := sidecarContainer(t, objs["ConfigMap"][0].(*corev1.ConfigMap))
	if want := "registry.example.com/platform/sparkplug:v0.1.0@sha256:4f1d3c6a2b8e9d0f7a5c3b1e2d4f6a8c0b9e7d5f3a1c2b4d6e8f0a9c7b5d3e1f"; c.Image != want {
		t.Errorf("image %q, want %q", c.Image, want)
	}
	if c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("imagePullPolicy %q", c.ImagePullPolicy)
	}
	wantArgs := []string{
		"serve", "--addr=127.0.0.1:4355",
		"--workers=8", "--resync=5s", "--write-gap=3s", "--progress-interval=1m",
		"--kube-api-qps=50", "--kube-api-burst=100",
		"--ingress-url-format={{$appName}}.spark.example.com", "--ingress-class-name=nginx",
		"--log-format=text", "--log-level=debug", "--metrics-addr=:9090",
		"--launcher=spark-submit", "--spark-home=/opt/spark",
		"--max-spark-submits=2", "--submit-timeout=3m", "--archive-logs=true", "--archive-logs-max-bytes=4194304", "--archive-logs-timeout=90s",
		"--allowed-service-accounts=spark,spark-etl", "--pod-security-level=baseline", "--allowed-ingress-host-suffixes=spark.example.com",
		"--allowed-ingress-annotation-prefixes=nginx.ingress.kubernetes.io/proxy-", "--allow-ingress-snippets=false", "--allowed-service-types=ClusterIP,NodePort",
		"--not-found-grace=45s",
	}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	want := []corev1.EnvVar{
		{Name: "GOMEMLIMIT", Value: "900MiB"},
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
	}
	if !cmp.Equal(want, c.Env) {
		t.Errorf("env %+v, want %+v", c.Env, want)
	}
	if got := c.Resources.Limits.Memory().String(); got != "1Gi" {
		t.Errorf("memory limit %s, want 1Gi", got)
	}
}

// TestChartNumbersAreFlagValues: numbers from a values file (float64 to
// Helm) reach serve as its flags parse them, never as 1e+06.
func TestChartNumbersAreFlagValues(t *testing.T) {
	values := filepath.Join(t.TempDir(), "numbers.yaml")
	if err := os.WriteFile(values, []byte("serve: {kubeAPIQPS: 2.5, kubeAPIBurst: 1000000, maxSparkSubmits: 12}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := helm(t, "template", releaseName, chartDir, "--values", values)
	if err != nil {
		t.Fatal(err)
	}
	c := sidecarContainer(t, byKind(decodeObjects(t, out))["ConfigMap"][0].(*corev1.ConfigMap))
	want := []string{"serve", "--addr=127.0.0.1:4355", "--kube-api-qps=2.5", "--kube-api-burst=1000000", "--max-spark-submits=12"}
	if diff := cmp.Diff(want, c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
}

// TestChartSchemaRejectsTypos: values.schema.json fails helm template (and
// install, upgrade) on a misspelled key or a bad value, naming it.
func TestChartSchemaRejectsTypos(t *testing.T) {
	for _, tc := range []struct{ set, says string }{
		{"jobNamespace={team-a}", "jobNamespace"},
		{"jobNamespaces={Team_A}", "/jobNamespaces/0"},
		{"serve.logFromat=text", "logFromat"},
		{"serve.logFormat=yaml", "/serve/logFormat"},
		{"serve.resync=10x", "/serve/resync"},
		{"serve.writeGap=1 second", "/serve/writeGap"},
		{"serve.workers=0", "/serve/workers"},
		{"serve.requeuePending=10s", "requeuePending"}, // a flag serve no longer has
		{"serve.launcher=spark", "/serve/launcher"},
		{"image.digest=abc", "/image/digest"},
		{"image.pullPolicy=always", "/image/pullPolicy"},
		{"image.tagg=v1", "tagg"},
		{"resources.limits.memroy=1Gi", "memroy"},
		{"driver.serviceAccount.crate=true", "crate"},
		{"agentRBAC.enabled=true", "enabled"},
		{"extraArgs={serve}", "/extraArgs/0"},
		{"serve.historyServerURL=spark-history:18080", "/serve/historyServerURL"},
		{"monitor.enabeld=true", "enabeld"},
		{"monitor.replica=2", "replica"},
		{"monitor.image.tagg=v1", "tagg"},
		{"monitor.image.digest=abc", "/monitor/image/digest"},
		{"monitor.logLevel=verbose", "/monitor/logLevel"},
		{"monitor.ttlInterval=10x", "/monitor/ttlInterval"},
		{"monitor.metricsLabels={a,b}", ""},
		{"monitor.metricsLabel={a}", "metricsLabel"},
		{"monitor.jobStartLatencyBuckets={0}", "/monitor/jobStartLatencyBuckets/0"},
		{"monitor.resources.limits.memroy=1Gi", "memroy"},
		{"monitor.extraArgs={monitor}", "/monitor/extraArgs/0"},
		{"monitor.serviceMonitor.enable=true", "enable"},
		{"monitor.serviceMonitor.interval=30", "/monitor/serviceMonitor/interval"},
		{"monitor.prometheusRule.failureRatio=2", "/monitor/prometheusRule/failureRatio"},
		{"monitor.prometheusRule.threshold=1", "threshold"},
		{"monitor.prometheusRule.stuckMinutes=0", "/monitor/prometheusRule/stuckMinutes"},
		{"monitor.grafanaDashboard.label.a=b", "label"},
		{"monitor.grafanaDashboard.namespace=Monitoring", "/monitor/grafanaDashboard/namespace"},
		{"argo.namespce=workflows", "namespce"},
		{"argo.namespace=Argo", "/argo/namespace"},
		{"argo.allowControllerNamespace=yes", "/argo/allowControllerNamespace"},
		{"imagePullSecrets[0].nmae=regcred", "nmae"},
		{"monitor.podDisruptionBudget.minAvailable=1", "minAvailable"},
		{"monitor.podDisruptionBudget.maxUnavailable=0", "/monitor/podDisruptionBudget/maxUnavailable"},
		{"monitor.podDisruptionBudget.maxUnavailable=half", "/monitor/podDisruptionBudget/maxUnavailable"},
	} {
		if tc.says == "" {
			// A valid value among the typos: the schema refuses what is
			// wrong, not everything under monitor.
			if _, err := helm(t, "template", releaseName, chartDir, "--set", tc.set); err != nil {
				t.Errorf("--set %s: %v", tc.set, err)
			}
			continue
		}
		_, err := helm(t, "template", releaseName, chartDir, "--set", tc.set)
		if err == nil {
			t.Errorf("--set %s: helm template succeeded", tc.set)
		} else if !strings.Contains(err.Error(), tc.says) {
			t.Errorf("--set %s: error does not name %s: %v", tc.set, tc.says, err)
		}
	}
}

// TestChartNotes renders NOTES.txt (helm template leaves it out): what was
// installed where, and the controller setting still needed, both ways.
func TestChartNotes(t *testing.T) {
	// A copy of the chart with a template that renders NOTES.txt as data.
	dir := filepath.Join(t.TempDir(), "sparkplug")
	if err := os.CopyFS(dir, os.DirFS(chartDir)); err != nil {
		t.Fatal(err)
	}
	notes, err := os.ReadFile(filepath.Join(chartDir, "templates", "NOTES.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), notes, 0o644); err != nil {
		t.Fatal(err)
	}
	wrapper := "kind: Notes\nnotes: {{ tpl (.Files.Get \"notes.txt\") . | toJson }}\n"
	if err := os.WriteFile(filepath.Join(dir, "templates", "zz-notes.yaml"), []byte(wrapper), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		values    string
		want, not []string
	}{
		{"default.values.yaml",
			[]string{"in 1 namespace: team-a.", "ConfigMap spark-executor-plugin", "ServiceAccount spark-executor-plugin",
				"ARGO_EXECUTOR_PLUGINS=true", `controller.extraEnv: [{name: ARGO_EXECUTOR_PLUGINS, value: "true"}]`,
				"kubectl -n argo patch deployment workflow-controller", "--set agentRBAC.create=true", "--set driver.serviceAccount.create=true",
				"WARNING: no admission policy is installed: the cluster does not serve", "--reuse-values --set tests.enabled=true",
				"installed in sidecar mode", "WARNING: ghcr.io/sparkplug-io/sparkplug:v0.1.0\nis the chart's default image, and no release of sparkplug is published",
				"every agent pod of the job namespaces\nwill fail with ImagePullBackOff"},
			[]string{"sparkplug-argo-agent", "sparkplug-spark-driver", "sparkplug monitor", "ValidatingAdmissionPolicy sparkplug", "PodMonitor"}},
		{"confined.values.yaml",
			[]string{"ValidatingAdmissionPolicy sparkplug.team-a.sparkplug.io and its binding"},
			[]string{"WARNING: no admission policy"}},
		{"two-namespaces.values.yaml",
			[]string{"in 2 namespaces: team-a, team-b.", "ServiceAccount spark for the Spark drivers (driver.serviceAccount: spark) (annotated iam.gke.io/gcp-service-account),",
				"what the sidecar may do there (annotated iam.gke.io/gcp-service-account).",
				"sparkplug-argo-agent", "ServiceAccounts default, etl", "ARGO_EXECUTOR_PLUGINS=true"},
			[]string{"--set agentRBAC.create=true", "--set driver.serviceAccount.create=true", "sparkplug monitor"}},
		{"monitor.values.yaml",
			[]string{"in 2 namespaces: team-a, team-b.", "sparkplug monitor, in sparkplug-system:",
				"Deployment sparkplug-monitor, 2 replicas electing a leader with the Lease sparkplug-monitor",
				"Spark applications of team-a, team-b,", "Service sparkplug-monitor, port",
				"Role and RoleBinding sparkplug-monitor in team-a, team-b, and sparkplug-monitor-leader-election in sparkplug-system;",
				"ServiceMonitor sparkplug-monitor", "PrometheusRule sparkplug-monitor", "ConfigMap sparkplug-monitor-dashboard in monitoring",
				"ServiceAccount sparkplug-monitor, which it runs as (annotated eks.amazonaws.com/role-arn);",
				"PodMonitor sparkplug-spark-drivers, in sparkplug-system: the Prometheus Operator\nscrapes port jmx-exporter of the Spark drivers of team-a, team-b"},
			nil},
		{"controller.values.yaml",
			[]string{"in controller mode", "in 2 namespaces: team-a, team-b.", "Deployment sparkplug-controller",
				"3 replicas electing a leader with the Lease sparkplug-controller", "Service sparkplug-controller",
				"the acknowledger (registry.example.com/platform/sparkplug-ack:v0.1.0@sha256:", "no ServiceAccount token",
				"Role and RoleBinding sparkplug-controller", "ARGO_EXECUTOR_PLUGINS=true",
				"It runs as ServiceAccount sparkplug-controller (annotated eks.amazonaws.com/role-arn)."},
			[]string{"ServiceAccount spark-executor-plugin", "sparkplug monitor", "default image", "ImagePullBackOff"}},
		{"controller-default.values.yaml",
			[]string{"in controller mode", "WARNING: ghcr.io/sparkplug-io/sparkplug:v0.1.0, ghcr.io/sparkplug-io/sparkplug-ack:v0.1.0\nare the chart's default images",
				"the controller and every agent pod", "(and ackImage.*)"},
			nil},
		{"digest-flags.values.yaml", nil, []string{"default image", "ImagePullBackOff"}},
		{"overrides.values.yaml",
			[]string{"Deployment etl-sparkplug-controller", "Role and RoleBinding etl-sparkplug-spark-driver", "Role and RoleBinding etl-sparkplug-argo-agent",
				"ValidatingAdmissionPolicy etl-sparkplug.team-a.sparkplug.io"},
			[]string{"RoleBinding sparkplug-spark-driver", "RoleBinding sparkplug-argo-agent"}},
	} {
		out, err := helm(t, "template", releaseName, dir, "--namespace", namespaceOf(tc.values),
			"--values", filepath.Join(chartTestdir, tc.values), "--show-only", "templates/zz-notes.yaml")
		if err != nil {
			t.Fatalf("%s: %v", tc.values, err)
		}
		var doc struct{ Notes string }
		if err := yaml.Unmarshal(out, &doc); err != nil {
			t.Fatal(err)
		}
		for _, s := range tc.want {
			if !strings.Contains(doc.Notes, s) {
				t.Errorf("%s: NOTES do not say %q:\n%s", tc.values, s, doc.Notes)
			}
		}
		for _, s := range tc.not {
			if strings.Contains(doc.Notes, s) {
				t.Errorf("%s: NOTES say %q:\n%s", tc.values, s, doc.Notes)
			}
		}
	}
}

// decodeObjects decodes helm template output into typed objects.
func decodeObjects(t *testing.T, docs []byte) []runtime.Object {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rendered.yaml")
	if err := os.WriteFile(path, docs, 0o644); err != nil {
		t.Fatal(err)
	}
	return decodeDocs(t, path)
}

// byKind groups objects by their kind: ConfigMap, Role, ...
func byKind(objs []runtime.Object) map[string][]runtime.Object {
	m := map[string][]runtime.Object{}
	for _, o := range objs {
		m[kindOf(o)] = append(m[kindOf(o)], o)
	}
	return m
}
