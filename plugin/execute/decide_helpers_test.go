package execute

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// Builders for the decide table: snapshots made of pods, tasks and
// tombstones, as gather would read them from the cache.

// t0 is when the drivers of the decide table were created.
var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

type podOpt func(*corev1.Pod)

// driver is the driver of attempt n of node's run, created at t0,
// Pending until an option says otherwise.
func driver(node string, attempt int, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("%s-a%d-driver", node, attempt), Namespace: "jobs", UID: types.UID("uid-" + node + "-" + strconv.Itoa(attempt)),
			CreationTimestamp: metav1.NewTime(t0),
			Labels: map[string]string{spark.LabelRole: spark.RoleDriver, spark.LabelAttempt: strconv.Itoa(attempt),
				spark.LabelAppSelector: fmt.Sprintf("spark-%s-%d", node, attempt)},
			Annotations: map[string]string{spark.AnnotationNodeID: node},
		},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: spark.DriverContainerName}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func containerState(p *corev1.Pod, s corev1.ContainerState) {
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: spark.DriverContainerName, State: s}}
}

func running() podOpt {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		containerState(p, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}})
	}
}

// exited: the driver container ended with code at t0+1m.
func exited(code int32, reason string) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		if code == 0 {
			p.Status.Phase = corev1.PodSucceeded
		}
		containerState(p, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, FinishedAt: metav1.NewTime(t0.Add(time.Minute))}})
	}
}

// waitingOn: the driver container waits on reason.
func waitingOn(reason string) podOpt {
	return func(p *corev1.Pod) {
		containerState(p, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "Back-off pulling image"}})
	}
}

func evicted() podOpt {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.Reason, p.Status.Message = "Evicted", "The node was low on resource: memory."
	}
}

// handedOut: the run's final result was handed out at, as mode.
func handedOut(mode identity.Mode, at time.Time) podOpt {
	return func(p *corev1.Pod) {
		p.Annotations[spark.AnnotationReportedMode] = string(mode)
		p.Annotations[spark.AnnotationReported] = at.UTC().Format(time.RFC3339)
	}
}

func adoptedBy(node string) podOpt {
	return func(p *corev1.Pod) { p.Annotations[spark.AnnotationAdoptedBy] = node }
}

// runOf is a run of the attempts given, oldest first.
func runOf(attempts ...*corev1.Pod) *run {
	return &run{nodeID: attempts[0].Annotations[spark.AnnotationNodeID], attempts: attempts}
}

// ghostOf is a run whose recorded driver the cluster no longer has, missed
// first at since.
func ghostOf(node string, attempt int, since time.Time) *run {
	g := driver(node, attempt)
	g.UID, g.CreationTimestamp = "", metav1.Time{}
	return &run{nodeID: node, attempts: []*corev1.Pod{g}, ghost: true, missingSince: since}
}

// tombOf is a run whose driver sparkplug stopped at stoppedAt for l.
func tombOf(node string, attempt int, l limit, stoppedAt time.Time) *run {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: node + "-conf", CreationTimestamp: metav1.NewTime(stoppedAt),
		Labels: map[string]string{spark.LabelAttempt: strconv.Itoa(attempt)},
		Annotations: map[string]string{
			spark.AnnotationNodeID: node, spark.AnnotationDriver: fmt.Sprintf("%s-a%d-driver", node, attempt),
			spark.AnnotationStopped: string(l), spark.AnnotationStoppedAt: stoppedAt.UTC().Format(time.RFC3339),
			spark.AnnotationStoppedReason: string(l), spark.AnnotationStoppedDetail: "stopped for " + string(l),
		},
	}}
	return &run{nodeID: node, attempts: []*corev1.Pod{tombStandIn(cm)}, tomb: cm}
}

// open is a listed node without a final result; done one with it.
func open(node string) identity.Task { return identity.Task{NodeID: node} }

func done(node string, phase wfv1.NodePhase, driverName string, attempt int) identity.Task {
	return identity.Task{NodeID: node, Recorded: &wfv1.NodeResult{Phase: phase, Outputs: &wfv1.Outputs{Parameters: []wfv1.Parameter{
		{Name: OutputDriverPod, Value: wfv1.AnyStringPtr(driverName)},
		{Name: OutputAttempt, Value: wfv1.AnyStringPtr(strconv.Itoa(attempt))},
	}}}}
}

// snap is a snapshot at now of the tasks and runs given.
func snap(now time.Time, tasks []identity.Task, runs ...*run) *snapshot {
	s := &snapshot{now: now, tasks: tasks, runs: map[string]*run{}, failures: map[string]submissionFailure{}}
	for _, rn := range runs {
		s.runs[rn.nodeID] = rn
	}
	return s
}

// loopNodes is a Workflow node status in which the nodes given are the
// children of a withItems loop.
func loopNodes(ids ...string) wfv1.Nodes {
	n := wfv1.Nodes{}
	for i, id := range ids {
		n[id] = wfv1.NodeStatus{ID: id, Name: fmt.Sprintf("wf[0].spark(%d:item-%d)", i, i), Phase: wfv1.NodeRunning}
	}
	return n
}

