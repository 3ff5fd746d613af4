package decide

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod/drivertest"
	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// Builders of snapshots made of driver pods, ghosts and tombstones, as
// the act side gathers them from its cache.

// t0 is when the drivers of the table were created.
var t0 = drivertest.T0

var (
	exited    = drivertest.Exited
	annotated = drivertest.Annotated
	running   = drivertest.Running
)

// driver is the driver of attempt n of node n1's run, created at t0,
// Pending until an option says otherwise.
func driver(attempt int, opts ...drivertest.Opt) *corev1.Pod {
	return drivertest.Driver("n1", attempt, opts...)
}

// waitingOn: the driver container waits on reason.
func waitingOn(reason string) drivertest.Opt { return drivertest.WaitingOn(reason, "waiting") }

// runOf is a run of the attempts given, oldest first.
func runOf(attempts ...*corev1.Pod) *Run { return &Run{Attempts: attempts} }

// ghostOf is a run whose newest driver, named by the node's entry, the
// cluster lost, missed first at since: the stand-in the act side builds
// from the entry.
func ghostOf(attempt int, since time.Time) *Run {
	return &Run{Attempts: []*corev1.Pod{drivertest.Ghost("n1", attempt, drivertest.AppID("n1", attempt))}, Ghost: true, MissingSince: since}
}

// tombOf is a run whose driver of attempt sparkplug stopped at stoppedAt
// for l: its tombstone, and the stand-in built from it as the head.
func tombOf(attempt int, l Limit, stoppedAt time.Time) *Run {
	cm, stand := drivertest.Tomb("n1", attempt, string(l), stoppedAt)
	return &Run{Attempts: []*corev1.Pod{stand}, Tomb: cm}
}

// named: the Workflow's nodes list node n1 under name, which says
// whether it is a loop's child (scope.InLoop, here of a node with no
// Retry parent).
func named(name string) func(*Snapshot) {
	return func(s *Snapshot) { s.InLoop, s.LoopKnown = identity.LoopChild(name), true }
}

