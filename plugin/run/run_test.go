package run

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/golden"
)

const sparkWorkflow = `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: pi-
spec:
  entrypoint: main
  templates:
    - name: main
      dag:
        tasks:
          - {name: first, template: pi}
          - {name: second, template: pi, depends: first}
    - name: pi
      plugin:
        spark:
          type: Scala
          mainApplicationFile: local:///opt/spark/examples/jars/spark-examples.jar
status:
  phase: Succeeded
`

func TestParse(t *testing.T) {
	wf, err := Parse([]byte(sparkWorkflow))
	if err != nil {
		t.Fatal(err)
	}
	if wf.GenerateName != "pi-" || len(wf.Spec.Templates) != 2 || wf.Status.Phase != "" {
		t.Errorf("parsed %q with %d templates, status %q; want pi-, 2, the status dropped", wf.GenerateName, len(wf.Spec.Templates), wf.Status.Phase)
	}
	for _, c := range []struct{ name, doc, want string }{
		{"another kind", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", `kind "ConfigMap"`},
		{"a WorkflowTemplate", strings.Replace(sparkWorkflow, "kind: Workflow", "kind: WorkflowTemplate", 1), `kind "WorkflowTemplate"`},
		{"another version", strings.Replace(sparkWorkflow, "v1alpha1", "v1", 1), `apiVersion "argoproj.io/v1"`},
		{"no name", strings.Replace(sparkWorkflow, "generateName: pi-", "labels: {a: b}", 1), "neither metadata.name nor metadata.generateName"},
		{"a misspelt field", strings.Replace(sparkWorkflow, "entrypoint:", "entrypiont:", 1), `unknown field "entrypiont"`},
		{"not YAML", "{", "not a Workflow"},
	} {
		if _, err := Parse([]byte(c.doc)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}

func TestPlace(t *testing.T) {
	wf := &wfv1.Workflow{}
	if err := Place(wf, "jobs"); err != nil || wf.Namespace != "jobs" {
		t.Errorf("no namespace: %v, %q; want it placed in jobs", err, wf.Namespace)
	}
	if err := Place(wf, "jobs"); err != nil {
		t.Errorf("the same namespace: %v", err)
	}
	err := Place(wf, "other")
	if err == nil || !strings.Contains(err.Error(), `metadata.namespace "jobs" is not the namespace asked for, "other"`) {
		t.Errorf("another namespace: %v", err)
	}
}

// ended builds wf as Argo's controller leaves it: two Spark nodes of a
// DAG, started one after the other, and a container node that is not one.
func endedWorkflow(phase wfv1.WorkflowPhase, message string) *wfv1.Workflow {
	wf, err := Parse([]byte(sparkWorkflow))
	if err != nil {
		panic(err)
	}
	wf.Name = "pi-x7k2p"
	start := metav1.NewTime(time.Date(2026, 11, 26, 5, 0, 0, 0, time.UTC))
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(start.Add(d)) }
	out := func(id, driver string) *wfv1.Outputs {
		return &wfv1.Outputs{Parameters: []wfv1.Parameter{
			{Name: "application-id", Value: wfv1.AnyStringPtr(id)},
			{Name: "driver-pod", Value: wfv1.AnyStringPtr(driver)},
		}}
	}
	wf.Status = wfv1.WorkflowStatus{
		Phase: phase, Message: message, StartedAt: start, FinishedAt: at(83 * time.Second),
		Nodes: wfv1.Nodes{
			"pi-x7k2p": {ID: "pi-x7k2p", Name: "pi-x7k2p", DisplayName: "pi-x7k2p", Type: wfv1.NodeTypeDAG, TemplateName: "main", Phase: wfv1.NodePhase(phase), StartedAt: start},
			"pi-x7k2p-2": {ID: "pi-x7k2p-2", Name: "pi-x7k2p.second", DisplayName: "second", Type: wfv1.NodeTypePlugin, TemplateName: "pi",
				Phase: wfv1.NodeFailed, Message: "driver failed:\n  exit code 1", StartedAt: at(40 * time.Second), Outputs: out("spark-2", "pi-2-driver")},
			"pi-x7k2p-1": {ID: "pi-x7k2p-1", Name: "pi-x7k2p.first", DisplayName: "first", Type: wfv1.NodeTypePlugin, TemplateName: "pi",
				Phase: wfv1.NodeSucceeded, Message: "driver Succeeded", StartedAt: at(time.Second), Outputs: out("spark-1", "pi-1-driver")},
		},
	}
	return wf
}

func TestReport(t *testing.T) {
	var b bytes.Buffer
	if err := Report(&b, endedWorkflow(wfv1.WorkflowFailed, "child 'pi-x7k2p-2' failed")); err != nil {
		t.Fatal(err)
	}
	want := `workflow pi-x7k2p Failed in 1m23s: child 'pi-x7k2p-2' failed
  first  Succeeded  driver Succeeded  application-id=spark-1  driver-pod=pi-1-driver
  second  Failed  driver failed: exit code 1  application-id=spark-2  driver-pod=pi-2-driver
`
	if b.String() != want {
		t.Errorf("report:\n%s\nwant:\n%s", b.String(), want)
	}

	b.Reset()
	none := endedWorkflow(wfv1.WorkflowSucceeded, "")
	none.Status.Nodes = wfv1.Nodes{}
	none.Status.FinishedAt = metav1.Time{}
	if err := Report(&b, none); err != nil {
		t.Fatal(err)
	}
	if want := "workflow pi-x7k2p Succeeded\n  (no Spark node)\n"; b.String() != want {
		t.Errorf("report %q, want %q", b.String(), want)
	}
}

func TestReportBoundsAMessage(t *testing.T) {
	wf := endedWorkflow(wfv1.WorkflowFailed, strings.Repeat("x", 10*maxMessage))
	var b bytes.Buffer
	if err := Report(&b, wf); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(b.String(), "\n")
	if len(first) > maxMessage+100 || !strings.Contains(first, "bytes more)") {
		t.Errorf("a 10 KiB message made a %d-byte line: %.200s", len(first), first)
	}
}

func TestNodeLineOfANodeNotStarted(t *testing.T) {
	if got := (Node{DisplayName: "pi"}).line(); got != "pi  Pending" {
		t.Errorf("line %q", got)
	}
}

// The result -o json and yaml print: the workflow's end and its steps as
// sparkplug get lists them, in a golden file.
func TestGoldenResult(t *testing.T) {
	wf := endedWorkflow(wfv1.WorkflowFailed, "child 'pi-x7k2p-2' failed")
	wf.Namespace = "jobs"
	b, err := json.MarshalIndent(NewResult(wf), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Compare(t, filepath.Join("testdata", "result.golden.json"), string(b)+"\n")
	none := endedWorkflow(wfv1.WorkflowSucceeded, "")
	none.Status.Nodes = wfv1.Nodes{}
	if r := NewResult(none); r.Steps == nil || len(r.Steps) != 0 {
		t.Errorf("no Spark node: steps %v, want an empty list", r.Steps)
	}
}
