package execute

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	"k8s.io/client-go/tools/record"

	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/nodestatus"
	"github.com/sparkplug-io/sparkplug/plugin/setting"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// The progress interval defaults to DefaultProgressInterval, 0 turns it
// off (Validate keeps it 0), and a negative or sub-second one is refused
// by its name.
func TestProgressIntervalOption(t *testing.T) {
	if d := DefaultOptions(); d.ProgressInterval != 30*time.Second || DefaultProgressInterval != 30*time.Second {
		t.Errorf("default %s, want 30s", d.ProgressInterval)
	}
	for _, tc := range []struct {
		set  time.Duration
		want time.Duration // after Validate; -1: refused
	}{
		{0, 0},
		{time.Second, time.Second},
		{2 * time.Minute, 2 * time.Minute},
		{999 * time.Millisecond, -1},
		{-time.Second, -1},
	} {
		o := DefaultOptions()
		o.ProgressInterval = tc.set
		err := o.Validate()
		var se *setting.Error
		switch {
		case tc.want < 0 && (!errors.As(err, &se) || se.Name != "progress-interval"):
			t.Errorf("%s: %v, want a refusal of progress-interval", tc.set, err)
		case tc.want >= 0 && err != nil:
			t.Errorf("%s: %v", tc.set, err)
		case tc.want >= 0 && o.ProgressInterval != tc.want:
			t.Errorf("%s: %s after Validate, want %s", tc.set, o.ProgressInterval, tc.want)
		}
	}
}

// withProgress is the never-rerun policy with a progress interval.
func withProgress(t *testing.T, interval time.Duration) decide.Policy {
	p := never(t)
	p.ProgressInterval = interval
	return p
}

// A running node's result carries the driver's time, rounded down to the
// interval, and nothing else the plan says changes with it.
func TestRunningResultShowsTheElapsedTime(t *testing.T) {
	for _, tc := range []struct {
		now      time.Duration
		interval time.Duration
		want     string
	}{
		{20 * time.Second, 30 * time.Second, "RUNNING 0/1 executor"},
		{4*time.Minute + 59*time.Second, 30 * time.Second, "RUNNING 0/1 executor, 4m30s"},
		{5 * time.Minute, 30 * time.Second, "RUNNING 0/1 executor, 5m"},
		{4*time.Minute + 59*time.Second, 0, "RUNNING 0/1 executor"},
	} {
		s := snapOf(t0.Add(tc.now), runOf(driver("n1", 1, running())))
		pl := decide.Decide(s, withProgress(t, tc.interval))
		if !pl.Report || pl.Driver == nil || pl.Outcome.Phase != state.PhaseRunning || pl.Outcome.Message() != tc.want {
			t.Errorf("at +%s, interval %s: report %v phase %s %q, want a Running report %q", tc.now, tc.interval, pl.Report, pl.Outcome.Phase, pl.Outcome.Message(), tc.want)
		}
		off := decide.Decide(s, never(t))
		pl.Outcome, off.Outcome = state.Outcome{}, state.Outcome{}
		if !reflect.DeepEqual(pl, off) {
			t.Errorf("at +%s: the interval changed the plan: %+v, without %+v", tc.now, pl, off)
		}
	}
}