// snap is a snapshot of node n1 at now with run rn (nil: none), which
// the Workflow shows Running, outside any loop; mods change it further.
func snap(now time.Time, rn *Run, mods ...func(*Snapshot)) *Snapshot {
	s := &Snapshot{Now: now, NodeID: "n1", Run: rn}
	for _, m := range append([]func(*Snapshot){named("wf.spark")}, mods...) {
		m(s)
	}
	return s
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

const onFailureRP = `"restartPolicy":{"type":"OnFailure","onFailureRetries":2,"onFailureRetryInterval":10,"onSubmissionFailureRetries":2,"onSubmissionFailureRetryInterval":5}`

func policyOf(t *testing.T, extra string, timeout time.Duration) Policy {
	return Policy{Body: sparkBody(t, extra), Timeout: timeout, NotFoundGrace: 30 * time.Second}
}

// planned is what a row of the table must plan. Every field is compared:
// a zero field wants zero (no launch, no stop, no driver, no outcome);
// msg is a part of the outcome's message.
type planned struct {
	launch                                   int
	stop                                     Limit
	abandon, ensure, archive, report, asJSON bool
	phase                                    state.Phase
	state                                    spark.State
	msg                                      string
	driver                                   string
}

func TestDecide(t *testing.T) {
	never := policyOf(t, "", 0)
	onFailure := policyOf(t, onFailureRP, 0)
	pending5m := policyOf(t, `"sparkplug":{"pendingTimeout":"5m"},`+onFailureRP, 0)
	archives := policyOf(t, `"sparkplug":{"archiveLogs":true}`, 0)
	timeout := policyOf(t, onFailureRP, 10*time.Minute)
	fulfilled := func(s *Snapshot) { s.Fulfilled = true }
	entry := func(p state.Phase) func(*Snapshot) {
		return func(s *Snapshot) { s.EntryPhase = p }
	}
	refused := func(s *Snapshot) {
		s.Failures = map[int]Failure{1: {Count: 1, At: t0, Message: "pods is forbidden: exceeded quota"}}
	}
	unknown := func(s *Snapshot) { s.InLoop, s.LoopKnown = false, false }

	for _, row := range []struct {
		name string
		s    *Snapshot
		p    Policy
		want planned
	}{
		{"a node without a run launches attempt 1",
			snap(t0, nil), never,
			planned{launch: 1}},
		{"a refused submission backs off: no launch, SUBMISSION_FAILED Pending",
			snap(t0.Add(2*time.Second), nil, refused), onFailure,
			planned{report: true, phase: state.PhasePending, state: spark.StateSubmissionFailed, msg: "SUBMISSION_FAILED: retry 1/2 in 3s: pods is forbidden: exceeded quota"}},
		{"a refused submission, its backoff over: attempt 1 launches",
			snap(t0.Add(5*time.Second), nil, refused), onFailure,
			planned{launch: 1}},
		{"the Workflow shows the node fulfilled: its live driver is abandoned, nothing reported",
			snap(t0.Add(time.Minute), runOf(driver(1, running())), fulfilled), never,
			planned{abandon: true}},
		{"a terminal entry, whoever wrote it: its live driver is abandoned, nothing reported",
			snap(t0.Add(time.Minute), runOf(driver(1, running())), entry(state.PhaseFailed)), never,
			planned{abandon: true}},
		{"the Workflow shows the node fulfilled, its driver ended: nothing at all",
			snap(t0.Add(2*time.Minute), runOf(driver(1, exited(1, "Error"))), fulfilled), never,
			planned{}},
		{"a terminal entry and no run: nothing, never a launch",
			snap(t0, nil, entry(state.PhaseSucceeded)), never,
			planned{}},
		{"a Pending entry is no fulfilment: the running driver reports",
			snap(t0.Add(time.Minute), runOf(driver(1, running())), entry(state.PhasePending)), never,
			planned{ensure: true, report: true, phase: state.PhaseRunning, state: spark.StateRunning, msg: "RUNNING 0/1 executor", driver: "n1-a1-driver"}},
		{"a running driver: Running, its companions ensured",
			snap(t0.Add(time.Minute), runOf(driver(1, running()))), never,
			planned{ensure: true, report: true, phase: state.PhaseRunning, state: spark.StateRunning, msg: "RUNNING 0/1 executor", driver: "n1-a1-driver"}},
		{"a pending driver: Pending SUBMITTED",
			snap(t0.Add(10*time.Second), runOf(driver(1))), never,
			planned{ensure: true, report: true, phase: state.PhasePending, state: spark.StateSubmitted, msg: "SUBMITTED", driver: "n1-a1-driver"}},
		{"a succeeded driver: Succeeded, final",
			snap(t0.Add(2*time.Minute), runOf(driver(1, exited(0, "Completed")))), never,
			planned{report: true, phase: state.PhaseSucceeded, state: spark.StateCompleted, msg: "COMPLETED", driver: "n1-a1-driver"}},
		{"a failed driver under Never: Failed, final",
			snap(t0.Add(2*time.Minute), runOf(driver(1, exited(1, "Error")))), never,
			planned{report: true, phase: state.PhaseFailed, state: spark.StateFailed, msg: "FAILED: driver exited 1 (Error)", driver: "n1-a1-driver"}},
		{"a driver over the template's timeout: stopped, Failed, never rerun",
			snap(t0.Add(11*time.Minute), runOf(driver(1, running()))), timeout,
			planned{stop: LimitTimeout, ensure: true, report: true, phase: state.PhaseFailed, state: spark.StateFailed, msg: "timed out after 10m0s", driver: "n1-a1-driver"}},
		{"a driver that cannot start: stopped at once, Failed",
			snap(t0.Add(10*time.Second), runOf(driver(1, waitingOn("ImagePullBackOff")))), never,
			planned{stop: LimitCannotStart, ensure: true, report: true, phase: state.PhaseFailed, state: spark.StateFailed, msg: "ImagePullBackOff", driver: "n1-a1-driver"}},
		{"a pending timeout under OnFailure: the rerun waits out its interval, the driver not stopped yet",
			snap(t0.Add(5*time.Minute+5*time.Second), runOf(driver(1, waitingOn("ContainerCreating")))), pending5m,
			planned{ensure: true, report: true, phase: state.PhaseRunning, state: spark.StatePendingRerun, msg: "PENDING_RERUN: attempt 2/3 in 5s", driver: "n1-a1-driver"}},
		{"a pending timeout under OnFailure with retries left: stopped, attempt 2 launched after the interval",
			snap(t0.Add(5*time.Minute+10*time.Second), runOf(driver(1, waitingOn("ContainerCreating")))), pending5m,
			planned{launch: 2, stop: LimitPending, ensure: true, report: true, phase: state.PhaseRunning, state: spark.StatePendingRerun, msg: "starting attempt 2/3 after: FAILED", driver: "n1-a1-driver"}},
		{"a refused submission of attempt 2 holds back the rerun",
			snap(t0.Add(2*time.Minute+10*time.Second), runOf(driver(1, exited(1, "Error"))), func(s *Snapshot) {
				s.Failures = map[int]Failure{2: {Count: 1, At: t0.Add(2*time.Minute + 8*time.Second), Message: "quota"}}
			}), onFailure,
			planned{report: true, phase: state.PhasePending, state: spark.StateSubmissionFailed, msg: "SUBMISSION_FAILED: retry 1/2 in 3s: quota", driver: "n1-a1-driver"}},
		{"a tombstone of a pending timeout under OnFailure: attempt 2 launches after the interval, nothing to stop",
			snap(t0.Add(5*time.Minute+10*time.Second), tombOf(1, LimitPending, t0.Add(5*time.Minute))), onFailure,
			planned{launch: 2, report: true, phase: state.PhaseRunning, state: spark.StatePendingRerun, msg: "starting attempt 2/3 after: FAILED", driver: "n1-a1-driver"}},
		{"a tombstone of a pending timeout under Never: Failed with what it recorded",
			snap(t0.Add(6*time.Minute), tombOf(1, LimitPending, t0.Add(5*time.Minute))), never,
			planned{report: true, phase: state.PhaseFailed, state: spark.StateFailed, msg: "stopped for PendingTimeout", driver: "n1-a1-driver"}},
		{"a tombstone of the template's timeout: Failed, never rerun whatever the policy",
			snap(t0.Add(time.Hour), tombOf(1, LimitTimeout, t0.Add(10*time.Minute))), onFailure,
			planned{report: true, phase: state.PhaseFailed, state: spark.StateFailed, msg: "stopped for Timeout", driver: "n1-a1-driver"}},
		{"a ghost within NotFoundGrace: Pending, waiting for it",
			snap(t0.Add(10*time.Second), ghostOf(1, t0)), never,
			planned{report: true, phase: state.PhasePending, state: spark.StateSubmitted, driver: "n1-a1-driver"}},
		{"a ghost past NotFoundGrace: Failed, never silently relaunched",
			snap(t0.Add(31*time.Second), ghostOf(1, t0)), never,
			planned{report: true, phase: state.PhaseFailed, state: spark.StateFailed, msg: "not found", driver: "n1-a1-driver"}},
		{"archived logs, the driver succeeded: its log is stored first, Running meanwhile",
			snap(t0.Add(2*time.Minute), runOf(driver(1, exited(0, "Completed")))), archives,
			planned{archive: true, report: true, phase: state.PhaseRunning, state: spark.StateCompleted, msg: "COMPLETED; archiving the driver log", driver: "n1-a1-driver"}},
		{"archived logs, the log stored: Succeeded",
			snap(t0.Add(2*time.Minute), runOf(driver(1, exited(0, "Completed"), annotated(spark.AnnotationDriverLog, "wf/n1-a1-driver/driver.log")))), archives,
			planned{report: true, phase: state.PhaseSucceeded, state: spark.StateCompleted, msg: "COMPLETED", driver: "n1-a1-driver"}},
		{"archived logs, the upload refused: final all the same",
			snap(t0.Add(2*time.Minute), runOf(driver(1, exited(1, "Error"), annotated(spark.AnnotationDriverLogError, "Access Denied")))), archives,
			planned{report: true, phase: state.PhaseFailed, state: spark.StateFailed, msg: "driver exited 1", driver: "n1-a1-driver"}},
		{"a loop's child: its result is JSON",
			snap(t0.Add(time.Minute), runOf(driver(1, running())), named("wf.loop(0:a)")), never,
			planned{ensure: true, report: true, asJSON: true, phase: state.PhaseRunning, state: spark.StateRunning, driver: "n1-a1-driver"}},
		{"a loop's child without a run: its launch knows it is JSON",
			snap(t0, nil, named("wf.loop(1:b)")), never,
			planned{launch: 1, asJSON: true}},
		{"a final outcome waits while the Workflow does not know the node",
			snap(t0.Add(2*time.Minute), runOf(driver(1, exited(0, "Completed"))), unknown), never,
			planned{phase: state.PhaseSucceeded, state: spark.StateCompleted, msg: "COMPLETED", driver: "n1-a1-driver"}},
		{"a running outcome is reported though the Workflow does not know the node",
			snap(t0.Add(time.Minute), runOf(driver(1, running())), unknown), never,
			planned{ensure: true, report: true, phase: state.PhaseRunning, state: spark.StateRunning, driver: "n1-a1-driver"}},
	} {
		t.Run(row.name, func(t *testing.T) {
			pl := Decide(row.s, row.p)
			if again := Decide(row.s, row.p); !reflect.DeepEqual(pl, again) {
				t.Fatalf("the same snapshot planned twice: %+v, then %+v", pl, again)
			}
			got := planned{launch: pl.Launch, stop: pl.Stop, abandon: pl.Abandon, ensure: pl.Ensure, archive: pl.Archive, report: pl.Report,
				asJSON: pl.JSON, phase: pl.Outcome.Phase, state: pl.Outcome.State, msg: row.want.msg}
			if pl.Driver != nil {
				got.driver = pl.Driver.Name
			}
			if got != row.want {
				t.Errorf("plan %+v\nwant %+v\n(message %q)", got, row.want, pl.Outcome.Message())
			}
			if msg := pl.Outcome.Message(); !strings.Contains(msg, row.want.msg) {
				t.Errorf("message %q, want it to contain %q", msg, row.want.msg)
			}
			if row.want.phase == "" && !reflect.DeepEqual(pl.Outcome, state.Outcome{}) {
				t.Errorf("outcome %+v, want none", pl.Outcome)
			}
			switch {
			case pl.Stop != LimitNone && (!pl.Ended.Done || pl.Ended.Succeeded):
				t.Errorf("stopped for %s, but what ended the attempt is %+v", pl.Stop, pl.Ended)
			case pl.Stop == LimitNone && !reflect.DeepEqual(pl.Ended, state.Assessment{}):
				t.Errorf("nothing stopped, yet Ended is %+v", pl.Ended)
			}
		})
	}
}

// afterRefusal retries a refused submission per
// onSubmissionFailureRetries, and fails the node once they are used.
func TestAfterRefusal(t *testing.T) {
	onFailure := sparkBody(t, onFailureRP)
	for _, tc := range []struct {
		name  string
		f     Failure
		body  *spec.SparkApplicationSpec
		phase state.Phase
		msg   string
	}{
		{"a retry left", Failure{Count: 1, Message: "pods is forbidden"}, onFailure, state.PhasePending, "SUBMISSION_FAILED: retry 1/2 soon: pods is forbidden"},
		{"the retries used", Failure{Count: 3, Message: "pods is forbidden"}, onFailure, state.PhaseFailed, "SUBMISSION_FAILED: pods is forbidden"},
		{"Never retries none", Failure{Count: 1, Message: "spark-submit exited 1"}, sparkBody(t, ""), state.PhaseFailed, "SUBMISSION_FAILED: spark-submit exited 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := afterRefusal(tc.f, tc.body)
			if o.Phase != tc.phase || o.State != spark.StateSubmissionFailed || o.Message() != tc.msg {
				t.Errorf("%s %s %q, want %s SUBMISSION_FAILED %q", o.Phase, o.State, o.Message(), tc.phase, tc.msg)
			}
		})
	}
}

