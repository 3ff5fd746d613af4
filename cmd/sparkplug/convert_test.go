package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"
)

// Inputs of the convert package's golden tests.
var (
	ksoSparkPi   = filepath.Join("..", "..", "plugin", "convert", "testdata", "kso-spark-pi.input.yaml")
	ksoScheduled = filepath.Join("..", "..", "plugin", "convert", "testdata", "kso-spark-pi-scheduled.input.yaml")
	findingsFile = filepath.Join("..", "..", "plugin", "convert", "testdata", "findings.input.yaml")
)

type cmdResult struct {
	stdout, stderr string
	err            error
}

// runCmd runs sparkplug with args as main would, stdin given.
func runCmd(t *testing.T, stdin string, args ...string) cmdResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	var err error
	switch args[0] {
	case "convert":
		err = convertMain(args[1:], strings.NewReader(stdin), &stdout, &stderr)
	default:
		err = run(args, &stdout, &stderr)
	}
	if errors.Is(err, pflag.ErrHelp) {
		err = nil
	}
	return cmdResult{stdout.String(), stderr.String(), err}
}

// status is the exit status main gives r.
func (r cmdResult) status() int {
	if r.err == nil {
		return 0
	}
	return exitCode(r.err)
}

func TestConvertHelp(t *testing.T) {
	r := runCmd(t, "", "convert", "--help")
	if r.err != nil {
		t.Fatal(r.err)
	}
	for _, want := range []string{"Usage: sparkplug convert [flags]", "-f, --filename", "--output-dir", "-o, --output yaml|json", "--keep-names", "--service-account", "--allow-failing", "FILE:LINE:COLUMN", "generateName <name>-", "Exit status: 0"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("convert --help does not say %q:\n%s", want, r.stdout)
		}
	}
	if r := runCmd(t, "", "--help"); !strings.Contains(r.stdout, "  convert ") || !strings.Contains(r.stdout, "  schedule ") {
		t.Errorf("sparkplug --help lists no convert and schedule:\n%s", r.stdout)
	}
}

