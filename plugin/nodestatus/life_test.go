package nodestatus_test

// A node's life, second by second on a fake clock, through the code that
// decides what is offered to the writer (decide.Decide, its outcome
// rendered by nodestatus.Of) and the writer that picks what is
// written (nodestatus.Writer: Set, Flush, Pick's rules, conflict
// retries), against an in-memory TaskSet that takes a merge patch of its
// status only at the resourceVersion it names, as the API server does.
// What it counts is what Argo must answer: each patch the TaskSet takes
// is an event the workflow-controller answers by operating the Workflow
// and updating it (C5 of the node-identity design).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	argov1 "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/typed/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/kueue"
	"github.com/sparkplug-io/sparkplug/plugin/nodestatus"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

const (
	lifeWF, lifeUID = "life", "uid-life"
	lifeNode        = "life-1234567"
)

// write is one patch the TaskSet took for the node: when, in seconds
// since the life began, and what.
type write struct {
	at  int
	res wfv1.NodeResult
}

func (w write) String() string { return fmt.Sprintf("%3ds %s %q", w.at, w.res.Phase, w.res.Message) }

// lifeEnv is one node's life: its driver pods, the TaskSet as the API
// server holds it, the Workflow, and the writer under test.
type lifeEnv struct {
	t      *testing.T
	start  time.Time
	now    time.Time
	policy decide.Policy
	opts   nodestatus.Options
	ts     *wfv1.WorkflowTaskSet
	wf     *wfv1.Workflow
	w      *nodestatus.Writer

	// pods are the driver's attempts, oldest first; execs the newest's
	// executors; progress what Spark's REST API last said.
	pods     []*corev1.Pod
	execs    []*corev1.Pod
	progress string
	// upload is how long storing an ended driver's log takes (the step
	// archives logs); stored is when the upload under way ends.
	upload, stored time.Duration
	uploading      bool
	// workloads are a queued step's Kueue Workloads (policy.KueueQueue
	// set), as the cache shows them.
	workloads []decide.Workload

	lastPatch time.Time
	// writes are the patches the TaskSet took; requests counts every
	// patch sent, those refused for a conflict included; conflictAt are
	// the requests (from 1) that meet a write of Argo's just before them.
	writes     []write
	requests   int
	conflicts  int
	conflictAt map[int]bool
	// flushRequests is the most requests one Flush sent.
	flushRequests int
	// argo plays Argo's controller (argoOperate): the Workflow shows
	// what the entries say, and updates counts its Workflow updates (the
	// seconds they were made at); withdrawn counts entries withdrawn.
	argo      bool
	updates   []int
	withdrawn int
}

// newLife starts a life of a step whose body is the JSON body, under the
// writer's default options (opts adjusts them).
func newLife(t *testing.T, body string, opts func(*nodestatus.Options)) *lifeEnv {
	t.Helper()
	b, err := spec.Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	e := &lifeEnv{t: t, start: start, now: start, conflictAt: map[int]bool{},
		policy: decide.Policy{Body: b, NotFoundGrace: 30 * time.Second, ProgressInterval: 30 * time.Second}}
	e.ts = &wfv1.WorkflowTaskSet{ObjectMeta: metav1.ObjectMeta{Name: lifeWF, Namespace: "ns", UID: "ts-uid", ResourceVersion: "1",
		OwnerReferences: []metav1.OwnerReference{{Kind: "Workflow", Name: lifeWF, UID: lifeUID}}}}
	e.ts.Spec.Tasks = map[string]wfv1.Template{lifeNode: {Name: "spark"}}
	e.wf = &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: lifeWF, Namespace: "ns", UID: lifeUID}}
	e.wf.Status.Phase, e.wf.Status.StartedAt = wfv1.WorkflowRunning, metav1.NewTime(start)
	e.wf.Status.Nodes = wfv1.Nodes{lifeNode: {ID: lifeNode, Name: "life.spark", Type: wfv1.NodeTypePlugin, Phase: wfv1.NodePending}}
	e.opts = nodestatus.DefaultOptions()
	e.opts.Now = func() time.Time { return e.now }
	if opts != nil {
		opts(&e.opts)
	}
	e.w = nodestatus.New(lifeClient{e: e}, lifeWF, lifeUID, func() *wfv1.WorkflowTaskSet { return e.ts.DeepCopy() },
		func() *wfv1.Workflow { return e.wf }, e.opts, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	return e
}

