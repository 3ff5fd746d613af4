package run

import (
	"fmt"
	"io"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/plugin/get"
	"github.com/sparkplug-io/sparkplug/plugin/logs"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// maxMessage bounds a message in the report: sparkplug's own are shorter,
// but a Workflow's message is whatever its controller wrote.
const maxMessage = 1024

// Node is one Spark node of the report.
type Node struct {
	// ID is Argo's node id; DisplayName its last name part (step).
	ID, DisplayName string
	Phase           wfv1.NodePhase
	Message         string
	// ApplicationID and DriverPod are the node's outputs of the same
	// names, empty when it reported none.
	ApplicationID, DriverPod string
}

// SparkNodes are wf's Spark nodes (logs.SparkNodes) in the order they
// started, with their phase, message and outputs.
func SparkNodes(wf *wfv1.Workflow) []Node {
	var out []Node
	for _, n := range logs.SparkNodes(wf, nil) {
		s := wf.Status.Nodes[n.ID]
		out = append(out, Node{
			ID: n.ID, DisplayName: n.DisplayName, Phase: s.Phase, Message: s.Message,
			ApplicationID: get.Parameter(s.Outputs, spark.OutputApplicationID),
			DriverPod:     get.Parameter(s.Outputs, spark.OutputDriverPod),
		})
	}
	return out
}

// line is the node in one line: name, phase, message, outputs.
func (n Node) line() string {
	phase := string(n.Phase)
	if phase == "" {
		phase = "Pending"
	}
	parts := []string{n.DisplayName, phase}
	if n.Message != "" {
		parts = append(parts, oneLine(n.Message))
	}
	if n.ApplicationID != "" {
		parts = append(parts, spark.OutputApplicationID+"="+n.ApplicationID)
	}
	if n.DriverPod != "" {
		parts = append(parts, spark.OutputDriverPod+"="+n.DriverPod)
	}
	return strings.Join(parts, "  ")
}

// Report writes how wf ended: one line for the workflow, one per Spark
// node.
func Report(w io.Writer, wf *wfv1.Workflow) error {
	if _, err := fmt.Fprintf(w, "workflow %s %s\n", wf.Name, ended(wf)); err != nil {
		return err
	}
	nodes := SparkNodes(wf)
	if len(nodes) == 0 {
		_, err := fmt.Fprintln(w, "  (no Spark node)")
		return err
	}
	for _, n := range nodes {
		if _, err := fmt.Fprintf(w, "  %s\n", n.line()); err != nil {
			return err
		}
	}
	return nil
}

// ended is the workflow's phase, how long it took and its message.
func ended(wf *wfv1.Workflow) string {
	s := string(wf.Status.Phase)
	if s == "" {
		s = "not started"
	}
	if !wf.Status.StartedAt.IsZero() && !wf.Status.FinishedAt.IsZero() {
		s += " in " + wf.Status.FinishedAt.Sub(wf.Status.StartedAt.Time).Round(time.Second).String()
	}
	if wf.Status.Message != "" {
		s += ": " + oneLine(wf.Status.Message)
	}
	return s
}

func oneLine(s string) string {
	return spec.Truncate(strings.Join(strings.Fields(s), " "), maxMessage)
}

// ResultAPIVersion and ResultKind name the structure of `sparkplug run
// -o json|yaml`. Fields are only ever added to it.
const (
	ResultAPIVersion = get.APIVersion
	ResultKind       = "SparkRun"
)

// Result is how a Workflow ended (or was last seen), for programs: the
// workflow's phase, times and message, and its Spark steps as sparkplug
// get prints them (without the drivers' status, which run does not
// read).
type Result struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Workflow   string `json:"workflow"`
	// Phase is the Workflow's phase; empty when it never started.
	Phase      string     `json:"phase"`
	Message    string     `json:"message,omitempty"`
	StartedAt  string     `json:"startedAt,omitempty"`
	FinishedAt string     `json:"finishedAt,omitempty"`
	Steps      []get.Step `json:"steps"`
}

// NewResult is wf's Result.
func NewResult(wf *wfv1.Workflow) Result {
	steps := get.Steps(wf)
	if steps == nil {
		steps = []get.Step{}
	}
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	return Result{
		APIVersion: ResultAPIVersion, Kind: ResultKind,
		Namespace: wf.Namespace, Workflow: wf.Name, Phase: string(wf.Status.Phase), Message: oneLine(wf.Status.Message),
		StartedAt: stamp(wf.Status.StartedAt.Time), FinishedAt: stamp(wf.Status.FinishedAt.Time),
		Steps: steps,
	}
}
