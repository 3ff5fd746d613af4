package nodestatus

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

var rules = Rules{ProgressInterval: 30 * time.Second, Hold: 10 * time.Second, InterimHold: 10 * time.Second}

// taskSet is workflow wf's TaskSet (uid u1) listing the nodes given, with
// entries (status.nodes) as given.
func taskSet(listed []string, entries map[string]wfv1.NodeResult) *wfv1.WorkflowTaskSet {
	ts := &wfv1.WorkflowTaskSet{ObjectMeta: metav1.ObjectMeta{Name: "wf", Namespace: "ns", ResourceVersion: "7",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Name: "wf", UID: "u1"}}}}
	ts.Spec.Tasks = map[string]wfv1.Template{}
	for _, id := range listed {
		ts.Spec.Tasks[id] = wfv1.Template{Name: "spark"}
	}
	ts.Status.Nodes = map[string]wfv1.NodeResult{}
	for id, r := range entries {
		ts.Status.Nodes[id] = r
	}
	return ts
}

// workflow is the running Workflow wf (uid u1), showing the nodes given
// in their phases.
func workflow(nodes map[string]wfv1.NodePhase) *wfv1.Workflow {
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "wf", Namespace: "ns", UID: "u1"}}
	wf.Status.Phase = wfv1.WorkflowRunning
	wf.Status.Nodes = wfv1.Nodes{}
	for id, p := range nodes {
		wf.Status.Nodes[id] = wfv1.NodeStatus{ID: id, Name: "wf." + id, Type: wfv1.NodeTypePlugin, Phase: p}
	}
	return wf
}

func result(p wfv1.NodePhase, msg string) wfv1.NodeResult {
	return wfv1.NodeResult{Phase: p, Message: msg}
}

// recording is res recording driver uid (output driver-uid), as the act
// side's results do once a driver was launched.
func recording(res wfv1.NodeResult, uid string) wfv1.NodeResult {
	res.Outputs = &wfv1.Outputs{Parameters: []wfv1.Parameter{{Name: spark.OutputDriverUID, Value: wfv1.AnyStringPtr(uid)}}}
	return res
}

func freshMemory() *Memory {
	return &Memory{Terminal: map[string]bool{}, Vanished: map[string]time.Time{}}
}

