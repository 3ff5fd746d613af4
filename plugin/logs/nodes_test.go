package logs

import (
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/google/go-cmp/cmp"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	corev1 "k8s.io/api/core/v1"
)

// A node's outputs say where a log that is gone can still be read.
func TestRecorded(t *testing.T) {
	o := &wfv1.Outputs{
		Parameters: []wfv1.Parameter{
			{Name: spark.OutputDriverPod, Value: wfv1.AnyStringPtr("d")}, {Name: spark.OutputAttempt, Value: wfv1.AnyStringPtr("3")},
			{Name: spark.OutputHistoryUI, Value: wfv1.AnyStringPtr("https://shs/history/spark-1/")}, {Name: "application-id"},
		},
		Artifacts: []wfv1.Artifact{{Name: spark.OutputDriverLog, ArtifactLocation: wfv1.ArtifactLocation{S3: &wfv1.S3Artifact{
			S3Bucket: wfv1.S3Bucket{Bucket: "logs"}, Key: "wf/d/driver.log"}}}},
	}
	want := record{driver: "d", attempt: 3, historyUI: "https://shs/history/spark-1/", archivedLog: "s3://logs/wf/d/driver.log"}
	if got := recorded(o); got != want {
		t.Errorf("%+v, want %+v", got, want)
	}
	if got := recorded(&wfv1.Outputs{Parameters: []wfv1.Parameter{{Name: spark.OutputDriverPod, Value: wfv1.AnyStringPtr("d")}}}); got.attempt != 1 {
		t.Errorf("a driver without an attempt: %+v, want attempt 1", got)
	}
	if got := recorded(nil); got != (record{}) {
		t.Errorf("no outputs: %+v", got)
	}
}

// A Spark node is a Plugin node whose template is a spark step; one
// whose template the Workflow does not hold counts when a driver or its
// outputs say sparkplug ran it. They come in the order they started.
func TestSparkNodes(t *testing.T) {
	wf := testWorkflow()
	addNode(wf, "wf", "wf", "wf", "main", wfv1.NodeTypeSteps, wfv1.NodeRunning, 0)
	addNode(wf, "wf-3", "wf[1].etl", "etl", "etl", wfv1.NodeTypePlugin, wfv1.NodeRunning, 5)
	addNode(wf, "wf-1", "wf[0].spark", "spark", "spark", wfv1.NodeTypePlugin, wfv1.NodeSucceeded, 1)
	addNode(wf, "wf-2", "wf[0].slack", "slack", "slack", wfv1.NodeTypePlugin, wfv1.NodeSucceeded, 1)
	addNode(wf, "wf-4", "wf[2].later", "later", "etl", wfv1.NodeTypePlugin, wfv1.NodePending, -1)
	addNode(wf, "wf-5", "wf[0].box", "box", "main", wfv1.NodeTypePod, wfv1.NodeSucceeded, 0)
	// Templates the Workflow does not hold (an inline one, say).
	addNode(wf, "wf-6", "wf[3].inline-ran", "inline-ran", "", wfv1.NodeTypePlugin, wfv1.NodeRunning, 7)
	addNode(wf, "wf-7", "wf[3].inline-reported", "inline-reported", "", wfv1.NodeTypePlugin, wfv1.NodeFailed, 6)
	setOutputs(wf, "wf-7", "wf-x-driver", 1)
	addNode(wf, "wf-8", "wf[3].inline-other", "inline-other", "", wfv1.NodeTypePlugin, wfv1.NodeRunning, 6)
	// A templateRef's template, which Argo stores in the status.
	n := addNode(wf, "wf-9", "wf[4].ref", "ref", "", wfv1.NodeTypePlugin, wfv1.NodeRunning, 8)
	n.TemplateRef = &wfv1.TemplateRef{Name: "lib", Template: "spark-job"}
	wf.Status.Nodes["wf-9"] = *n
	wf.Status.StoredTemplates = map[string]wfv1.Template{"namespaced/lib/spark-job": sparkTmpl("spark-job")}
	n = addNode(wf, "wf-10", "wf[4].ref-other", "ref-other", "", wfv1.NodeTypePlugin, wfv1.NodeRunning, 8)
	n.TemplateRef = &wfv1.TemplateRef{Name: "lib", Template: "notify"}
	wf.Status.Nodes["wf-10"] = *n
	wf.Status.StoredTemplates["namespaced/lib/notify"] = wfv1.Template{Name: "notify", Plugin: &wfv1.Plugin{Object: wfv1.Object{Value: []byte(`{"slack":{}}`)}}}

	drivers := map[string][]*corev1.Pod{"wf-6": {driverPod(wf, "wf-6", 1)}}
	var got []string
	for _, n := range SparkNodes(wf, drivers) {
		got = append(got, n.Name)
	}
	want := []string{"wf[0].spark", "wf[1].etl", "wf[3].inline-reported", "wf[3].inline-ran", "wf[4].ref", "wf[2].later"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Spark nodes (-want +got):\n%s", diff)
	}
	nodes := SparkNodes(wf, drivers)
	if r := nodes[2]; r.RecordedDriver != "wf-x-driver" || r.RecordedAttempt != 1 || !r.Finished {
		t.Errorf("inline-reported: %+v, want its recorded driver, attempt 1, finished", r)
	}
	if nodes[1].Finished {
		t.Errorf("a running node is finished: %+v", nodes[1])
	}
}