// at is how many seconds of the life have passed.
func (e *lifeEnv) at() int { return int(e.now.Sub(e.start) / time.Second) }

// live runs the life for secs seconds: each second the event of that
// second (script, keyed by seconds since the start), a pass over the
// node, and the writer's tick. A pass every second is more than the
// resync's every 2 s and every watch event's: it offers the writer every
// message the node goes through.
func (e *lifeEnv) live(secs int, script map[int]func()) {
	for range secs + 1 {
		if f := script[e.at()]; f != nil {
			f()
		}
		if e.argo && e.at()%10 == 0 {
			e.argoOperate() // a requeue (DEFAULT_REQUEUE_TIME, 10 s)
		}
		e.pass()
		e.tick()
		e.now = e.now.Add(time.Second)
	}
}

// argoOperate is one operate of Argo's controller, as docs/node-identity.md
// says it behaves (C1, C3): every entry copied into its node, which makes
// the operate end in a Workflow update (counted), a fulfilled node's entry
// removed. Argo operates at every TaskSet change (C5) and every requeue;
// what it writes for reasons of its own (the node's creation, the
// workflow's end) is not counted.
func (e *lifeEnv) argoOperate() {
	if len(e.ts.Status.Nodes) == 0 {
		return
	}
	for id, r := range e.ts.Status.Nodes {
		n := e.wf.Status.Nodes[id]
		n.Phase, n.Message, n.Outputs = r.Phase, r.Message, r.Outputs.DeepCopy()
		e.wf.Status.Nodes[id] = n
		if r.Phase.Completed() {
			delete(e.ts.Status.Nodes, id)
			e.bump()
		}
	}
	e.updates = append(e.updates, e.at())
}

// pass is one reconcile of the node: the real decision, a launch as the
// act side makes it (a driver pod not yet seen by the API server's
// admission: no phase), and the outcome offered to the writer.
func (e *lifeEnv) pass() {
	if e.uploading && e.now.Sub(e.start) >= e.stored {
		e.head().Annotations = map[string]string{spark.AnnotationDriverLog: "s3://logs/" + e.head().Name}
		e.uploading = false
	}
	s := &decide.Snapshot{Now: e.now, NodeID: lifeNode, Progress: e.progress}
	s.InLoop, s.LoopKnown = scope.InLoop(e.wf.Status.Nodes, lifeNode)
	if r, ok := nodestatus.Current(e.ts, e.wf, lifeNode); ok {
		s.EntryPhase = state.Phase(r.Phase)
	}
	if len(e.pods) > 0 {
		s.Run = &decide.Run{Attempts: slices.Clone(e.pods), Executors: e.execs}
	}
	if e.policy.KueueQueue != "" {
		s.Workloads, s.WorkloadsKnown = slices.Clone(e.workloads), true
	}
	pl := decide.Decide(s, e.policy)
	if pl.Stop != decide.LimitNone || pl.Abandon || (pl.Archive && e.upload == 0) {
		e.t.Fatalf("%ds: a plan this life does not expect: %+v", e.at(), pl)
	}
	if pl.Archive && !e.uploading {
		e.uploading, e.stored = true, e.now.Sub(e.start)+e.upload
	}
	if n := pl.KueueEnqueue; n > 0 {
		e.workloads = append(e.workloads, decide.Workload{Attempt: n, Current: true,
			View: kueue.View{Name: fmt.Sprintf("life-%d-kueue", n), UID: fmt.Sprintf("wl-uid-%d", n), LocalQueue: e.policy.KueueQueue}})
	}
	if pl.Launch > 0 {
		n := pl.Launch
		e.pods = append(e.pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("life-%d-driver", n), UID: types.UID(fmt.Sprintf("driver-uid-%d", n)),
			CreationTimestamp: metav1.NewTime(e.now), Labels: map[string]string{spark.LabelAttempt: strconv.Itoa(n), spark.LabelAppSelector: fmt.Sprintf("spark-life-%d", n)}}})
		e.execs, e.progress = nil, ""
	}
	if pl.Report {
		e.w.Set(lifeNode, nodestatus.Incarnation(e.wf), rendered(pl.Outcome, pl.Driver))
	}
}