func TestPick(t *testing.T) {
	running := result(wfv1.NodeRunning, "RUNNING 1/1 executors, 30s")
	open := map[string]wfv1.NodePhase{"n1": wfv1.NodeRunning}
	for _, row := range []struct {
		name    string
		ts      *wfv1.WorkflowTaskSet
		wf      *wfv1.Workflow
		want    map[string]Want
		mem     *Memory
		now     time.Time
		batch   []string // the nodes written, sorted
		drop    []string
		memWant func(t *testing.T, m *Memory)
	}{
		{name: "a listed node without an entry is written",
			ts: taskSet([]string{"n1"}, nil), wf: workflow(open),
			want: map[string]Want{"n1": {Result: running}}, now: t0,
			batch: []string{"n1"}},
		{name: "an unlisted node is dropped, never written",
			ts: taskSet([]string{"n1"}, nil), wf: workflow(open),
			want: map[string]Want{"n9": {Result: running}}, now: t0,
			drop: []string{"n9"}},
		{name: "an unlisted node's hold is forgotten",
			ts: taskSet(nil, nil), wf: workflow(open),
			want: map[string]Want{"n1": {Result: running}},
			mem:  &Memory{Terminal: map[string]bool{"n1": true}, Vanished: map[string]time.Time{"n1": t0}}, now: t0.Add(time.Second),
			drop: []string{"n1"},
			memWant: func(t *testing.T, m *Memory) {
				if _, ok := m.Vanished["n1"]; ok {
					t.Error("an unlisted node is still held")
				}
			}},
		{name: "a terminal entry, whoever wrote it, is never overwritten: the node is dropped",
			ts: taskSet([]string{"n1"}, map[string]wfv1.NodeResult{"n1": result(wfv1.NodeFailed, "the agent's transport error")}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: result(wfv1.NodeSucceeded, "COMPLETED")}}, now: t0,
			drop: []string{"n1"},
			memWant: func(t *testing.T, m *Memory) {
				if !m.Terminal["n1"] {
					t.Error("the terminal entry is not remembered")
				}
			}},
		{name: "a node the Workflow shows fulfilled is skipped, not dropped",
			ts: taskSet([]string{"n1"}, nil), wf: workflow(map[string]wfv1.NodePhase{"n1": wfv1.NodeFailed}),
			want: map[string]Want{"n1": {Result: running}}, now: t0},
		{name: "a result without a phase is never written",
			ts: taskSet([]string{"n1"}, nil), wf: workflow(open),
			want: map[string]Want{"n1": {Result: wfv1.NodeResult{Message: "no phase"}}}, now: t0},
		{name: "the same result is not written again",
			ts: taskSet([]string{"n1"}, map[string]wfv1.NodeResult{"n1": running}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: running}}, now: t0},
		{name: "a change of the message alone waits out the progress interval",
			ts: taskSet([]string{"n1"}, map[string]wfv1.NodeResult{"n1": running}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: result(wfv1.NodeRunning, "RUNNING 1/1 executors, 1m"), Written: t0.Add(-29 * time.Second)}}, now: t0},
		{name: "a new state in the same phase is written at once (RUNNING to PENDING_RERUN)",
			ts: taskSet([]string{"n1"}, map[string]wfv1.NodeResult{"n1": running}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: result(wfv1.NodeRunning, "PENDING_RERUN: attempt 2 waits in LocalQueue lq for Kueue"), Written: t0.Add(-time.Second)}}, now: t0,
			batch: []string{"n1"}},
		{name: "a Pending node's new message, its wait written already, is written at once (why it waits)",
			ts: taskSet([]string{"n1"}, map[string]wfv1.NodeResult{"n1": result(wfv1.NodePending, "QUEUED: waiting in LocalQueue lq for Kueue")}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: result(wfv1.NodePending, "QUEUED: waiting in LocalQueue lq for Kueue to admit Workload w: insufficient quota"),
				Written: t0.Add(-time.Second), Since: t0.Add(-time.Minute)}}, now: t0,
			batch: []string{"n1"}},
		{name: "a start's wait (SUBMITTED) younger than InterimHold is held",
			ts: taskSet([]string{"n1"}, nil), wf: workflow(open),
			want: map[string]Want{"n1": {Result: result(wfv1.NodePending, "SUBMITTED: waiting for the driver container to start"), Since: t0.Add(-9 * time.Second)}}, now: t0},
		{name: "a start's wait (QUEUED) younger than InterimHold is held",
			ts: taskSet([]string{"n1"}, nil), wf: workflow(open),
			want: map[string]Want{"n1": {Result: result(wfv1.NodePending, "QUEUED: waiting in LocalQueue lq for Kueue to admit Workload w"), Since: t0.Add(-9 * time.Second)}}, now: t0},
		{name: "a start's wait is written once it lasted InterimHold",
			ts: taskSet([]string{"n1"}, nil), wf: workflow(open),
			want: map[string]Want{"n1": {Result: result(wfv1.NodePending, "SUBMITTED: driver pending (ContainerCreating)"), Since: t0.Add(-10 * time.Second)}}, now: t0,
			batch: []string{"n1"}},
		{name: "the next attempt's start, after PENDING_RERUN, recording no driver yet, is held like the first's",
			ts: taskSet([]string{"n1"}, map[string]wfv1.NodeResult{"n1": result(wfv1.NodeRunning, "PENDING_RERUN: starting attempt 2/2 after: FAILED")}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: result(wfv1.NodePending, "SUBMITTED: waiting for the driver pod to be scheduled (attempt 2/2)"), Written: t0.Add(-time.Minute), Since: t0}}, now: t0},
		{name: "a start's wait recording a driver uid the node has no entry for is written at once (the record is never held)",
			ts: taskSet([]string{"n1"}, nil), wf: workflow(open),
			want: map[string]Want{"n1": {Result: recording(result(wfv1.NodePending, "SUBMITTED: waiting for the driver container to start"), "d1"), Since: t0}}, now: t0,
			batch: []string{"n1"}},
		{name: "a start's wait recording a uid the entry does not record is written at once (a wait written without one)",
			ts: taskSet([]string{"n1"}, map[string]wfv1.NodeResult{"n1": result(wfv1.NodePending, "QUEUED: waiting in LocalQueue lq for Kueue")}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: recording(result(wfv1.NodePending, "SUBMITTED: waiting for the driver pod to be scheduled"), "d1"), Written: t0.Add(-time.Second), Since: t0}}, now: t0,
			batch: []string{"n1"}},
		{name: "the next attempt's start recording its new driver's uid is written at once",
			ts: taskSet([]string{"n1"}, map[string]wfv1.NodeResult{"n1": recording(result(wfv1.NodeRunning, "PENDING_RERUN: starting attempt 2/2 after: FAILED"), "d1")}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: recording(result(wfv1.NodePending, "SUBMITTED: waiting for the driver pod to be scheduled (attempt 2/2)"), "d2"), Written: t0.Add(-time.Minute), Since: t0}}, now: t0,
			batch: []string{"n1"}},
		{name: "a start's new reason, its driver's uid recorded already, is held like any wait",
			ts: taskSet([]string{"n1"}, map[string]wfv1.NodeResult{"n1": recording(result(wfv1.NodePending, "SUBMITTED: waiting for the driver container to start"), "d1")}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: recording(result(wfv1.NodePending, "SUBMITTED: driver pending (ContainerCreating)"), "d1"), Written: t0.Add(-2 * time.Second), Since: t0.Add(-2 * time.Second)}}, now: t0},
		{name: "a log's upload, its driver's uid recorded already, is held",
			ts: taskSet([]string{"n1"}, map[string]wfv1.NodeResult{"n1": recording(running, "d1")}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: recording(result(wfv1.NodeRunning, "COMPLETED; archiving the driver log"), "d1"), Written: t0.Add(-time.Minute), Since: t0.Add(-9 * time.Second)}}, now: t0},
		{name: "a driver that ended while its log is stored (Running COMPLETED) is held like a start's wait",
			ts: taskSet([]string{"n1"}, map[string]wfv1.NodeResult{"n1": running}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: result(wfv1.NodeRunning, "COMPLETED; archiving the driver log"), Written: t0.Add(-time.Minute), Since: t0.Add(-9 * time.Second)}}, now: t0},
		{name: "an upload that outlasted the hold is written",
			ts: taskSet([]string{"n1"}, map[string]wfv1.NodeResult{"n1": running}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: result(wfv1.NodeRunning, "FAILED: driver exited 1 (Error); archiving the driver log"), Written: t0.Add(-time.Minute), Since: t0.Add(-10 * time.Second)}}, now: t0,
			batch: []string{"n1"}},
		{name: "a Pending state that is not a start's wait is written at once (a refused submission's reason)",
			ts: taskSet([]string{"n1"}, nil), wf: workflow(open),
			want: map[string]Want{"n1": {Result: result(wfv1.NodePending, "SUBMISSION_FAILED: retry 1/2 soon: admission webhook denied it"), Since: t0}}, now: t0,
			batch: []string{"n1"}},
		{name: "a change of the message alone is written once the progress interval passed",
			ts: taskSet([]string{"n1"}, map[string]wfv1.NodeResult{"n1": running}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: result(wfv1.NodeRunning, "RUNNING 1/1 executors, 1m"), Written: t0.Add(-30 * time.Second)}}, now: t0,
			batch: []string{"n1"}},
		{name: "a change of the outputs in the same phase is written at once (a new driver, an exit code)",
			ts: taskSet([]string{"n1"}, map[string]wfv1.NodeResult{"n1": running}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: wfv1.NodeResult{Phase: wfv1.NodeRunning, Message: running.Message,
				Outputs: &wfv1.Outputs{Parameters: []wfv1.Parameter{{Name: "driver-pod", Value: wfv1.AnyStringPtr("wf-1a2b-a2-driver")}}}},
				Written: t0.Add(-time.Second)}}, now: t0,
			batch: []string{"n1"}},
		{name: "a change of phase is written at once",
			ts: taskSet([]string{"n1"}, map[string]wfv1.NodeResult{"n1": result(wfv1.NodePending, "SUBMITTED")}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: running, Written: t0.Add(-time.Second)}}, now: t0,
			batch: []string{"n1"}},
		{name: "a final result is written at once",
			ts: taskSet([]string{"n1"}, map[string]wfv1.NodeResult{"n1": running}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: result(wfv1.NodeSucceeded, "COMPLETED"), Written: t0.Add(-time.Second)}}, now: t0,
			batch: []string{"n1"}},
		{name: "a vanished terminal entry of a listed node is held: first seen",
			ts: taskSet([]string{"n1"}, nil), wf: workflow(open),
			want: map[string]Want{"n1": {Result: result(wfv1.NodeSucceeded, "COMPLETED")}},
			mem:  &Memory{Terminal: map[string]bool{"n1": true}, Vanished: map[string]time.Time{}}, now: t0,
			memWant: func(t *testing.T, m *Memory) {
				if !m.Vanished["n1"].Equal(t0) {
					t.Errorf("vanished since %v, want %v", m.Vanished["n1"], t0)
				}
			}},
		{name: "a vanished terminal entry of a listed node is held: within Hold",
			ts: taskSet([]string{"n1"}, nil), wf: workflow(open),
			want: map[string]Want{"n1": {Result: result(wfv1.NodeSucceeded, "COMPLETED")}},
			mem:  &Memory{Terminal: map[string]bool{"n1": true}, Vanished: map[string]time.Time{"n1": t0}}, now: t0.Add(9 * time.Second)},
		{name: "a vanished terminal entry past Hold, the Workflow showing the node open: written again",
			ts: taskSet([]string{"n1"}, nil), wf: workflow(open),
			want: map[string]Want{"n1": {Result: result(wfv1.NodeSucceeded, "COMPLETED")}},
			mem:  &Memory{Terminal: map[string]bool{"n1": true}, Vanished: map[string]time.Time{"n1": t0}}, now: t0.Add(10 * time.Second),
			batch: []string{"n1"}},
		{name: "a vanished terminal entry past Hold, the Workflow showing the node fulfilled: left alone",
			ts: taskSet([]string{"n1"}, nil), wf: workflow(map[string]wfv1.NodePhase{"n1": wfv1.NodeSucceeded}),
			want: map[string]Want{"n1": {Result: result(wfv1.NodeSucceeded, "COMPLETED")}},
			mem:  &Memory{Terminal: map[string]bool{"n1": true}, Vanished: map[string]time.Time{"n1": t0}}, now: t0.Add(time.Minute)},
		{name: "an entry back ends the hold",
			ts: taskSet([]string{"n1"}, map[string]wfv1.NodeResult{"n1": result(wfv1.NodePending, "SUBMITTED")}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: running}},
			mem:  &Memory{Terminal: map[string]bool{"n1": true}, Vanished: map[string]time.Time{"n1": t0}}, now: t0.Add(time.Second),
			batch: []string{"n1"},
			memWant: func(t *testing.T, m *Memory) {
				if _, ok := m.Vanished["n1"]; ok {
					t.Error("still held with an entry back")
				}
			}},
		{name: "nodes are decided each on its own",
			ts: taskSet([]string{"n1", "n2", "n3"}, map[string]wfv1.NodeResult{"n2": result(wfv1.NodeSucceeded, "Argo's")}), wf: workflow(open),
			want: map[string]Want{"n1": {Result: running}, "n2": {Result: running}, "n3": {Result: running}, "n4": {Result: running}}, now: t0,
			batch: []string{"n1", "n3"}, drop: []string{"n2", "n4"}},
	} {
		t.Run(row.name, func(t *testing.T) {
			mem := row.mem
			if mem == nil {
				mem = freshMemory()
			}
			v := Pick(row.ts, row.wf, row.want, mem, rules, row.now)
			var batch []string
			for id, res := range v.Batch {
				batch = append(batch, id)
				if !Same(res, row.want[id].Result) {
					t.Errorf("node %s: writes %+v, want the result wanted %+v", id, res, row.want[id].Result)
				}
			}
			slices.Sort(batch)
			drop := slices.Sorted(slices.Values(v.Drop))
			if !slices.Equal(batch, row.batch) {
				t.Errorf("batch %v, want %v", batch, row.batch)
			}
			if !slices.Equal(drop, row.drop) {
				t.Errorf("drop %v, want %v", drop, row.drop)
			}
			if row.memWant != nil {
				row.memWant(t, mem)
			}
		})
	}
}