// A running node's RUNNING x/y counts y as the driver's conf has it:
// sparkConf's spark.executor.instances beats executor.instances, and
// dynamic allocation, by either, expects none.
func TestExpectedExecutorsAsTheConfHasThem(t *testing.T) {
	for _, tc := range []struct {
		extra string
		want  int32
	}{
		{"", 1},
		{`"executor":{"instances":3}`, 3},
		{`"sparkConf":{"spark.executor.instances":"4"}`, 4},
		{`"executor":{"instances":3},"sparkConf":{"spark.executor.instances":"4"}`, 4},
		{`"dynamicAllocation":{"enabled":true,"maxExecutors":5}`, 0},
		{`"executor":{"instances":3},"sparkConf":{"spark.dynamicAllocation.enabled":"true","spark.dynamicAllocation.maxExecutors":"5"}`, 0},
		// Read as Spark reads them: any case is a boolean, a sign is allowed.
		{`"executor":{"instances":3},"sparkConf":{"spark.dynamicAllocation.enabled":"tRuE","spark.dynamicAllocation.maxExecutors":"5"}`, 0},
		{`"sparkConf":{"spark.executor.instances":"+4"}`, 4},
	} {
		if got := expectedExecutors(sparkBody(t, tc.extra)); got != tc.want {
			t.Errorf("%s: %d expected executors, want %d", tc.extra, got, tc.want)
		}
	}
}
