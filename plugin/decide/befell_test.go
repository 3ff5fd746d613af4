package decide

import (
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// A refused launch, pass by pass: the first pass launches; its act
// records the refusal (counted, and what befell); the next pass decides
// on it (a retry soon, no launch); a later pass, gathered afresh, backs
// off, then launches again; the refusal after the last retry fails the
// node.
func TestARefusalIsRecordedThenDecided(t *testing.T) {
	p := policyOf(t, onFailureRP, 0) // onSubmissionFailureRetries 2, interval 5s
	s := snap(t0, nil)
	if pl := Decide(s, p); pl.Launch != 1 || pl.Report {
		t.Fatalf("first pass: %+v; want attempt 1 launched", pl)
	}
	// What act records of the refusal.
	s.Failures = map[int]Failure{1: {Count: 1, At: t0, Message: "pods is forbidden"}}
	s.Befell = &Befell{Kind: Rejected, Attempt: 1, Message: "pods is forbidden"}
	pl := Decide(s, p)
	if pl.Launch != 0 || !pl.Report || pl.Driver != nil || pl.Outcome.Phase != state.PhasePending ||
		pl.Outcome.Message() != "SUBMISSION_FAILED: retry 1/2 soon: pods is forbidden" {
		t.Fatalf("the pass after the refusal: %+v %q", pl, pl.Outcome.Message())
	}
	// A pass gathered afresh: no Befell, the count in memory.
	s = snap(t0.Add(time.Second), nil, func(s *Snapshot) { s.Failures = map[int]Failure{1: {Count: 1, At: t0, Message: "pods is forbidden"}} })
	if pl := Decide(s, p); pl.Launch != 0 || pl.Outcome.Message() != "SUBMISSION_FAILED: retry 1/2 in 4s: pods is forbidden" {
		t.Fatalf("within the backoff: %+v %q", pl, pl.Outcome.Message())
	}
	s.Now = t0.Add(5 * time.Second)
	if pl := Decide(s, p); pl.Launch != 1 {
		t.Fatalf("after the backoff: %+v; want attempt 1 launched again", pl)
	}
	// The third refusal uses up both retries.
	s.Failures = map[int]Failure{1: {Count: 3, At: s.Now, Message: "pods is forbidden"}}
	s.Befell = &Befell{Kind: Rejected, Attempt: 1, Message: "pods is forbidden"}
	if pl := Decide(s, p); pl.Launch != 0 || !pl.Report || pl.Outcome.Phase != state.PhaseFailed || pl.Outcome.Message() != "SUBMISSION_FAILED: pods is forbidden" {
		t.Fatalf("the last refusal: %+v %q; want Failed", pl, pl.Outcome.Message())
	}
}

// What befell an action decides the next pass's report, and the pass
// does nothing else: no launch, stop, Workload or archive, whatever the
// run would otherwise ask for.
func TestWhatBefellIsReportedAlone(t *testing.T) {
	p := policyOf(t, onFailureRP, 0)
	for _, tc := range []struct {
		name   string
		b      Befell
		phase  state.Phase
		msg    string
		others func(*Snapshot)
	}{
		{"a spark-submit runs on", Befell{Kind: Submitting, Attempt: 1}, state.PhasePending, SubmitRunning().Message(), nil},
		{"no spark-submit slot", Befell{Kind: NoSlot, Attempt: 1, Running: 3}, state.PhasePending, SubmitQueued(3).Message(), nil},
		{"an interrupted launch", Befell{Kind: Interrupted, Message: "create driver pod x: timeout"}, state.PhasePending,
			"SUBMITTED: retrying after a transient API error: create driver pod x: timeout", nil},
		{"an unlaunchable attempt", Befell{Kind: Unlaunchable, Message: "build driver objects: bad"}, state.PhaseFailed,
			"SUBMISSION_FAILED: build driver objects: bad", nil},
		{"a refusal memory lost", Befell{Kind: Rejected, Attempt: 2, Message: "no"}, state.PhasePending, "SUBMISSION_FAILED: retry 1/2 soon: no", nil},
		{"a kind unknown", Befell{Kind: "odd", Message: "m"}, state.PhasePending, "SUBMITTED: retrying after a transient API error: unknown outcome of an action (odd): m", nil},
		{"a relaunch after a failed attempt", Befell{Kind: Rejected, Attempt: 2, Message: "no"}, state.PhasePending, "SUBMISSION_FAILED: retry 1/2 soon: no",
			func(s *Snapshot) {
				s.Run = runOf(driver(1, exited(1, "Error")))
				s.Failures = map[int]Failure{2: {Count: 1, At: s.Now, Message: "no"}}
			}},
		{"a loop's child reports JSON", Befell{Kind: Submitting, Attempt: 1}, state.PhasePending, SubmitRunning().Message(),
			named("wf.spark(0:1)")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(t0.Add(time.Hour), nil)
			if tc.others != nil {
				tc.others(s)
			}
			s.Befell = &tc.b
			pl := Decide(s, p)
			loop := tc.name == "a loop's child reports JSON"
			if pl.Launch != 0 || pl.Stop != LimitNone || pl.Abandon || pl.Ensure || pl.Archive || pl.KueueEnqueue != 0 ||
				pl.KueueDequeue != nil || pl.PodsReady != nil || pl.Admission != nil || pl.Driver != nil || !pl.Report || pl.JSON != loop {
				t.Errorf("plan %+v; want the report alone", pl)
			}
			if pl.Outcome.Phase != tc.phase || pl.Outcome.Message() != tc.msg {
				t.Errorf("outcome %s %q; want %s %q", pl.Outcome.Phase, pl.Outcome.Message(), tc.phase, tc.msg)
			}
		})
	}
}
