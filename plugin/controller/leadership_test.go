package controller

import (
	"context"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/monitor"
)

// fakeDuties records the monitor's duties as one leadership runs them.
type fakeDuties struct {
	leads   int
	expire  func(context.Context)
	stepsOn bool // the steps ran, and had not ended, while the duties ran
	steps   *fakeSteps
}

func (d *fakeDuties) Lead(ctx context.Context, _ monitor.Clients, expire func(context.Context)) {
	d.leads++
	d.expire = expire
	d.stepsOn = d.steps.started == 1 && d.steps.waited == 0
}

// fakeSteps counts what a leadership does with the Spark steps.
type fakeSteps struct{ started, waited, expired int }

func (s *fakeSteps) start(context.Context) (func(context.Context), func()) {
	s.started++
	return func(context.Context) { s.expired++ }, func() { s.waited++ }
}

// One leadership starts the steps and the monitor's duties once each:
// the duties' one cleanup loop expires the steps' finished drivers, and
// the steps end after the duties did. A leadership already over starts
// neither.
func TestALeadershipRunsTheStepsAndTheMonitorsDutiesOnce(t *testing.T) {
	s := &fakeSteps{}
	d := &fakeDuties{steps: s}
	leadership(context.Background(), s.start, d, monitor.Clients{})
	if s.started != 1 || d.leads != 1 || s.waited != 1 {
		t.Fatalf("steps started %d, duties led %d, steps waited for %d times; want once each", s.started, d.leads, s.waited)
	}
	if !d.stepsOn {
		t.Error("the duties ran while the steps were not running")
	}
	if d.expire == nil {
		t.Fatal("the duties' cleanup loop got no expire")
	}
	d.expire(context.Background())
	if s.expired != 1 {
		t.Errorf("the duties' expire expired the steps' drivers %d times, want 1", s.expired)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s2 := &fakeSteps{}
	d2 := &fakeDuties{steps: s2}
	leadership(ctx, s2.start, d2, monitor.Clients{})
	if s2.started != 0 || d2.leads != 0 {
		t.Errorf("a leadership over: steps started %d, duties led %d; want neither", s2.started, d2.leads)
	}
}

// The controller's process gives the monitor's duties what the monitor
// runs with, and its own Lease.
func TestTheControllerRunsTheMonitorsDutiesOnItsOwnLease(t *testing.T) {
	c := DefaultConfig()
	if e := c.Monitor.Election(); e.Name != DefaultLeaseName || !e.Enabled {
		t.Errorf("election %+v; want the Lease %s", e, DefaultLeaseName)
	}
	if got := c.Monitor.Client().UserAgent; got != "sparkplug-monitor/" {
		t.Errorf("the duties' user agent %q; want the monitor's", got)
	}
}
