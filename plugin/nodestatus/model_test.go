package nodestatus_test

// A deterministic model of Argo's agent and controller and sparkplug's
// sidecar around one workflow's WorkflowTaskSet, with explicit cache
// versions, that drives the real decision (decide.Decide) and the real
// writer (nodestatus.Writer, whose patches land on the model's TaskSet as
// resourceVersion-guarded merge patches). It replays the interleavings
// the node-identity design names and searches bounded random ones,
// checking after every step:
//   - no run is reported on two nodes, and each node shows only its own
//     runs (an application id names its node);
//   - no node the Workflow shows finished is reopened or flipped in the
//     same incarnation;
//   - once the faults stop, every node completes with its own run's
//     result.
// The model's agent and controller follow the facts A1-A6 and C1-C9 of
// the design (../shared/design/node-identity.md in the steering repo,
// summarised in this repository's docs/node-identity.md); Spark itself is
// simulated by driver pods whose status the model sets.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	argov1 "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/typed/workflow/v1alpha1"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/nodestatus"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

const modelWF, modelUID = "twins", "uid-twins"

var tsResource = schema.GroupResource{Group: "argoproj.io", Resource: "workflowtasksets"}

// taskSet is the TaskSet as the API server holds it.
type taskSet struct {
	uid       string
	rv        int
	tasks     map[string]bool
	status    map[string]wfv1.NodeResult
	completed bool
}

func (ts *taskSet) object() *wfv1.WorkflowTaskSet {
	o := &wfv1.WorkflowTaskSet{ObjectMeta: metav1.ObjectMeta{Name: modelWF, Namespace: "ns", UID: types.UID(ts.uid), ResourceVersion: strconv.Itoa(ts.rv),
		OwnerReferences: []metav1.OwnerReference{{Kind: "Workflow", Name: modelWF, UID: modelUID}}}}
	o.Spec.Tasks = map[string]wfv1.Template{}
	for id := range ts.tasks {
		o.Spec.Tasks[id] = wfv1.Template{Name: "twin"}
	}
	o.Status.Nodes = map[string]wfv1.NodeResult{}
	for id, r := range ts.status {
		o.Status.Nodes[id] = *r.DeepCopy()
	}
	if ts.completed {
		o.Labels = map[string]string{spark.ArgoLabelCompleted: "true"}
	}
	return o
}

// workflow is the Workflow's status as persisted (or as the controller
// holds it in memory).
type workflow struct {
	version   int
	startedAt time.Time
	nodes     map[string]wfv1.NodeStatus
	completed bool
}

func (w workflow) copy() workflow {
	c := w
	c.nodes = map[string]wfv1.NodeStatus{}
	for id, n := range w.nodes {
		c.nodes[id] = *n.DeepCopy()
	}
	return c
}

func (w workflow) object() *wfv1.Workflow {
	o := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: modelWF, Namespace: "ns", UID: modelUID}}
	o.Status.StartedAt = metav1.NewTime(w.startedAt)
	o.Status.Phase = wfv1.WorkflowRunning
	if w.completed {
		o.Status.Phase = wfv1.WorkflowSucceeded
	}
	o.Status.Nodes = wfv1.Nodes{}
	for id, n := range w.nodes {
		o.Status.Nodes[id] = *n.DeepCopy()
	}
	return o
}

// model is one run of the model.
type model struct {
	t    testing.TB
	rng  *rand.Rand
	now  time.Time
	body *spec.SparkApplicationSpec
	// nodes are the workflow's Spark nodes, identical twins; fail are the
	// nodes whose first incarnation's driver fails.
	nodes []string
	fail  map[string]bool
	trace []string

	ts     *taskSet
	wf     workflow // persisted
	ctrl   workflow // the controller's memory
	ctrlUp bool
	pods   map[string]*corev1.Pod

	agentUp bool
	asked   map[string]bool

	// the sidecar
	tsView   *wfv1.WorkflowTaskSet
	wfView   *wfv1.Workflow
	writer   *nodestatus.Writer
	loseNext bool // the next patch lands but its response is lost

	// checks
	finished map[string]wfv1.NodeStatus // the first final status per node and incarnation
	// naive: the sidecar answers the agent by template, as inference did
	naive bool
	// agentFailed are the nodes the agent failed after transport errors.
	agentFailed map[string]bool
	// c4: the controller never removes entries or tasks (C4: a large,
	// compressed or offloaded workflow on Argo v3.6 and v4.0.5): finished
	// nodes stay listed with their final entries, applied again at every
	// operate.
	c4 bool
}