func TestFindNode(t *testing.T) {
	wf := testWorkflow()
	addNode(wf, "wf", "wf", "wf", "main", wfv1.NodeTypeDAG, wfv1.NodeRunning, 0)
	addNode(wf, "wf-11", "wf.pi-a", "pi-a", "spark", wfv1.NodeTypePlugin, wfv1.NodeRunning, 1)
	addNode(wf, "wf-12", "wf.pi-b", "pi-b", "spark", wfv1.NodeTypePlugin, wfv1.NodeRunning, 2)
	// A loop: one display name for two children (items repeated).
	addNode(wf, "wf-21", "wf.loop(0:x)", "loop(0:x)", "spark", wfv1.NodeTypePlugin, wfv1.NodeRunning, 3)
	addNode(wf, "wf-22", "wf.steps[0].loop(0:x)", "loop(0:x)", "spark", wfv1.NodeTypePlugin, wfv1.NodeRunning, 4)
	addNode(wf, "wf-30", "wf.notify", "notify", "slack", wfv1.NodeTypePlugin, wfv1.NodeRunning, 5)
	addNode(wf, "wf-31", "wf.retry", "retry", "", wfv1.NodeTypeRetry, wfv1.NodeRunning, 5)
	nodes := SparkNodes(wf, nil)
	tests := []struct {
		name, arg, want, err string
	}{
		{"by id", "wf-12", "wf-12", ""},
		{"by name", "wf.pi-a", "wf-11", ""},
		{"by display name", "pi-b", "wf-12", ""},
		{"by the full name of one of two with the same display name", "wf.steps[0].loop(0:x)", "wf-22", ""},
		{"ambiguous display name", "loop(0:x)", "", `2 Spark nodes of workflow wf are named "loop(0:x)": give one's full name or id: wf.loop(0:x), wf.steps[0].loop(0:x)`},
		{"missing", "pi-c", "", `workflow wf has no node "pi-c"; its Spark nodes: wf.pi-a, wf.pi-b, wf.loop(0:x), wf.steps[0].loop(0:x)`},
		{"another plugin's node", "notify", "", "node wf.notify of workflow wf is a Plugin node, not a Spark node; its Spark nodes: wf.pi-a"},
		{"a retry node", "wf-31", "", "node wf.retry of workflow wf is a Retry node, not a Spark node"},
		{"the workflow's own node", "wf", "", "node wf of workflow wf is a DAG node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := FindNode(wf, nodes, tt.arg)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("FindNode(%q) = %+v, %v; want error %q", tt.arg, n, err, tt.err)
				}
				return
			}
			if err != nil || n.ID != tt.want {
				t.Fatalf("FindNode(%q) = %q, %v; want %q", tt.arg, n.ID, err, tt.want)
			}
		})
	}
	if _, err := FindNode(wf, nil, "x"); err == nil || !strings.HasSuffix(err.Error(), "it has no Spark nodes") {
		t.Errorf("no Spark nodes: %v", err)
	}
}

// A loop of a thousand items does not make a thousand-name error.
func TestNodeListIsCut(t *testing.T) {
	var nodes []Node
	for i := 0; i < 25; i++ {
		nodes = append(nodes, Node{Name: "wf.n" + string(rune('a'+i))})
	}
	got := sparkNodesAre(nodes)
	if !strings.HasSuffix(got, "wf.nj, and 15 more") || strings.Contains(got, "wf.nk") {
		t.Errorf("%s", got)
	}
}

func TestNoSparkNodes(t *testing.T) {
	wf := testWorkflow()
	if err := noSparkNodes(wf); !strings.Contains(err.Error(), "no Spark nodes yet (phase Running); sparkplug logs -f waits") {
		t.Errorf("running: %v", err)
	}
	wf.Status.Phase = wfv1.WorkflowSucceeded
	if err := noSparkNodes(wf); err.Error() != "workflow wf has no Spark nodes" {
		t.Errorf("finished: %v", err)
	}
}
