package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/golden"
)

// sparkplug render prints the objects of a body and of every spark step
// of a Workflow, as the golden files hold them.
func TestRenderGolden(t *testing.T) {
	tests := []struct {
		input string
		args  []string
	}{
		{"body.yaml", nil},
		{"workflow.yaml", []string{"--uid", "7c1e2f4a-2b8d-4e63-9a0f-1d2c3b4a5e6f"}},
		{"spark-submit.yaml", []string{"--spark-home", "/opt/spark-3.5.3"}},
		{"sparkapplication.yaml", nil},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"-f", filepath.Join("testdata", "render", tt.input)}, tt.args...)
			if err := renderMain(args, strings.NewReader(""), &stdout, &stderr); err != nil {
				t.Fatalf("render %v: %v", args, err)
			}
			golden.Compare(t, filepath.Join("testdata", "render", strings.TrimSuffix(tt.input, ".yaml")+".golden.yaml"), stdout.String())
		})
	}
}

// -f - reads stdin.
func TestRenderReadsStdin(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "render", "body.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var fromFile, fromStdin bytes.Buffer
	if err := renderMain([]string{"-f", filepath.Join("testdata", "render", "body.yaml")}, strings.NewReader(""), &fromFile, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if err := renderMain([]string{"-f", "-"}, bytes.NewReader(in), &fromStdin, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if fromStdin.Len() == 0 || fromStdin.String() != fromFile.String() {
		t.Errorf("stdin gave:\n%s\nthe file gave:\n%s", fromStdin.String(), fromFile.String())
	}
}

// An invalid body is an error (main exits 1) whose text is the plugin's
// message for the node, and nothing is printed.
func TestRenderInvalidBodyFails(t *testing.T) {
	body := "type: Scala\nimage: x:1\nmainClass: A\nmainApplicationFile: local:///a.jar\ndriver: {memroy: 1g}\n"
	var stdout bytes.Buffer
	err := renderMain([]string{"-f", "-"}, strings.NewReader(body), &stdout, &bytes.Buffer{})
	want := `<stdin>:5:10: invalid spark body: spark.driver.memroy: Invalid value: "1g": unknown field "memroy"; did you mean "memory"?`
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	if stdout.Len() != 0 {
		t.Errorf("printed %q for an invalid body", stdout.String())
	}
}

// A failed step's error is at the line and column of its first problem's
// field in the input, as convert reports: in a Workflow's templates, and
// in a SparkApplication's spec.
func TestRenderErrorsAtTheirField(t *testing.T) {
	body := "      type: Scala\n      image: x:1\n      mainClass: A\n      mainApplicationFile: local:///a.jar\n      driver:\n        memroy: 1g\n"
	wf := "# a comment\napiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: wf}\nspec:\n  entrypoint: main\n  templates:\n" +
		"  - name: other\n    container: {image: x}\n  - name: main\n    plugin:\n     spark:\n" + strings.ReplaceAll(body, "      ", "       ")
	err := renderMain([]string{"-f", "-"}, strings.NewReader(wf), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.HasPrefix(err.Error(), `<stdin>:18:10: invalid spark body: spark.driver.memroy:`) {
		t.Errorf("Workflow: error %v, want it at line 18, column 10", err)
	}
	app := "# the operator's\n---\napiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: a}\nspec:\n" +
		strings.ReplaceAll(body, "      ", "  ")
	err = renderMain([]string{"-f", "-"}, strings.NewReader(app), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), `<stdin>:12:5: invalid spark body: spark.driver.memroy:`) {
		t.Errorf("SparkApplication: error %v, want it at line 12, column 5", err)
	}
}

func TestRenderFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "-f is required"},
		{[]string{"-f", "x", "extra"}, "unexpected arguments"},
		{[]string{"-f", "x", "--attempt", "0"}, "attempts count from 1"},
		{[]string{"-f", "x", "-p", "novalue"}, "want NAME=VALUE"},
		{[]string{"-f", "x", "--launcher", "yarn"}, `--launcher must be native or spark-submit, got "yarn"`},
		{[]string{"-f", "x", "--spark-home", ""}, "--spark-home must not be empty"},
		{[]string{"-f", "x", "--kubernetes-request-timeout", "-1s"}, "--kubernetes-request-timeout must not be negative"},
		{[]string{"-f", filepath.Join("testdata", "render", "missing.yaml")}, "-f " + filepath.Join("testdata", "render", "missing.yaml") + ": stat "},
	}
	for _, tt := range tests {
		err := renderMain(tt.args, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("render %v: error %v, want %q", tt.args, err, tt.want)
		}
	}
	var help bytes.Buffer
	if err := run([]string{"render", "--help"}, &help, &bytes.Buffer{}); err != nil || !strings.Contains(help.String(), "Usage: sparkplug render") {
		t.Errorf("--help: %v\n%s", err, help.String())
	}
	if !strings.Contains(usage(), "render") {
		t.Error("sparkplug --help does not list render")
	}
}