func TestConvertExitStatus(t *testing.T) {
	dir := t.TempDir()
	comments := filepath.Join(dir, "comments.yaml")
	if err := os.WriteFile(comments, []byte("# nothing here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  int
		msg   string // a part of the error, or of stderr
	}{
		{"clean", "", []string{"-f", ksoSparkPi}, 0, ""},
		{"something to report", "", []string{"-f", ksoScheduled}, 0, "1 written, 1 with something to report"},
		{"something to report, --strict", "", []string{"-f", ksoScheduled, "--strict"}, 1, "1 written, 1 with something to report (above); --strict"},
		{"findings and other kinds", "", []string{"-f", findingsFile}, 1, "6 written, 3 of them will certainly fail (above): fix the input, or give --allow-failing"},
		{"findings, --allow-failing", "", []string{"-f", findingsFile, "--allow-failing"}, 0, "kind: a ConfigMap (v1)"},
		{"an invalid body", sparkAppWithBody("  driver: {memroy: 1g}\n"), []string{"-f", "-"}, 1, "<stdin>:10:12: SparkApplication pi: spec.driver.memroy: the plugin would fail the step"},
		{"an invalid body, --allow-failing", sparkAppWithBody("  driver: {memroy: 1g}\n"), []string{"-f", "-", "--allow-failing"}, 0, "1 written, 1 with something to report"},
		{"a schedule Argo refuses", "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: ScheduledSparkApplication\nmetadata: {name: s}\nspec:\n  schedule: \"0 25 * * *\"\n  concurrencyPolicy: Forbid\n  template:\n" + indentBody(sparkAppBody, "    "), []string{"-f", "-"}, 1, "<stdin>:5:3: ScheduledSparkApplication s: spec.schedule: Argo refuses the CronWorkflow"},
		{"only other kinds", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", []string{"-f", "-"}, 1, "nothing written"},
		{"no objects", "", []string{"-f", comments}, 1, "no objects in the input"},
		{"no -f", "", nil, 2, "-f is required"},
		{"a file that does not exist", "", []string{"-f", filepath.Join(dir, "missing.yaml")}, 1, "missing.yaml: stat "},
		{"stdin twice", "", []string{"-f", "-", "-f", "-"}, 2, "stdin is read once"},
		{"positional arguments", "", []string{ksoSparkPi}, 2, "give the files with -f"},
		{"an unknown flag", "", []string{"-f", ksoSparkPi, "--outptu-dir", "x"}, 2, "unknown flag: --outptu-dir: did you mean --output-dir?"},
		{"-o not a format", "", []string{"-f", ksoSparkPi, "-o", "out/"}, 2, `"out/" is not an output format: yaml or json`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCmd(t, tt.stdin, append([]string{"convert"}, tt.args...)...)
			if got := r.status(); got != tt.want {
				t.Errorf("exit status %d, want %d (error %v, stderr %s)", got, tt.want, r.err, r.stderr)
			}
			if tt.msg != "" && (r.err == nil || !strings.Contains(r.err.Error(), tt.msg)) && !strings.Contains(r.stderr, tt.msg) {
				t.Errorf("error %v, stderr %q; want %q in either", r.err, r.stderr, tt.msg)
			}
		})
	}
}

// -f - reads stdin and writes what -f FILE writes.
func TestConvertReadsStdin(t *testing.T) {
	in, err := os.ReadFile(ksoScheduled)
	if err != nil {
		t.Fatal(err)
	}
	fromFile := runCmd(t, "", "convert", "-f", ksoScheduled, "--service-account", "spark-workflows")
	fromStdin := runCmd(t, string(in), "convert", "-f", "-", "--service-account", "spark-workflows")
	if fromStdin.stdout == "" || strings.ReplaceAll(fromFile.stdout, ksoScheduled, "<stdin>") != fromStdin.stdout {
		t.Errorf("stdin wrote\n%s\nthe file\n%s", fromStdin.stdout, fromFile.stdout)
	}
	// In the input's order, each at its field.
	if !strings.HasPrefix(fromStdin.stderr, "<stdin>:27:1: ScheduledSparkApplication default/spark-pi-scheduled: spec: missed runs are no longer caught up") ||
		!strings.Contains(fromStdin.stderr, "\n<stdin>:28:3: ScheduledSparkApplication default/spark-pi-scheduled: spec.schedule: ") ||
		!strings.Contains(fromStdin.stderr, "\n<stdin>:43:7: ScheduledSparkApplication default/spark-pi-scheduled: spec.template.driver.serviceAccount: ") {
		t.Errorf("stderr %q; want each report to start with <stdin>:LINE:COLUMN of its field: KIND NAMESPACE/NAME: PATH", fromStdin.stderr)
	}
	if fromStdin.status() != 0 {
		t.Errorf("exit status %d, want 0", fromStdin.status())
	}
}

// stdout is one YAML stream; each object opens with where it came from.
func TestConvertWritesAStream(t *testing.T) {
	r := runCmd(t, "", "convert", "-f", ksoSparkPi, "-f", ksoScheduled)
	docs := strings.Split(r.stdout, "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("%d documents, want 2:\n%s", len(docs), r.stdout)
	}
	if !strings.HasPrefix(docs[0], "# Converted by sparkplug convert from "+ksoSparkPi+":20: SparkApplication default/spark-pi\n") {
		t.Errorf("first document opens with %q", strings.SplitN(docs[0], "\n", 2)[0])
	}
	wf, cw := &wfv1.Workflow{}, &wfv1.CronWorkflow{}
	if err := yaml.UnmarshalStrict([]byte(docs[0]), wf); err != nil || wf.GenerateName != "spark-pi-" {
		t.Errorf("first document: %v, generateName %q", err, wf.GenerateName)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), cw); err != nil || cw.Name != "spark-pi-scheduled" {
		t.Errorf("second document: %v, name %q", err, cw.Name)
	}
}