func newModel(t testing.TB, seed int64, nodes int, naive bool) *model {
	body, err := spec.Parse([]byte(`{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar"}`))
	if err != nil {
		t.Fatal(err)
	}
	m := &model{t: t, rng: rand.New(rand.NewSource(seed)), now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), body: body,
		fail: map[string]bool{}, pods: map[string]*corev1.Pod{}, asked: map[string]bool{}, ctrlUp: true, agentUp: true,
		finished: map[string]wfv1.NodeStatus{}, naive: naive, agentFailed: map[string]bool{}}
	m.wf = workflow{startedAt: m.now, nodes: map[string]wfv1.NodeStatus{}}
	m.ts = &taskSet{uid: "ts-1", rv: 1, tasks: map[string]bool{}, status: map[string]wfv1.NodeResult{}}
	for i := range nodes {
		id := fmt.Sprintf("twins-%d", 1000+i)
		m.nodes = append(m.nodes, id)
		m.wf.nodes[id] = wfv1.NodeStatus{ID: id, Name: fmt.Sprintf("twins.twin(%d:x)", i), Type: wfv1.NodeTypePlugin, Phase: wfv1.NodePending}
		m.ts.tasks[id] = true
	}
	m.ctrl = m.wf.copy()
	m.sidecarStart()
	return m
}

func (m *model) logf(format string, args ...any) {
	m.trace = append(m.trace, m.now.Format("15:04:05")+" "+fmt.Sprintf(format, args...))
}

func (m *model) incarnation() string { return m.wf.startedAt.UTC().Format(time.RFC3339) }

// The sidecar.

func (m *model) sidecarStart() {
	m.tsView, m.wfView = m.ts.object(), m.wf.object()
	opts := nodestatus.DefaultOptions()
	opts.Now = func() time.Time { return m.now }
	m.writer = nodestatus.New(modelClient{m: m}, modelWF, modelUID, func() *wfv1.WorkflowTaskSet { return m.tsView },
		func() *wfv1.Workflow { return m.wfView }, opts, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
}

func podName(node, inc string, attempt int) string {
	return node + "@" + inc + "#" + strconv.Itoa(attempt)
}

func appOf(pod string) string { return "app:" + pod }

// reconcile is the sidecar's pass over one node, with the real decision.
func (m *model) reconcile(node string) {
	if _, listed := m.tsView.Spec.Tasks[node]; !listed {
		return
	}
	if ok, _ := nodestatus.MayWrite(m.tsView, m.wfView, modelUID); !ok {
		return
	}
	inc := m.wfView.Status.StartedAt.UTC().Format(time.RFC3339)
	s := &decide.Snapshot{Now: m.now, NodeID: node}
	s.InLoop, s.LoopKnown = scope.InLoop(m.wfView.Status.Nodes, node)
	if e, ok := m.tsView.Status.Nodes[node]; ok {
		s.EntryPhase = state.Phase(e.Phase)
	}
	if n, ok := m.wfView.Status.Nodes[node]; ok && n.Fulfilled() {
		s.Fulfilled = true
	}
	if p := m.pods[podName(node, inc, 1)]; p != nil {
		s.Run = &decide.Run{Attempts: []*corev1.Pod{p}}
	}
	pl := decide.Decide(s, decide.Policy{Body: m.body, NotFoundGrace: 30 * time.Second})
	if pl.Abandon {
		p := s.Run.Head()
		p.Status.Phase = corev1.PodFailed
		p.DeletionTimestamp = &metav1.Time{Time: m.now}
		m.logf("sidecar abandons %s", p.Name)
	}
	if pl.Launch == 1 {
		name := podName(node, inc, 1)
		if _, ok := m.pods[name]; !ok {
			m.pods[name] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(m.now),
				Labels:      map[string]string{spark.LabelAttempt: "1", spark.LabelAppSelector: appOf(name)},
				Annotations: map[string]string{spark.AnnotationNodeID: node, spark.AnnotationIncarnation: inc}},
				Status: corev1.PodStatus{Phase: corev1.PodPending}}
			m.logf("sidecar launches %s", name)
		}
	}
	if pl.Report {
		m.writer.Set(node, inc, resultOf(pl.Outcome, pl.Driver))
	}
}