// tick is the writer's loop (Writer.Run): a Flush every second, at most
// one patch per MinGap.
func (e *lifeEnv) tick() {
	if !e.lastPatch.IsZero() && e.now.Sub(e.lastPatch) < e.opts.MinGap {
		return
	}
	before := e.requests
	if e.w.Flush(context.Background()) {
		e.lastPatch = e.now
	}
	e.flushRequests = max(e.flushRequests, e.requests-before)
}

// rendered is the result the act side offers (execute's Core.result):
// the outcome's phase and message (nodestatus.Of), and outputs naming
// the driver, with its exit code once it has one.
func rendered(o state.Outcome, driver *corev1.Pod) wfv1.NodeResult {
	r := nodestatus.Of(o)
	if driver == nil {
		return r
	}
	app := driver.Labels[spark.LabelAppSelector]
	r.Outputs = &wfv1.Outputs{Result: &app, Parameters: []wfv1.Parameter{
		{Name: spark.OutputApplicationID, Value: wfv1.AnyStringPtr(app)},
		{Name: spark.OutputDriverPod, Value: wfv1.AnyStringPtr(driver.Name)},
		{Name: spark.OutputAttempt, Value: wfv1.AnyStringPtr(driver.Labels[spark.LabelAttempt])},
		{Name: spark.OutputDriverUID, Value: wfv1.AnyStringPtr(string(driver.UID))},
	}}
	if o.ExitCode != nil {
		code := strconv.Itoa(int(*o.ExitCode))
		r.Outputs.ExitCode = &code
	}
	return r
}

// The driver's states, as kubelet and the scheduler set them on the
// newest attempt's pod.

func (e *lifeEnv) head() *corev1.Pod {
	e.t.Helper()
	if len(e.pods) == 0 {
		e.t.Fatalf("%ds: no driver launched", e.at())
	}
	return e.pods[len(e.pods)-1]
}

// scheduled: the pod is bound to a node; waiting: its driver container
// waits (ContainerCreating while the image is pulled).
func (e *lifeEnv) scheduled(waiting string) {
	p := e.head()
	p.Status.Phase = corev1.PodPending
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	p.Status.ContainerStatuses = nil
	if waiting != "" {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: spark.DriverContainerName,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting}}}}
	}
}

func (e *lifeEnv) running() {
	p := e.head()
	p.Status.Phase = corev1.PodRunning
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: spark.DriverContainerName,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(e.now)}}}}
}

// executors sets the newest driver's n executors in phase.
func (e *lifeEnv) executors(n int, phase corev1.PodPhase) {
	e.execs = nil
	for i := range n {
		e.execs = append(e.execs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("exec-%d", i+1)}, Status: corev1.PodStatus{Phase: phase}})
	}
}

// admit: Kueue admits the newest Workload, driver and executors.
func (e *lifeEnv) admit() {
	if len(e.workloads) == 0 {
		e.t.Fatalf("%ds: no Workload to admit", e.at())
	}
	w := &e.workloads[len(e.workloads)-1]
	w.Admitted, w.AdmittedAt, w.Waiting = true, e.now, ""
	one, two := int32(1), int32(2)
	w.Admission = &kueue.Admission{ClusterQueue: "cq", PodSetAssignments: []kueue.PodSetAssignment{
		{Name: kueue.PodSetDriver, Count: &one}, {Name: kueue.PodSetExecutor, Count: &two}}}
}

