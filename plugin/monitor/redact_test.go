package monitor

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The Event of a deleted driver quotes its node annotation, which anyone
// who may create pods writes: it shows no secret (package redact).
func TestSweepEventIsRedacted(t *testing.T) {
	yes := new(bool)
	*yes = true
	e := newSweepEnv(t, t0.Add(2*time.Hour))
	done := e.workflow(t, "done", "uid-done", yes, yes)
	e.driver(t, done, "n1 password=leak01", driverRunning(time.Minute))
	sweep(context.Background(), e.c, e.w)
	close(e.recorder.Events)
	n := 0
	for ev := range e.recorder.Events {
		n++
		if strings.Contains(ev, "leak01") || !strings.Contains(ev, "of node n1 password=") {
			t.Errorf("Event %q", ev)
		}
	}
	if n != 1 {
		t.Errorf("%d Events, want 1", n)
	}
}