// -o writes one file per object, named after its kind and name, and says
// where a second object of the same name went.
func TestConvertOutputDir(t *testing.T) {
	dir := t.TempDir()
	inputs := filepath.Join(dir, "in")
	if err := os.MkdirAll(filepath.Join(inputs, "nested"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, from := range map[string]string{"a.yaml": ksoSparkPi, "nested/b.yml": ksoScheduled, "nested/c.yaml": ksoSparkPi} {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(inputs, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(inputs, "notes.txt"), []byte("not YAML"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	r := runCmd(t, "", "convert", "-f", inputs, "--output-dir", out)

	wantFiles := []string{"workflow-spark-pi.yaml", "cronworkflow-spark-pi-scheduled.yaml", "workflow-spark-pi-2.yaml"}
	var listed []string
	for _, f := range wantFiles {
		listed = append(listed, filepath.Join(out, f))
	}
	if got := strings.Split(strings.TrimSpace(r.stdout), "\n"); strings.Join(got, ",") != strings.Join(listed, ",") {
		t.Errorf("stdout lists %q, want %q", got, listed)
	}
	if !strings.Contains(r.stderr, "nested/c.yaml:20: SparkApplication default/spark-pi: written to workflow-spark-pi-2.yaml: workflow-spark-pi.yaml holds "+filepath.Join(inputs, "a.yaml")+":20") {
		t.Errorf("stderr does not say where the second spark-pi went:\n%s", r.stderr)
	}
	if r.status() != 0 {
		t.Errorf("exit status %d, want 0", r.status())
	}
	if _, err := os.Stat("yaml"); err == nil {
		t.Error("a directory named yaml was made")
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(wantFiles) {
		t.Errorf("%d files in %s, want %d", len(entries), out, len(wantFiles))
	}
	data, err := os.ReadFile(filepath.Join(out, "cronworkflow-spark-pi-scheduled.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cw := &wfv1.CronWorkflow{}
	if err := yaml.UnmarshalStrict(data, cw); err != nil || cw.Spec.Schedules[0] != "*/3 * * * *" {
		t.Errorf("%v; schedules %q", err, cw.Spec.Schedules)
	}
}

func TestConvertKeepNames(t *testing.T) {
	r := runCmd(t, "", "convert", "-f", ksoSparkPi, "--keep-names")
	wf := &wfv1.Workflow{}
	if err := yaml.Unmarshal([]byte(r.stdout), wf); err != nil || wf.Name != "spark-pi" || wf.GenerateName != "" {
		t.Errorf("%v: name %q generateName %q; want the name", err, wf.Name, wf.GenerateName)
	}
}

// --service-account sets each Workflow's serviceAccountName, and a
// CronWorkflow's workflowSpec's; without it, stderr says the runs use the
// namespace's default ServiceAccount. A name that is none is a usage error.
func TestConvertServiceAccount(t *testing.T) {
	r := runCmd(t, "", "convert", "-f", ksoSparkPi, "--service-account", "spark-workflows")
	wf := &wfv1.Workflow{}
	if err := yaml.Unmarshal([]byte(r.stdout), wf); err != nil || wf.Spec.ServiceAccountName != "spark-workflows" {
		t.Errorf("%v: serviceAccountName %q, want spark-workflows", err, wf.Spec.ServiceAccountName)
	}
	if strings.Contains(r.stderr, "no serviceAccountName") {
		t.Errorf("stderr with --service-account: %s", r.stderr)
	}
	r = runCmd(t, "", "convert", "-f", ksoScheduled, "--service-account", "spark-workflows")
	cw := &wfv1.CronWorkflow{}
	if err := yaml.Unmarshal([]byte(r.stdout), cw); err != nil || cw.Spec.WorkflowSpec.ServiceAccountName != "spark-workflows" {
		t.Errorf("%v: workflowSpec.serviceAccountName %q, want spark-workflows", err, cw.Spec.WorkflowSpec.ServiceAccountName)
	}
	if !strings.Contains(r.stderr, "spec: missed runs are no longer caught up") {
		t.Errorf("stderr lacks the missed runs: %s", r.stderr)
	}
	r = runCmd(t, "", "convert", "-f", ksoSparkPi)
	if !strings.Contains(r.stderr, "spark-pi: no serviceAccountName (--service-account): the Workflow runs as the namespace's default ServiceAccount") || r.status() != 0 {
		t.Errorf("without --service-account: status %d, stderr %s", r.status(), r.stderr)
	}
	if r := runCmd(t, "", "convert", "-f", ksoSparkPi, "--service-account", "Not_A_Name"); r.status() != 2 {
		t.Errorf("--service-account Not_A_Name: status %d, %v; want 2", r.status(), r.err)
	}
}

// The binary exits with the statuses the help promises.
func TestBinaryExitStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "sparkplug")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"convert", "-f", ksoSparkPi}, 0},
		{[]string{"convert", "-f", ksoScheduled}, 0},
		{[]string{"convert", "-f", ksoScheduled, "--strict"}, 1},
		{[]string{"convert", "-f", ksoSparkPi, "-o", "yaml"}, 0},
		{[]string{"convert", "-f", ksoSparkPi, "-o", "xml"}, 2},
		{[]string{"rendr"}, 2},
		{[]string{"render", "-file", ksoSparkPi}, 2},
		{[]string{"version"}, 0},
		{[]string{"--version"}, 0},
		{[]string{"convert"}, 2},
		{[]string{"convert", "--help"}, 0},
		{[]string{"schedule", "30 2 * * *", "--timezone", "Europe/Berlin"}, 0},
		{[]string{"schedule", "61 * * * *"}, 1},
		{[]string{"schedule"}, 2},
	}
	for _, tt := range tests {
		cmd := exec.Command(bin, tt.args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		got := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			got = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("sparkplug %q: exit status %d, want %d; stderr:\n%s", tt.args, got, tt.want, stderr.String())
		}
		if got == 1 && !strings.Contains(stderr.String(), "sparkplug: ") {
			t.Errorf("sparkplug %q: exit 1 without saying why:\n%s", tt.args, stderr.String())
		}
	}
}

// sparkAppBody is a valid spark body, two spaces in.
const sparkAppBody = `  type: Scala
  mode: cluster
  image: spark:3.5.3
  mainClass: org.apache.spark.examples.SparkPi
  mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
`

// sparkAppWithBody is a SparkApplication pi whose spec is sparkAppBody
// and more (from line 10 on).
func sparkAppWithBody(more string) string {
	return "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: pi}\nspec:\n" + sparkAppBody + more
}

// indentBody indents sparkAppBody's lines by more.
func indentBody(body, more string) string {
	return more + strings.ReplaceAll(strings.TrimSuffix(body, "\n"), "\n", "\n"+more) + "\n"
}
