package nodestatus_test

// How many writes of the TaskSet a node's life costs (life_test.go): a
// normal life at most two, Running and its final result; a state a
// person wants to see (PENDING_RERUN, a wait longer than the interim
// hold) one more each; progress at most once per progress interval.

import (
	"strconv"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/nodestatus"
)

const (
	lifeBody    = `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","executor":{"instances":2}}`
	archiveBody = `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","executor":{"instances":2},` +
		`"sparkplug":{"archiveLogs":true}}`
	rerunBody = `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","executor":{"instances":2},` +
		`"restartPolicy":{"type":"OnFailure","onFailureRetries":1,"onFailureRetryInterval":5}}`
)

// start is a typical start of attempt 1, which the first pass launches
// at 0 s: bound at 1 s, its image pulled from 2 s, its driver running at
// 4 s, its executors asked for at 5 s and running at 7 s.
func start(e *lifeEnv) map[int]func() {
	return map[int]func(){
		1: func() { e.scheduled("") },
		2: func() { e.scheduled("ContainerCreating") },
		4: func() { e.running() },
		5: func() { e.executors(2, corev1.PodPending) },
		7: func() { e.executors(2, corev1.PodRunning) },
	}
}

// phases are the phases of the writes, in order.
func phases(ws []write) []wfv1.NodePhase {
	var out []wfv1.NodePhase
	for _, w := range ws {
		out = append(out, w.res.Phase)
	}
	return out
}

// checkRunningThenFinal: the writes are the first RUNNING message and the
// final result, its message containing final.
func checkRunningThenFinal(t *testing.T, e *lifeEnv, phase wfv1.NodePhase, final string) {
	t.Helper()
	t.Logf("%d writes:%s", len(e.writes), e.trace())
	if len(e.writes) > 2 {
		t.Fatalf("a normal life cost %d writes, want at most 2 (Running, final):%s", len(e.writes), e.trace())
	}
	if len(e.writes) != 2 || e.writes[0].res.Phase != wfv1.NodeRunning || !strings.HasPrefix(e.writes[0].res.Message, "RUNNING") ||
		e.writes[1].res.Phase != phase || !strings.Contains(e.writes[1].res.Message, final) {
		t.Fatalf("writes %v, want Running RUNNING... then %s %q:%s", phases(e.writes), phase, final, e.trace())
	}
}

// A driver that starts, runs, reports progress and succeeds: Running and
// Succeeded, nothing of the seconds it was SUBMITTED, nothing of its
// executors coming up or of Spark's progress within the first interval.
func TestNormalLifeCostsTwoWrites(t *testing.T) {
	e := newLife(t, lifeBody, nil)
	s := start(e)
	s[10] = func() { e.progress = "stage 1/2, 10/100 tasks" }
	s[15] = func() { e.progress = "stage 2/2, 60/100 tasks" }
	s[20] = func() { e.exit(0) }
	e.live(60, s)
	checkRunningThenFinal(t, e, wfv1.NodeSucceeded, "COMPLETED")
	if out := e.writes[1].res.Outputs; out == nil || out.ExitCode == nil || *out.ExitCode != "0" {
		t.Errorf("the final result's outputs %+v, want exit code 0", out)
	}
	if e.writes[0].at != 4 {
		t.Errorf("Running written at %ds, want at 4s, as the driver started", e.writes[0].at)
	}
}

// A driver that fails: Running, then Failed with the driver's reason.
func TestFailedLifeCostsTwoWrites(t *testing.T) {
	e := newLife(t, lifeBody, nil)
	s := start(e)
	s[12] = func() { e.exit(1) }
	e.live(40, s)
	checkRunningThenFinal(t, e, wfv1.NodeFailed, "FAILED: driver exited 1 (Error)")
}