func TestMayWrite(t *testing.T) {
	now := metav1.NewTime(t0)
	for _, row := range []struct {
		name string
		ts   func(*wfv1.WorkflowTaskSet) *wfv1.WorkflowTaskSet
		wf   func(*wfv1.Workflow) *wfv1.Workflow
		why  string // "" is allowed
	}{
		{"this workflow's, running", nil, nil, ""},
		{"no task set", func(*wfv1.WorkflowTaskSet) *wfv1.WorkflowTaskSet { return nil }, nil, "no task set"},
		{"another workflow's task set", func(ts *wfv1.WorkflowTaskSet) *wfv1.WorkflowTaskSet {
			ts.OwnerReferences[0].UID = "u2"
			return ts
		}, nil, "not this workflow's"},
		{"a task set owned by something else than a Workflow", func(ts *wfv1.WorkflowTaskSet) *wfv1.WorkflowTaskSet {
			ts.OwnerReferences[0].Kind = "ConfigMap"
			return ts
		}, nil, "not this workflow's"},
		{"the task set is completed", func(ts *wfv1.WorkflowTaskSet) *wfv1.WorkflowTaskSet {
			ts.Labels = map[string]string{spark.ArgoLabelCompleted: "true"}
			return ts
		}, nil, "task set is completed"},
		{"no workflow", nil, func(*wfv1.Workflow) *wfv1.Workflow { return nil }, "not known"},
		{"another workflow", nil, func(wf *wfv1.Workflow) *wfv1.Workflow {
			wf.UID = "u2"
			return wf
		}, "not known"},
		{"the workflow completed", nil, func(wf *wfv1.Workflow) *wfv1.Workflow {
			wf.Status.Phase = wfv1.WorkflowFailed
			return wf
		}, "completed"},
		{"the workflow is shut down", nil, func(wf *wfv1.Workflow) *wfv1.Workflow {
			wf.Spec.Shutdown = wfv1.ShutdownStrategyStop
			return wf
		}, "shut down"},
		{"the workflow is being deleted", nil, func(wf *wfv1.Workflow) *wfv1.Workflow {
			wf.DeletionTimestamp = &now
			return wf
		}, "being deleted"},
	} {
		t.Run(row.name, func(t *testing.T) {
			ts, wf := taskSet([]string{"n1"}, nil), workflow(nil)
			if row.ts != nil {
				ts = row.ts(ts)
			}
			if row.wf != nil {
				wf = row.wf(wf)
			}
			ok, why := MayWrite(ts, wf, "u1")
			if ok != (row.why == "") || !strings.Contains(why, row.why) {
				t.Errorf("MayWrite %v %q, want %v %q", ok, why, row.why == "", row.why)
			}
		})
	}
}