// exit ends the driver container with code.
func (e *lifeEnv) exit(code int32) {
	p := e.head()
	p.Status.Phase = corev1.PodSucceeded
	reason := "Completed"
	if code != 0 {
		p.Status.Phase, reason = corev1.PodFailed, "Error"
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: spark.DriverContainerName, State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, FinishedAt: metav1.NewTime(e.now)}}}}
	for _, x := range e.execs {
		x.Status.Phase = corev1.PodSucceeded
	}
	e.progress = ""
}

// trace is the writes, one a line, for failure messages.
func (e *lifeEnv) trace() string {
	var b strings.Builder
	for _, w := range e.writes {
		b.WriteString("\n  " + w.String())
	}
	return b.String()
}

// lifeClient is the writer's TaskSet client on the env's TaskSet.
type lifeClient struct {
	argov1.WorkflowTaskSetInterface
	e *lifeEnv
}

func (c lifeClient) Get(context.Context, string, metav1.GetOptions) (*wfv1.WorkflowTaskSet, error) {
	return c.e.ts.DeepCopy(), nil
}

// Patch takes a merge patch of the status at the resourceVersion it
// names: the writer writes every field of an entry (null when empty), so
// an entry is what the patch says. A request conflictAt names meets a
// write of Argo's controller made just before it (the TaskSet's version
// moves on, its entries stay).
func (c lifeClient) Patch(_ context.Context, name string, pt types.PatchType, data []byte, _ metav1.PatchOptions, sub ...string) (*wfv1.WorkflowTaskSet, error) {
	e := c.e
	if pt != types.MergePatchType || !slices.Equal(sub, []string{"status"}) {
		e.t.Fatalf("a %s patch of %v; want a merge patch of the status", pt, sub)
	}
	e.requests++
	if e.conflictAt[e.requests] {
		e.bump()
	}
	var p struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Status struct {
			Nodes map[string]json.RawMessage `json:"nodes"`
		} `json:"status"`
	}
	if err := json.Unmarshal(data, &p); err != nil {
		e.t.Fatal(err)
	}
	if p.Metadata.ResourceVersion != e.ts.ResourceVersion {
		e.conflicts++
		return nil, apierrors.NewConflict(tsResource, name, fmt.Errorf("resourceVersion %s, not %s", p.Metadata.ResourceVersion, e.ts.ResourceVersion))
	}
	if e.ts.Status.Nodes == nil {
		e.ts.Status.Nodes = map[string]wfv1.NodeResult{}
	}
	for id, raw := range p.Status.Nodes {
		if string(raw) == "null" {
			applied, shown := nodestatus.Applied(e.wf, id)
			if cur, ok := e.ts.Status.Nodes[id]; !ok || !shown || !nodestatus.Same(cur, applied) {
				e.t.Fatalf("%ds: entry %s withdrawn, which the Workflow does not show applied", e.at(), id)
			}
			delete(e.ts.Status.Nodes, id)
			e.withdrawn++
			continue
		}
		var r wfv1.NodeResult
		if err := json.Unmarshal(raw, &r); err != nil {
			e.t.Fatal(err)
		}
		e.ts.Status.Nodes[id] = r
		if id == lifeNode {
			e.writes = append(e.writes, write{at: e.at(), res: r})
		}
	}
	e.bump()
	if e.argo {
		defer e.argoOperate() // C5: every TaskSet change requeues the workflow
	}
	return e.ts.DeepCopy(), nil
}

func (e *lifeEnv) bump() {
	rv, _ := strconv.Atoi(e.ts.ResourceVersion)
	e.ts.ResourceVersion = strconv.Itoa(rv + 1)
}