// An attempt that fails and is run again: PENDING_RERUN is a state a
// person wants to see, written at once; the second attempt's SUBMITTED
// seconds are not; its RUNNING and the final result are.
func TestRerunLifeWritesPendingRerunOnce(t *testing.T) {
	e := newLife(t, rerunBody, nil)
	s := start(e)
	s[10] = func() { e.exit(1) } // attempt 2 is launched at 15 s
	s[16] = func() {
		if len(e.pods) != 2 {
			t.Fatalf("16s: %d attempts, want the second launched at 15s", len(e.pods))
		}
		e.scheduled("ContainerCreating")
	}
	s[18] = func() { e.running() }
	s[19] = func() { e.executors(2, corev1.PodRunning) }
	s[30] = func() { e.exit(0) }
	e.live(60, s)
	t.Logf("%d writes:%s", len(e.writes), e.trace())
	want := []string{"RUNNING", "PENDING_RERUN: attempt 2/2 in 5s", "RUNNING", "COMPLETED"}
	if len(e.writes) != len(want) {
		t.Fatalf("%d writes, want %d: %v:%s", len(e.writes), len(want), want, e.trace())
	}
	for i, w := range want {
		if !strings.HasPrefix(e.writes[i].res.Message, w) {
			t.Errorf("write %d is %q, want it to open with %q", i+1, e.writes[i].res.Message, w)
		}
	}
	if e.writes[1].at != 10 {
		t.Errorf("PENDING_RERUN written at %ds, want at once, 10s", e.writes[1].at)
	}
	if !strings.HasSuffix(e.writes[2].res.Message, "(attempt 2/2)") {
		t.Errorf("the second RUNNING is %q, want it to name attempt 2/2", e.writes[2].res.Message)
	}
}

// A driver whose image takes 40 s to pull: the wait outlasts the pending
// hold, so it is shown, once, when the hold runs out, in its own words.
func TestSlowImagePullIsShownAfterTheHold(t *testing.T) {
	e := newLife(t, lifeBody, nil)
	hold := int(e.opts.InterimHold / time.Second)
	if hold <= 0 || hold >= 40 {
		t.Fatalf("interim hold %s: this life's pull (40 s) must outlast it", e.opts.InterimHold)
	}
	e.live(70, map[int]func(){
		1:  func() { e.scheduled("") },
		2:  func() { e.scheduled("ContainerCreating") },
		42: func() { e.running() },
		50: func() { e.exit(0) },
	})
	t.Logf("%d writes:%s", len(e.writes), e.trace())
	if len(e.writes) != 3 {
		t.Fatalf("%d writes, want 3: the wait, Running, Succeeded:%s", len(e.writes), e.trace())
	}
	w := e.writes[0]
	if w.res.Phase != wfv1.NodePending || w.res.Message != "SUBMITTED: driver pending (ContainerCreating)" {
		t.Errorf("the first write is %s, want Pending SUBMITTED: driver pending (ContainerCreating)", w)
	}
	// SUBMITTED since 1 s (the first pass that saw the driver); the
	// writer's tick comes within a second of the hold.
	if w.at < 1+hold || w.at > 2+hold {
		t.Errorf("the wait written at %ds, want when the hold ran out, %d to %ds", w.at, 1+hold, 2+hold)
	}
	if phases(e.writes)[1] != wfv1.NodeRunning || phases(e.writes)[2] != wfv1.NodeSucceeded {
		t.Errorf("writes %v, want the wait, Running, Succeeded", phases(e.writes))
	}
}

