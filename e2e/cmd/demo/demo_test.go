package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestApplicationArgs(t *testing.T) {
	args := []string{"driver", "--properties-file", "/opt/spark/conf/spark.properties", "--class", "org.apache.spark.examples.SparkPi",
		"local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar", "10", "spark-a", "spark-b"}
	if got, want := applicationArgs(args), []string{"10", "spark-a", "spark-b"}; !slices.Equal(got, want) {
		t.Errorf("applicationArgs = %q, want %q", got, want)
	}
	if got := applicationArgs([]string{"driver", "--class", "C", "app.jar"}); len(got) != 0 {
		t.Errorf("no arguments: got %q", got)
	}
}

func TestPrintTree(t *testing.T) {
	result := "spark-0123"
	at := func(s int) metav1.Time { return metav1.Unix(int64(s), 0) }
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "dag-x"}, Status: wfv1.WorkflowStatus{Nodes: wfv1.Nodes{
		"dag-x":   {ID: "dag-x", DisplayName: "dag-x", Phase: wfv1.NodeSucceeded, StartedAt: at(1)},
		"dag-x-1": {ID: "dag-x-1", DisplayName: "pi-a", BoundaryID: "dag-x", Phase: wfv1.NodeSucceeded, Message: "COMPLETED", StartedAt: at(1), Outputs: &wfv1.Outputs{Result: &result}},
		"dag-x-2": {ID: "dag-x-2", DisplayName: "report", BoundaryID: "dag-x", Phase: wfv1.NodeRunning, Message: "RUNNING 1/1 executor", StartedAt: at(5)},
	}}}
	var b bytes.Buffer
	printTree(&b, wf)
	got := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{"NODE", "dag-x", "├─ pi-a", "└─ report"}
	if len(got) != len(want) {
		t.Fatalf("tree:\n%s", b.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("line %d %q, want it to start with %q", i, got[i], w)
		}
	}
	if !strings.Contains(got[2], "spark-0123") || !strings.Contains(got[3], "RUNNING 1/1 executor") {
		t.Errorf("tree lacks results or messages:\n%s", b.String())
	}
}

// The demo ends by saying where to go next.
func TestNextSteps(t *testing.T) {
	var b strings.Builder
	nextSteps(&b)
	for _, want := range []string{"README.md", "make demo KEEP=1", "sparkplug run -f", "docs/install.md"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("next steps lack %q:\n%s", want, b.String())
		}
	}
}