// sparkBody is a SparkPi body with extra fields (JSON, after a comma).
func sparkBody(t *testing.T, extra string) *spec.SparkApplicationSpec {
	t.Helper()
	raw := `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar"`
	if extra != "" {
		raw += "," + extra
	}
	s, err := spec.Parse([]byte(raw + "}"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// got is what a row of the decide table decided, flattened.
type got struct {
	launch   []string
	blocked  bool
	adopt    map[string]string
	answer   string
	stop     limit
	relaunch bool
	final    bool
	record   identity.Mode
	json     bool
	closed   bool
	repeat   bool
	// unanswered: nothing the agent records is answered.
	unanswered bool
	outcome    state.Outcome
	// runsOn: a driver whose companion was refused runs on
	// (keepsRunning); required: a refused companion ends the attempt
	// (companionRequired); sweep: the drivers are deleted as the workflow
	// ends (sweepReason).
	runsOn, required, sweep bool
	// text is what else the row says, searched for the wanted message too.
	text string
}

// planned is decide, and decideReport for the answering run, as act
// would call them.
func planned(s *snapshot, p policy) got {
	pl := decide(s, p)
	g := got{adopt: pl.adopt, answer: pl.answer, closed: pl.closed, repeat: pl.repeat != nil, unanswered: pl.unanswered}
	for _, o := range pl.launch {
		g.launch = append(g.launch, o.node)
		if o.blocked != nil {
			g.blocked, g.outcome = true, *o.blocked
		}
	}
	switch {
	case pl.unlisted != nil:
		g.outcome = *pl.unlisted
	case g.blocked || pl.repeat != nil || pl.unanswered:
	case pl.answer == "":
		g.outcome = waitingForIdentical()
	case s.runs[pl.answer] == nil:
		// A node launched now answers from its new driver.
		g.outcome = state.Outcome{State: spark.StateSubmitted, Phase: wfv1.NodePending}
	default:
		rep := decideReport(s, p, s.runs[pl.answer], pl.record)
		g.stop, g.relaunch, g.final, g.record, g.json = rep.stop, rep.relaunch, rep.verdict.Final, rep.record, rep.json
		g.outcome = rep.verdict.Outcome
		if rep.blocked != nil {
			g.blocked, g.outcome = true, *rep.blocked
		}
	}
	return g
}

// outcomeOf is a row decided by a function that answers an outcome alone.
func outcomeOf(o state.Outcome) got { return got{outcome: o, final: o.Phase.Completed()} }

// check compares a row's decision with what it wants: the fields a want
// leaves zero are not compared, but for the launches and the stop, which
// must be none unless wanted.
func check(t *testing.T, g, w got, wantMsg string) {
	t.Helper()
	if strings.Join(g.launch, ",") != strings.Join(w.launch, ",") {
		t.Errorf("launch %v, want %v", g.launch, w.launch)
	}
	if g.stop != w.stop {
		t.Errorf("stop %q, want %q", g.stop, w.stop)
	}
	if g.relaunch != w.relaunch || g.blocked != w.blocked || g.final != w.final || g.json != w.json || g.closed != w.closed || g.repeat != w.repeat || g.unanswered != w.unanswered {
		t.Errorf("relaunch=%v blocked=%v final=%v json=%v closed=%v repeat=%v unanswered=%v, want %v %v %v %v %v %v %v",
			g.relaunch, g.blocked, g.final, g.json, g.closed, g.repeat, g.unanswered, w.relaunch, w.blocked, w.final, w.json, w.closed, w.repeat, w.unanswered)
	}
	if g.runsOn != w.runsOn || g.required != w.required || g.sweep != w.sweep {
		t.Errorf("runsOn=%v required=%v sweep=%v, want %v %v %v", g.runsOn, g.required, g.sweep, w.runsOn, w.required, w.sweep)
	}
	if g.record != w.record {
		t.Errorf("record %q, want %q", g.record, w.record)
	}
	if w.answer != "" && g.answer != w.answer {
		t.Errorf("answer %q, want %q", g.answer, w.answer)
	}
	if fmt.Sprint(g.adopt) != fmt.Sprint(w.adopt) && (len(g.adopt) > 0 || len(w.adopt) > 0) {
		t.Errorf("adopt %v, want %v", g.adopt, w.adopt)
	}
	if w.outcome.Phase != "" && g.outcome.Phase != w.outcome.Phase {
		t.Errorf("phase %s, want %s (%q)", g.outcome.Phase, w.outcome.Phase, g.outcome.Message())
	}
	if w.outcome.State != "" && g.outcome.State != w.outcome.State {
		t.Errorf("state %s, want %s (%q)", g.outcome.State, w.outcome.State, g.outcome.Message())
	}
	if said := g.outcome.Message() + g.text; !strings.Contains(said, wantMsg) {
		t.Errorf("message %q, want it to contain %q", said, wantMsg)
	}
}