// A driver that runs for two minutes and more: between Running and the
// final result, its message (executors, elapsed time, Spark's progress)
// is written at most once per progress interval.
func TestLongLifeWritesProgressPerInterval(t *testing.T) {
	e := newLife(t, lifeBody, nil)
	s := start(e)
	for at := 10; at < 130; at += 10 {
		s[at] = func() { e.progress = "stage 1/1, " + strconv.Itoa(at) + " tasks" }
	}
	s[130] = func() { e.exit(0) }
	e.live(150, s)
	t.Logf("%d writes:%s", len(e.writes), e.trace())
	interval := e.opts.ProgressInterval
	ran := 130 - 4
	if most := 2 + ran/int(interval/time.Second); len(e.writes) > most {
		t.Fatalf("%d writes in %ds of running, want at most %d (Running, final, one per %s):%s", len(e.writes), ran, most, interval, e.trace())
	}
	if len(e.writes) < 4 {
		t.Fatalf("%d writes, want progress written as the interval allows:%s", len(e.writes), e.trace())
	}
	for i := 1; i < len(e.writes)-1; i++ {
		if gap := time.Duration(e.writes[i].at-e.writes[i-1].at) * time.Second; gap < interval {
			t.Errorf("progress written %s after the write before, want at least %s:%s", gap, interval, e.trace())
		}
	}
}

// A normal life whose every write first meets a write of Argo's (the
// TaskSet's version moved on since the writer's view): each conflict is
// read afresh and decided again, within Tries requests a batch; the
// TaskSet still takes two writes, which is all Argo answers.
func TestConflictsAreNotWritesOfTheLife(t *testing.T) {
	e := newLife(t, lifeBody, nil)
	e.conflictAt[1], e.conflictAt[3] = true, true
	s := start(e)
	s[20] = func() { e.exit(0) }
	e.live(40, s)
	checkRunningThenFinal(t, e, wfv1.NodeSucceeded, "COMPLETED")
	if e.conflicts != 2 || e.requests != 4 {
		t.Errorf("%d requests, %d conflicts; want 4 and 2: each conflict, then its batch again", e.requests, e.conflicts)
	}
	if e.flushRequests > e.opts.Tries {
		t.Errorf("one Flush sent %d patches, want at most Tries (%d)", e.flushRequests, e.opts.Tries)
	}
}

// A step that stores its driver's log: the seconds the upload takes
// after the driver ended (COMPLETED; archiving the driver log) are not
// written when they are few, and are, once, when they outlast the hold.
func TestArchivingLifeHoldsTheUpload(t *testing.T) {
	for _, tc := range []struct {
		upload time.Duration
		want   int
	}{{3 * time.Second, 2}, {30 * time.Second, 3}} {
		t.Run(tc.upload.String(), func(t *testing.T) {
			e := newLife(t, archiveBody, nil)
			e.upload = tc.upload
			s := start(e)
			s[20] = func() { e.exit(0) }
			e.live(80, s)
			t.Logf("%d writes:%s", len(e.writes), e.trace())
			if len(e.writes) != tc.want {
				t.Fatalf("%d writes, want %d:%s", len(e.writes), tc.want, e.trace())
			}
			last := e.writes[len(e.writes)-1]
			if last.res.Phase != wfv1.NodeSucceeded || last.at < 20+int(tc.upload/time.Second) {
				t.Errorf("the final write %s, want Succeeded once the log was stored, at %s", last, 20*time.Second+tc.upload)
			}
			if tc.want == 3 && e.writes[1].res.Message != "COMPLETED; archiving the driver log" {
				t.Errorf("the second write %s, want the upload that outlasted the hold", e.writes[1])
			}
		})
	}
}

// With no hold, every SUBMITTED message is written as before: the rule
// the lives above rely on is the hold, and this shows the count can grow.
func TestWithoutInterimHoldEveryWaitIsWritten(t *testing.T) {
	e := newLife(t, lifeBody, func(o *nodestatus.Options) { o.InterimHold = 0 })
	s := start(e)
	s[20] = func() { e.exit(0) }
	e.live(40, s)
	t.Logf("%d writes:%s", len(e.writes), e.trace())
	if len(e.writes) <= 2 || e.writes[0].res.Phase != wfv1.NodePending {
		t.Fatalf("%d writes, want the SUBMITTED messages written too:%s", len(e.writes), e.trace())
	}
}