// A driver's state Event is recorded once per state, not once per message:
// a running node's message moves every interval, its Event does not.
func TestStateEventOncePerStateWhileTheMessageMoves(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	c := &Core{recorder: rec}
	wf := spark.WorkflowRef{Name: "wf", Namespace: "ns", UID: "u"}
	for _, d := range []time.Duration{0, 30 * time.Second, time.Minute, 90 * time.Second} {
		c.stateEvent(wf, "n1", "n1-driver", state.Outcome{State: spark.StateRunning, Phase: state.PhaseRunning, Counts: "2/2 executors", Elapsed: d})
	}
	c.stateEvent(wf, "n1", "n1-driver", state.Outcome{State: spark.StateCompleted, Phase: state.PhaseSucceeded})
	close(rec.Events)
	var got []string
	for e := range rec.Events {
		got = append(got, e)
	}
	want := []string{
		"Normal SparkRunning node n1, driver n1-driver: RUNNING 2/2 executors",
		"Normal SparkCompleted node n1, driver n1-driver: COMPLETED",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func exitCodeOf(r executor.ExecuteTemplateReply) string {
	if r.Node == nil || r.Node.Outputs == nil || r.Node.Outputs.ExitCode == nil {
		return "unset"
	}
	return *r.Node.Outputs.ExitCode
}

// The result reports the driver container's exit code as outputs.exitCode
// once it terminated: on the final result, and while a rerun waits (the
// outputs still name that driver). A driver that runs, never ran, or that
// sparkplug stopped has none.
func TestResultReportsTheExitCode(t *testing.T) {
	later := t0.Add(time.Minute + 5*time.Second)
	tests := []struct {
		name string
		s    *decide.Snapshot
		p    decide.Policy
		want string
	}{
		{"succeeded", snapOf(later, runOf(driver("n1", 1, exited(0, "Completed")))), never(t), "0"},
		{"failed", snapOf(later, runOf(driver("n1", 1, exited(1, "Error")))), never(t), "1"},
		{"OOMKilled", snapOf(later, runOf(driver("n1", 1, exited(137, "OOMKilled")))), never(t), "137"},
		{"failed, a rerun waits", snapOf(later, runOf(driver("n1", 1, exited(1, "Error")))), onFailure(t), "1"},
		{"running", snapOf(later, runOf(driver("n1", 1, running()))), never(t), "unset"},
		{"pending", snapOf(later, runOf(driver("n1", 1))), never(t), "unset"},
		{"never started: its image cannot be pulled", snapOf(later, runOf(driver("n1", 1, waitingOn("ImagePullBackOff")))), never(t), "unset"},
		{"evicted before it ran", snapOf(later, runOf(driver("n1", 1, evicted()))), never(t), "unset"},
		{"timed out: sparkplug stops it", snapOf(t0.Add(11*time.Minute), runOf(driver("n1", 1, running()))), policyOf(t, "", 10*time.Minute), "unset"},
		{"timed out, stopped: its tombstone", snapOf(t0.Add(11*time.Minute), tombOf("n1", 1, decide.LimitTimeout, t0.Add(10*time.Minute))), policyOf(t, "", 10*time.Minute), "unset"},
	}
	c := &Core{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := decide.Decide(tt.s, tt.p)
			if !pl.Report || pl.Driver == nil {
				t.Fatalf("plan %+v: want a report naming the driver", pl)
			}
			r := asReply(c.result(pl.Outcome, pl.Driver, pl.JSON, tt.p.Body, nil))
			if got := exitCodeOf(r); got != tt.want {
				t.Errorf("outputs.exitCode %s, want %s (%s %q)", got, tt.want, r.Node.Phase, r.Node.Message)
			}
		})
	}
	// Without a driver there are no outputs at all.
	if got := exitCodeOf(asReply(c.result(decide.SubmitRunning(), nil, false, never(t).Body, nil))); got != "unset" {
		t.Errorf("a result without a driver: exitCode %s", got)
	}
}

// The interim hold defaults to the writer's (nodestatus.DefaultInterimHold);
// 0, every state written at once, is kept by Validate, and a negative one
// is refused by its name.
func TestInterimHoldOption(t *testing.T) {
	if d := DefaultOptions(); d.InterimHold != nodestatus.DefaultInterimHold || d.InterimHold <= 0 {
		t.Errorf("default %s, want nodestatus.DefaultInterimHold (%s), more than 0", d.InterimHold, nodestatus.DefaultInterimHold)
	}
	for _, tc := range []struct{ set, want time.Duration }{
		{0, 0},
		{3 * time.Second, 3 * time.Second},
		{-time.Second, -1},
	} {
		o := DefaultOptions()
		o.InterimHold = tc.set
		err := o.Validate()
		var se *setting.Error
		switch {
		case tc.want < 0 && (!errors.As(err, &se) || se.Name != "interim-hold"):
			t.Errorf("%s: %v, want a refusal of interim-hold", tc.set, err)
		case tc.want >= 0 && err != nil:
			t.Errorf("%s: %v", tc.set, err)
		case tc.want >= 0 && o.InterimHold != tc.want:
			t.Errorf("%s: %s after Validate, want %s", tc.set, o.InterimHold, tc.want)
		}
	}
}