// --launcher spark-submit is the default of bodies that name none, as for
// serve: the body's step opens with its spark-submit run.
func TestRenderLauncherFlag(t *testing.T) {
	file := filepath.Join("testdata", "render", "body.yaml")
	var native, submitted bytes.Buffer
	if err := renderMain([]string{"-f", file}, strings.NewReader(""), &native, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if err := renderMain([]string{"-f", file, "--launcher", "spark-submit", "--kubernetes-request-timeout", "0"}, strings.NewReader(""), &submitted, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(native.String(), "sparkSubmit:") {
		t.Errorf("native render shows a spark-submit run:\n%s", native.String())
	}
	out := submitted.String()
	if !strings.Contains(out, "# launcher: spark-submit.") || !strings.Contains(out, "\n  - /opt/spark/bin/spark-submit\n") ||
		strings.Contains(out, "KUBERNETES_REQUEST_TIMEOUT") || strings.Contains(out, "kind: Pod\nmetadata:") {
		t.Errorf("render --launcher spark-submit:\n%s", out)
	}
}

// --ingress-url-format and --ingress-class-name render a step as a plugin
// serving with them would run it.
func TestRenderWithThePluginsIngressFlags(t *testing.T) {
	body := "type: Scala\nimage: x:1\nmainClass: A\nmainApplicationFile: local:///a.jar\nsparkUIOptions: {}\n"
	var stdout bytes.Buffer
	args := []string{"-f", "-", "--workflow", "etl", "--ingress-url-format", "spark.example.com/{{$appNamespace}}/{{$appName}}", "--ingress-class-name", "nginx"}
	if err := renderMain(args, strings.NewReader(body), &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: Ingress", "ingressClassName: nginx", "host: spark.example.com", "path: /default/etl-", "spark.ui.proxyBase=/default/etl-"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	err := renderMain([]string{"-f", "-", "--ingress-url-format", "{{$app}}"}, strings.NewReader(body), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--ingress-url-format") {
		t.Errorf("a bad --ingress-url-format: %v", err)
	}
}

// A SparkApplication renders as the Workflow convert makes of it; so does
// a ScheduledSparkApplication, as its CronWorkflow.
func TestRenderSparkApplication(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := renderMain([]string{"-f", filepath.Join("testdata", "render", "sparkapplication.yaml")}, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for _, want := range []string{
		"# from: SparkApplication data/spark-pi, as the Workflow sparkplug convert writes\n# template: spark\n# run: workflow spark-pi-xxxxx",
		"# from: ScheduledSparkApplication data/nightly-pi, as the CronWorkflow sparkplug convert writes\n# template: spark\n# run: workflow nightly-pi",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
	app := "apiVersion: sparkoperator.k8s.io/v1beta1\nkind: SparkApplication\nmetadata: {name: old}\nspec: {}\n"
	err := renderMain([]string{"-f", "-"}, strings.NewReader(app), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "<stdin>: SparkApplication old cannot be converted: convert: apiVersion: SparkApplication v1beta1 is not sparkoperator.k8s.io/v1beta2") {
		t.Errorf("a v1beta1 SparkApplication: %v", err)
	}
}

// Render warns on stderr about a parameter it leaves as written and a -p
// that no step declares or uses; errors name the file.
func TestRenderWarnings(t *testing.T) {
	wf := `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: etl-}
spec:
  entrypoint: etl
  templates:
  - name: etl
    inputs:
      parameters: [{name: day}]
    plugin:
      spark:
        type: Scala
        image: x:1
        mainClass: A
        mainApplicationFile: local:///a.jar
        arguments: ["{{inputs.parameters.day}}", "{{workflow.parameters.env}}"]
`
	var stdout, stderr bytes.Buffer
	if err := renderMain([]string{"-f", "-", "-p", "dya=2026-11-25"}, strings.NewReader(wf), &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"warning: <stdin>: template etl: {{inputs.parameters.day}}, {{workflow.parameters.env}} not resolved, shown as written: Argo would fail the step; declare a value or default, or give -p NAME=VALUE\n",
		"warning: <stdin>: -p dya: no step declares or uses a parameter dya; it changes nothing\n",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	stderr.Reset()
	if err := renderMain([]string{"-f", "-", "-p", "day=2026-11-25", "-p", "env=prod"}, strings.NewReader(wf), &bytes.Buffer{}, &stderr); err != nil || stderr.Len() != 0 {
		t.Errorf("every parameter given: %v, stderr %q", err, stderr.String())
	}
	file := filepath.Join(t.TempDir(), "cm.yaml")
	if err := os.WriteFile(file, []byte("kind: ConfigMap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := renderMain([]string{"-f", file}, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.HasPrefix(err.Error(), file+": kind ConfigMap: want a Workflow") {
		t.Errorf("a ConfigMap: %v", err)
	}
}

// render's policy flags are serve's: a step they refuse fails naming the
// field and the rule, a bad value names the flag.
func TestRenderWithThePluginsPolicyFlags(t *testing.T) {
	body := "type: Scala\nimage: x:1\nmainClass: A\nmainApplicationFile: local:///a.jar\nsparkUIOptions: {serviceType: NodePort}\n"
	if err := renderMain([]string{"-f", "-"}, strings.NewReader(body), &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatalf("a NodePort UI Service without a policy: %v", err)
	}
	var stdout bytes.Buffer
	err := renderMain([]string{"-f", "-", "--allowed-service-types", "ClusterIP"}, strings.NewReader(body), &stdout, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "spark.sparkUIOptions.serviceType: a Service of type NodePort is not one the plugin allows (ClusterIP) (policy rule allowed-service-types)") || stdout.Len() != 0 {
		t.Errorf("--allowed-service-types=ClusterIP: %v, wrote %q", err, stdout.String())
	}
	err = renderMain([]string{"-f", "-"}, strings.NewReader(body+"driver: {serviceAccount: spark-executor-plugin}\n"), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "spark.driver.serviceAccount: ServiceAccount spark-executor-plugin is the plugin's own") {
		t.Errorf("the plugin's ServiceAccount: %v", err)
	}
	err = renderMain([]string{"-f", "-", "--pod-security-level", "privileged"}, strings.NewReader(body), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--pod-security-level: must be baseline, restricted or empty") {
		t.Errorf("a bad --pod-security-level: %v", err)
	}
}