func resultOf(o state.Outcome, driver *corev1.Pod) wfv1.NodeResult {
	r := wfv1.NodeResult{Phase: wfv1.NodePhase(o.Phase), Message: o.Message()}
	if driver != nil {
		app := driver.Labels[spark.LabelAppSelector]
		r.Outputs = &wfv1.Outputs{Result: &app, Parameters: []wfv1.Parameter{{Name: "application-id", Value: wfv1.AnyStringPtr(app)}}}
	}
	return r
}

func appIn(o *wfv1.Outputs) string {
	if o == nil || o.Result == nil {
		return ""
	}
	return *o.Result
}

// modelClient is the sidecar's TaskSet client, on the model's TaskSet:
// a merge patch of the status applies only at the resourceVersion it
// names (a conflict otherwise), as the API server does.
type modelClient struct {
	argov1.WorkflowTaskSetInterface
	m *model
}

func (c modelClient) Get(_ context.Context, name string, _ metav1.GetOptions) (*wfv1.WorkflowTaskSet, error) {
	if c.m.ts == nil {
		return nil, apierrors.NewNotFound(tsResource, name)
	}
	return c.m.ts.object(), nil
}

func (c modelClient) Patch(_ context.Context, name string, pt types.PatchType, data []byte, _ metav1.PatchOptions, sub ...string) (*wfv1.WorkflowTaskSet, error) {
	m := c.m
	if pt != types.MergePatchType || !slices.Equal(sub, []string{"status"}) {
		m.t.Fatalf("the writer sent a %s patch of %v; want a merge patch of the status", pt, sub)
	}
	if m.ts == nil {
		return nil, apierrors.NewNotFound(tsResource, name)
	}
	var p struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Spec   any `json:"spec"`
		Status struct {
			Nodes map[string]json.RawMessage `json:"nodes"`
		} `json:"status"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		m.t.Fatal(err)
	}
	if p.Spec != nil {
		m.t.Fatalf("the writer touched the spec: %s", data)
	}
	if p.Metadata.ResourceVersion != strconv.Itoa(m.ts.rv) {
		m.logf("sidecar write at rv %s conflicts (rv %d)", p.Metadata.ResourceVersion, m.ts.rv)
		return nil, apierrors.NewConflict(tsResource, name, fmt.Errorf("rv %s", p.Metadata.ResourceVersion))
	}
	for id, raw := range p.Status.Nodes {
		if string(raw) == "null" {
			// Only a Pending or Running entry the Workflow, as persisted,
			// shows applied may be withdrawn: its node keeps the result.
			cur, ok := m.ts.status[id]
			n, shown := m.wf.nodes[id]
			if !ok || cur.Phase.Completed() || !shown || n.Phase != cur.Phase || n.Message != cur.Message || appIn(n.Outputs) != appIn(cur.Outputs) {
				m.t.Fatalf("the writer nulled entry %s (%+v), which the Workflow does not show applied (%+v)", id, cur, n)
			}
			delete(m.ts.status, id)
			m.logf("sidecar withdraws the applied entry of %s", id)
			continue
		}
		old, _ := json.Marshal(m.ts.status[id])
		merged, err := jsonpatch.MergePatch(old, raw)
		if err != nil {
			m.t.Fatal(err)
		}
		var r wfv1.NodeResult
		if err := json.Unmarshal(merged, &r); err != nil {
			m.t.Fatal(err)
		}
		m.ts.status[id] = r
		m.logf("sidecar writes %s %s %s", id, r.Phase, appIn(r.Outputs))
	}
	m.ts.rv++
	if m.loseNext {
		m.loseNext = false
		m.logf("the response of the write is lost")
		return nil, fmt.Errorf("connection reset by peer")
	}
	return m.ts.object(), nil
}

// drive moves one driver along: Pending, Running, then it ends.
func (m *model) drive(p *corev1.Pod) {
	switch p.Status.Phase {
	case corev1.PodPending:
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: spark.DriverContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}
	case corev1.PodRunning:
		code, phase := int32(0), corev1.PodSucceeded
		if m.fail[p.Annotations[spark.AnnotationNodeID]] && strings.Contains(p.Name, "@"+m.firstInc()) {
			code, phase = 1, corev1.PodFailed
		}
		p.Status.Phase = phase
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: spark.DriverContainerName, State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: metav1.NewTime(m.now)}}}}
	default:
		return
	}
	m.logf("driver %s %s", p.Name, p.Status.Phase)
}

func (m *model) firstInc() string {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)
}

// check holds the invariants on what Argo shows.
func (m *model) check() {
	m.t.Helper()
	byApp := map[string]string{}
	see := func(where, id string, o *wfv1.Outputs) {
		app := appIn(o)
		if app == "" {
			return
		}
		if !strings.HasPrefix(app, "app:"+id+"@") {
			m.fail1("%s: node %s shows application %s, a run of another node", where, id, app)
		}
		if other, ok := byApp[app]; ok && other != id {
			m.fail1("%s: nodes %s and %s both report application %s", where, other, id, app)
		}
		byApp[app] = id
	}
	for id, r := range m.ts.status {
		see("task set", id, r.Outputs)
	}
	for id, n := range m.wf.nodes {
		see("workflow", id, n.Outputs)
		key := id + "@" + m.incarnation()
		if first, ok := m.finished[key]; ok {
			if n.Phase != first.Phase || appIn(n.Outputs) != appIn(first.Outputs) {
				m.fail1("node %s finished %s %s, and now shows %s %s", id, first.Phase, appIn(first.Outputs), n.Phase, appIn(n.Outputs))
			}
		} else if n.Fulfilled() {
			m.finished[key] = *n.DeepCopy()
		}
	}
}

func (m *model) fail1(format string, args ...any) {
	m.t.Helper()
	tail := m.trace
	if len(tail) > 40 {
		tail = tail[len(tail)-40:]
	}
	m.t.Fatalf(format+"\nlast steps:\n  %s", append(args, strings.Join(tail, "\n  "))...)
}

// step is one action of the search, chosen at random among all.
func (m *model) step(faults bool) {
	m.now = m.now.Add(time.Second)
	node := m.nodes[m.rng.Intn(len(m.nodes))]
	switch k := m.rng.Intn(16); {
	case k < 3:
		m.reconcile(node)
	case k < 5:
		m.writer.Flush(context.Background())
	case k == 5:
		m.tsView = m.ts.object() // the sidecar's watch catches up
	case k == 6:
		m.wfView = m.wf.object()
	case k == 7:
		m.agentAsk(node)
	case k == 8 || k == 9 || k == 10:
		f := faults && m.rng.Intn(4) == 0
		m.operate(f, f && m.rng.Intn(2) == 0)
	case k == 11:
		if p := m.sortedPods(); len(p) > 0 {
			m.drive(p[m.rng.Intn(len(p))])
		}
	case k == 12 && faults:
		m.asked = map[string]bool{}
		m.logf("agent restarts")
	case k == 13 && faults:
		m.sidecarStart()
		m.logf("sidecar restarts")
	case k == 14 && faults:
		m.ctrlUp = !m.ctrlUp
		m.logf("controller up=%v", m.ctrlUp)
	case k == 15 && faults:
		switch m.rng.Intn(4) {
		case 0:
			m.loseNext = true
		case 1:
			m.recreate()
		case 2:
			m.agentFail(node)
		}
	}
	m.check()
}

// settle runs every actor fairly, without faults, until the workflow
// completes or the bound is hit.
func (m *model) settle(rounds int) {
	m.ctrlUp, m.agentUp = true, true
	for range rounds {
		if m.wf.completed {
			return
		}
		m.now = m.now.Add(time.Second)
		m.tsView, m.wfView = m.ts.object(), m.wf.object()
		for _, id := range m.nodes {
			m.agentAsk(id)
			m.reconcile(id)
		}
		m.writer.Flush(context.Background())
		for _, p := range m.sortedPods() {
			m.drive(p)
		}
		m.operate(false, false)
	}
}

// complete checks that every node finished with its own run's result:
// Succeeded, or Failed for a node whose driver fails.
func (m *model) complete() {
	m.t.Helper()
	if !m.wf.completed {
		m.fail1("the workflow did not complete: %v", m.wf.nodes)
	}
	for _, id := range m.nodes {
		n := m.wf.nodes[id]
		if m.agentFailed[id] && n.Phase == wfv1.NodeFailed && (appIn(n.Outputs) == "" || strings.HasPrefix(appIn(n.Outputs), "app:"+id+"@")) {
			// The agent's failure landed, or, when a failed Workflow
			// update lost it, the run sparkplug abandoned for it failed
			// the node again.
			continue
		}
		want := wfv1.NodeSucceeded
		if m.fail[id] && m.incarnation() == m.firstInc() {
			want = wfv1.NodeFailed
		}
		if n.Phase != want || !strings.HasPrefix(appIn(n.Outputs), "app:"+id+"@") {
			m.fail1("node %s ended %s %q with %s, want %s with its own run", id, n.Phase, n.Message, appIn(n.Outputs), want)
		}
	}
}