// A batch is one merge patch, guarded by the view's resourceVersion, with
// every field of an entry written, null when empty, so that nothing of an
// earlier entry stays.
func TestPatch(t *testing.T) {
	code := "0"
	raw, err := Patch("42", map[string]wfv1.NodeResult{
		"n1": {Phase: wfv1.NodeRunning},
		"n2": {Phase: wfv1.NodeSucceeded, Message: "COMPLETED", Outputs: &wfv1.Outputs{ExitCode: &code}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Metadata map[string]any `json:"metadata"`
		Status   struct {
			Nodes map[string]map[string]any `json:"nodes"`
		} `json:"status"`
		Spec any `json:"spec"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Metadata) != 1 || p.Metadata["resourceVersion"] != "42" {
		t.Errorf("metadata %v, want the resourceVersion 42 alone", p.Metadata)
	}
	if p.Spec != nil || strings.Contains(string(raw), `"labels"`) {
		t.Errorf("the patch touches spec or labels: %s", raw)
	}
	n1, ok := p.Status.Nodes["n1"]
	for _, field := range []string{"message", "outputs", "progress"} {
		if v, has := n1[field]; !ok || !has || v != nil {
			t.Errorf("n1's %s is %v (present %v), want null", field, v, has)
		}
	}
	if n1["phase"] != "Running" {
		t.Errorf("n1's phase %v", n1["phase"])
	}
	n2 := p.Status.Nodes["n2"]
	if n2["phase"] != "Succeeded" || n2["message"] != "COMPLETED" || n2["outputs"] == nil {
		t.Errorf("n2 %v, want its phase, message and outputs", n2)
	}
	if len(p.Status.Nodes) != 2 {
		t.Errorf("nodes %v, want n1 and n2", p.Status.Nodes)
	}
}

func TestSame(t *testing.T) {
	one, two := "1", "2"
	a := wfv1.NodeResult{Phase: wfv1.NodeFailed, Message: "FAILED", Outputs: &wfv1.Outputs{ExitCode: &one}}
	for _, tc := range []struct {
		name string
		b    wfv1.NodeResult
		same bool
	}{
		{"equal", wfv1.NodeResult{Phase: wfv1.NodeFailed, Message: "FAILED", Outputs: &wfv1.Outputs{ExitCode: &one}}, true},
		{"another phase", wfv1.NodeResult{Phase: wfv1.NodeSucceeded, Message: "FAILED", Outputs: &wfv1.Outputs{ExitCode: &one}}, false},
		{"another message", wfv1.NodeResult{Phase: wfv1.NodeFailed, Message: "FAILED!", Outputs: &wfv1.Outputs{ExitCode: &one}}, false},
		{"other outputs", wfv1.NodeResult{Phase: wfv1.NodeFailed, Message: "FAILED", Outputs: &wfv1.Outputs{ExitCode: &two}}, false},
		{"no outputs", wfv1.NodeResult{Phase: wfv1.NodeFailed, Message: "FAILED"}, false},
	} {
		if got := Same(a, tc.b); got != tc.same {
			t.Errorf("%s: Same %v, want %v", tc.name, got, tc.same)
		}
	}
}
