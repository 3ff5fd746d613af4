package decide

import (
	"strings"
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// A running driver's message carries Spark's progress as the snapshot
// has it, after the executor count and elapsed time; without progress
// (the UI does not answer) those alone; a finished driver's never.
func TestRunningMessageCarriesSparksProgress(t *testing.T) {
	d := driver(1, running())
	running := state.Outcome{State: spark.StateRunning, Phase: state.PhaseRunning, Counts: "3/3 executors", Elapsed: 4*time.Minute + 30*time.Second}
	if got, want := driverParts(running, d, "stage 4/7, 1,200/3,000 tasks").Message(), "RUNNING 3/3 executors, 4m30s, stage 4/7, 1,200/3,000 tasks"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if got := driverParts(running, d, "").Message(); got != "RUNNING 3/3 executors, 4m30s" {
		t.Errorf("unreachable UI: message %q", got)
	}
	done := state.Outcome{State: spark.StateCompleted, Phase: state.PhaseSucceeded}
	if got := driverParts(done, d, "stage 4/7, 1,200/3,000 tasks").Message(); got != "COMPLETED" {
		t.Errorf("finished driver: message %q, want COMPLETED", got)
	}
	if got := driverParts(running, d, strings.Repeat("9", 500)).Progress; len(got) > MaxProgressBytes+8 {
		t.Errorf("progress of %d bytes shown", len(got))
	}
	// Through Decide: the snapshot's progress shows in the report.
	s := snap(t0.Add(time.Minute), runOf(d), func(s *Snapshot) { s.Progress = "stage 1/2, 5/10 tasks" })
	if pl := Decide(s, policyOf(t, "", 0)); !pl.Report || !strings.HasPrefix(pl.Outcome.Message(), "RUNNING ") || !strings.HasSuffix(pl.Outcome.Message(), ", stage 1/2, 5/10 tasks") {
		t.Errorf("Decide: %q; want RUNNING with Spark's progress", pl.Outcome.Message())
	}
}

// Why a driver's log could not be stored, as the archive recorded it on
// the driver, ends the message of a report naming it, bounded.
func TestALogNotArchivedIsSaid(t *testing.T) {
	failed := state.Outcome{State: spark.StateFailed, Phase: state.PhaseFailed, Detail: "driver exited 1 (Error)"}
	d := driver(1, exited(1, "Error"), annotated(spark.AnnotationDriverLogError, "store s3://logs/x: Access Denied"))
	if got, want := driverParts(failed, d, "").Message(), "FAILED: driver exited 1 (Error); driver log not archived: store s3://logs/x: Access Denied"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	long := driver(1, exited(1, "Error"), annotated(spark.AnnotationDriverLogError, strings.Repeat("x", 5000)))
	note := strings.TrimPrefix(driverParts(failed, long, "").Message(), failed.Message())
	if len(note) > spark.MaxDriverLogErrorBytes+64 || !strings.HasPrefix(note, "; driver log not archived: xxx") {
		t.Errorf("note of %d bytes: %.80q", len(note), note)
	}
	if got := driverParts(failed, driver(1, exited(1, "Error")), "").Message(); got != failed.Message() {
		t.Errorf("stored or not asked: %q", got)
	}
}
