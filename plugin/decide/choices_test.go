package decide

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/state"
	corev1 "k8s.io/api/core/v1"
)

// recorded is the snapshot of the pass after one whose plan pl an action
// cut short with b: the same snapshot, with what act recorded.
func recorded(s *Snapshot, pl Plan, b Befell) *Snapshot {
	next := *s
	next.Befell, next.Acted = &b, &pl
	return &next
}

// A companion of a live driver refused, pass by pass: the first pass
// makes sure of the driver's companions; its act records the refusal and
// deletes nothing; the next pass decides. A running driver runs on
// without it (the rest of the plan before, the companion waived); one
// that has not started, or whose companion's name another holds, is
// deleted and its submission counted as refused; the pass after that
// reports the refusal.
func TestACompanionRefusedIsRecordedThenDecided(t *testing.T) {
	p := policyOf(t, onFailureRP, 0)
	const said = "create Service wf-driver-svc: services is forbidden"
	for _, tc := range []struct {
		name string
		d    *corev1.Pod
		held bool
		keep bool
	}{
		{"a running driver runs on", driver(1, running()), false, true},
		{"a driver not started is deleted", driver(1), false, false},
		{"a running driver with another's companion is deleted", driver(1, running()), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := snap(t0.Add(time.Minute), runOf(tc.d))
			pl := Decide(s, p)
			if !pl.Ensure || !pl.Report || pl.Waive != "" || pl.Discard != nil || pl.Refuse != 0 {
				t.Fatalf("first pass: %+v; want the companions made sure of, and a report", pl)
			}
			next := Decide(recorded(s, pl, Befell{Kind: CompanionRefused, Attempt: 1, Driver: tc.d, Held: tc.held, Message: said}), p)
			if tc.keep {
				want := pl
				want.Ensure, want.Waive = false, said
				if !reflect.DeepEqual(next, want) {
					t.Fatalf("the pass after:\n%+v\nwant the plan before, the companion waived:\n%+v", next, want)
				}
				return
			}
			if want := (Plan{Discard: tc.d, Refuse: 1, Refusal: said}); !reflect.DeepEqual(next, want) {
				t.Fatalf("the pass after: %+v; want the driver deleted and the refusal counted, nothing else", next)
			}
			// What act records of the refusal it counted.
			after := recorded(s, next, Befell{Kind: Rejected, Attempt: 1, Message: said})
			after.Failures = map[int]Failure{1: {Count: 1, At: s.Now, Message: said}}
			last := Decide(after, p)
			if !last.Report || last.Refuse != 0 || last.Discard != nil || last.Outcome.Message() != "SUBMISSION_FAILED: retry 1/2 soon: "+said {
				t.Fatalf("the pass reporting it: %+v %q", last, last.Outcome.Message())
			}
		})
	}
}

// A driver a launch just made whose companion is refused never runs on,
// whatever its phase says.
func TestACompanionRefusedAtLaunchIsARefusal(t *testing.T) {
	p := policyOf(t, onFailureRP, 0)
	s := snap(t0, nil)
	pl := Decide(s, p)
	made := driver(1, running())
	next := Decide(recorded(s, pl, Befell{Kind: CompanionRefused, Attempt: 1, Driver: made, Message: "no"}), p)
	if want := (Plan{Discard: made, Refuse: 1, Refusal: "no"}); !reflect.DeepEqual(next, want) {
		t.Fatalf("the pass after: %+v; want %+v", next, want)
	}
}

// A launch whose names another's objects hold, pass by pass: the first
// pass launches; its act records the names taken (and the driver it made,
// if any), withdraws nothing else; the next pass launches the same
// attempt again under names drawn now, deleting the driver made, and
// does what the plan before had left; names held again once drawn, or a
// launcher that takes no drawn names, count a refused submission.
func TestNamesTakenAreRecordedThenDecided(t *testing.T) {
	p := policyOf(t, onFailureRP, 0)
	s := snap(t0, nil)
	pl := Decide(s, p)
	if pl.Launch != 1 || pl.DrawNames {
		t.Fatalf("first pass: %+v; want attempt 1 launched under the run's names", pl)
	}
	made := driver(1)
	for _, tc := range []struct {
		name string
		b    Befell
		p    Policy
		want Plan
	}{
		{"the driver's name held", Befell{Kind: NamesTaken, Attempt: 1, Message: "pod x exists"}, p,
			Plan{Launch: 1, DrawNames: true}},
		{"a companion's name held", Befell{Kind: NamesTaken, Attempt: 1, Driver: made, Message: "Service x exists"}, p,
			Plan{Launch: 1, DrawNames: true, Discard: made}},
		{"held again under drawn names", Befell{Kind: NamesTaken, Attempt: 1, Driver: made, Drawn: true, Message: "Service y exists"}, p,
			Plan{Discard: made, Refuse: 1, Refusal: "Service y exists"}},
		{"the driver's name held again under drawn names", Befell{Kind: NamesTaken, Attempt: 1, Drawn: true, Message: "pod y exists"}, p,
			Plan{Refuse: 1, Refusal: "pod y exists"}},
		{"spark-submit takes no drawn names", Befell{Kind: NamesTaken, Attempt: 1, Driver: made, Message: "Service x exists"},
			func() Policy { q := p; q.SparkSubmit = true; return q }(),
			Plan{Discard: made, Refuse: 1, Refusal: "Service x exists"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decide(recorded(s, pl, tc.b), tc.p); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("the pass after:\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

// A relaunch whose names are held: the pass before stopped the attempt
// a limit ended and reported the rerun; the pass after stops nothing
// again, launches under drawn names and reports what the plan before
// reported.
func TestNamesTakenAtARelaunchKeepTheRestOfThePlan(t *testing.T) {
	p := policyOf(t, `"sparkplug":{"pendingTimeout":"5m"},`+onFailureRP, 0)
	s := snap(t0.Add(10*time.Minute), runOf(driver(1, waitingOn("ImagePullBackOff"))))
	pl := Decide(s, p)
	if pl.Stop == LimitNone || pl.Launch != 2 || !pl.Report {
		t.Fatalf("first pass: %+v; want attempt 1 stopped, 2 launched, the rerun reported", pl)
	}
	got := Decide(recorded(s, pl, Befell{Kind: NamesTaken, Attempt: 2, Message: "pod x exists"}), p)
	want := pl
	want.Stop, want.Ensure, want.KueueDequeue, want.DrawNames = LimitNone, false, nil, true
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the pass after:\n%+v\nwant\n%+v", got, want)
	}
}

// A node no pass follows: a workflow whose node status was not read
// fails once the node was listed long enough; an invalid step fails at
// once, saying why.
func TestUnfollowedNodes(t *testing.T) {
	if pl := Unread("too many nodes", time.Second, time.Minute); pl.Report {
		t.Errorf("listed 1s of 1m: %+v; want nothing reported", pl)
	}
	pl := Unread("too many nodes", time.Minute, time.Minute)
	if !pl.Report || pl.Outcome.Phase != state.PhaseFailed || pl.Launch != 0 ||
		pl.Outcome.Message() != "sparkplug refused this workflow: too many nodes; its Spark steps do not run" {
		t.Errorf("listed 1m of 1m: %+v %q; want Failed", pl, pl.Outcome.Message())
	}
	pl = Unrunnable(errors.New("spark.image: Required value"))
	if !pl.Report || pl.Outcome.Phase != state.PhaseFailed || pl.Launch != 0 || pl.Outcome.Message() != "spark.image: Required value" {
		t.Errorf("invalid: %+v %q; want Failed with the reason alone", pl, pl.Outcome.Message())
	}
}
