package logs

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/step"
)

// The output parameters spark.OutputDriverPod and OutputAttempt name the
// driver of a node's latest attempt, also after that pod is deleted, which
// is how a log that is gone is told from one not written yet;
// OutputHistoryUI and the artifact OutputDriverLog are where a log that
// is gone can still be read.

// Node is one Spark node of a workflow.
type Node struct {
	// ID is Argo's node id, Name its full name (wf.step, wf[0].step),
	// DisplayName the last part (step).
	ID, Name, DisplayName string
	Phase                 wfv1.NodePhase
	StartedAt             time.Time
	// Finished: Argo recorded the node's end; no further attempt starts.
	Finished bool
	// RecordedDriver and RecordedAttempt are the driver and attempt
	// sparkplug last reported for the node (its outputs); empty and 0
	// when it reported none.
	RecordedDriver  string
	RecordedAttempt int
	// HistoryUI and ArchivedLog are the recorded attempt's page on the
	// Spark History Server and its archived log (s3://bucket/key), when
	// the node reported them.
	HistoryUI, ArchivedLog string
}

// SparkNodes are the Spark nodes of wf in the order they started (nodes
// not started yet last, by name). drivers are the workflow's driver pods
// (Drivers): a Plugin node whose template the Workflow does not hold is a
// Spark node when one of them, or the node's outputs, say sparkplug ran it.
func SparkNodes(wf *wfv1.Workflow, drivers map[string][]*corev1.Pod) []Node {
	var out []Node
	for id, n := range wf.Status.Nodes {
		if n.Type != wfv1.NodeTypePlugin {
			continue
		}
		r := recorded(n.Outputs)
		isSpark, known := sparkTemplate(wf, n)
		if !known {
			isSpark = len(drivers[id]) > 0 || r.driver != ""
		}
		if !isSpark {
			continue
		}
		out = append(out, Node{
			ID: id, Name: n.Name, DisplayName: n.DisplayName, Phase: n.Phase,
			StartedAt: n.StartedAt.Time, Finished: n.Fulfilled(),
			RecordedDriver: r.driver, RecordedAttempt: r.attempt, HistoryUI: r.historyUI, ArchivedLog: r.archivedLog,
		})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.StartedAt.IsZero() != b.StartedAt.IsZero() {
			return !a.StartedAt.IsZero()
		}
		if !a.StartedAt.Equal(b.StartedAt) {
			return a.StartedAt.Before(b.StartedAt)
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.ID < b.ID
	})
	return out
}

// sparkTemplate says whether node n's template is a spark step, and
// whether the Workflow holds that template at all: a local template by
// name (in the spec or the stored WorkflowTemplate spec), one of a
// templateRef or of a WorkflowTemplate's scope among the stored templates.
func sparkTemplate(wf *wfv1.Workflow, n wfv1.NodeStatus) (isSpark, known bool) {
	var t *wfv1.Template
	scope, resource := n.GetTemplateScope()
	switch {
	case n.TemplateRef != nil || scope != wfv1.ResourceScopeLocal:
		t = wf.GetStoredTemplate(scope, resource, &n)
	case n.TemplateName != "":
		t = wf.GetTemplateByName(n.TemplateName)
	}
	if t == nil {
		return false, false
	}
	_, ok, err := step.BodyOf(t)
	return ok && err == nil, true
}

type record struct {
	driver                 string
	attempt                int
	historyUI, archivedLog string
}

// recorded reads what a node's outputs say of its latest attempt.
func recorded(o *wfv1.Outputs) record {
	var r record
	if o == nil {
		return r
	}
	for _, p := range o.Parameters {
		if p.Value == nil {
			continue
		}
		switch p.Name {
		case spark.OutputDriverPod:
			r.driver = p.Value.String()
		case spark.OutputAttempt:
			r.attempt, _ = strconv.Atoi(p.Value.String())
		case spark.OutputHistoryUI:
			r.historyUI = p.Value.String()
		}
	}
	for _, a := range o.Artifacts {
		if a.Name == spark.OutputDriverLog && a.S3 != nil && a.S3.Key != "" {
			r.archivedLog = "s3://" + a.S3.Bucket + "/" + a.S3.Key
		}
	}
	if r.driver != "" && r.attempt < 1 {
		r.attempt = 1
	}
	return r
}

// FindNode is the Spark node arg names, in this order: Argo's node id, the
// node's name (wf.step, wf[0].step), its display name (step). A display
// name that several Spark nodes share is ambiguous; the error lists them.
// A node that exists but is no Spark node, and one that does not exist,
// are errors that list the workflow's Spark nodes.
func FindNode(wf *wfv1.Workflow, nodes []Node, arg string) (Node, error) {
	for _, n := range nodes {
		if n.ID == arg || n.Name == arg {
			return n, nil
		}
	}
	var same []Node
	for _, n := range nodes {
		if n.DisplayName == arg {
			same = append(same, n)
		}
	}
	switch {
	case len(same) == 1:
		return same[0], nil
	case len(same) > 1:
		return Node{}, fmt.Errorf("%d Spark nodes of workflow %s are named %q: give one's full name or id: %s",
			len(same), wf.Name, arg, nameList(same))
	}
	for id, n := range wf.Status.Nodes {
		if id == arg || n.Name == arg || n.DisplayName == arg {
			return Node{}, fmt.Errorf("node %s of workflow %s is a %s node, not a Spark node; %s",
				n.Name, wf.Name, n.Type, sparkNodesAre(nodes))
		}
	}
	return Node{}, fmt.Errorf("workflow %s has no node %q; %s", wf.Name, arg, sparkNodesAre(nodes))
}

func sparkNodesAre(nodes []Node) string {
	if len(nodes) == 0 {
		return "it has no Spark nodes"
	}
	return "its Spark nodes: " + nameList(nodes)
}

// maxListed is how many node names an error lists: a loop over a
// thousand items must not make a thousand-name line.
const maxListed = 10

func nameList(nodes []Node) string {
	var names []string
	for i, n := range nodes {
		if i == maxListed {
			names = append(names, fmt.Sprintf("and %d more", len(nodes)-maxListed))
			break
		}
		names = append(names, n.Name)
	}
	return strings.Join(names, ", ")
}

// noSparkNodes is the error of a workflow without Spark nodes.
func noSparkNodes(wf *wfv1.Workflow) error {
	if !wf.Status.Phase.Completed() {
		return fmt.Errorf("workflow %s has no Spark nodes yet (phase %s); sparkplug logs -f waits for them", wf.Name, phaseOf(wf))
	}
	return fmt.Errorf("workflow %s has no Spark nodes", wf.Name)
}

func phaseOf(wf *wfv1.Workflow) string {
	if wf.Status.Phase == "" {
		return "not started"
	}
	return string(wf.Status.Phase)
}

// driverNodeID is the node a driver pod was launched for.
func driverNodeID(p *corev1.Pod) string { return p.Annotations[spark.AnnotationNodeID] }
