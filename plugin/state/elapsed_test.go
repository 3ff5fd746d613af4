package state

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestElapsed(t *testing.T) {
	const half = 30 * time.Second
	tests := []struct {
		name     string
		ran      time.Duration // now - started
		started  time.Time
		interval time.Duration
		want     time.Duration
	}{
		{"just started", 0, t0, half, 0},
		{"under one interval shows nothing", 29*time.Second + 999*time.Millisecond, t0, half, 0},
		{"one interval exactly", half, t0, half, half},
		{"rounded down, never up", 59*time.Second + 999*time.Millisecond, t0, half, half},
		{"minutes", 4*time.Minute + 45*time.Second, t0, half, 4*time.Minute + 30*time.Second},
		{"an hour and more", time.Hour + 2*time.Minute + 10*time.Second, t0, half, time.Hour + 2*time.Minute},
		{"a minute's interval", 4*time.Minute + 59*time.Second, t0, time.Minute, 4 * time.Minute},
		{"a second's interval", 45*time.Second + 700*time.Millisecond, t0, time.Second, 45 * time.Second},
		{"off", time.Hour, t0, 0, 0},
		{"start unknown", time.Hour, time.Time{}, half, 0},
		{"a start ahead of this clock", -time.Minute, t0, half, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := t0.Add(tt.ran)
			if got := Elapsed(now, tt.started, tt.interval); got != tt.want {
				t.Errorf("Elapsed(started+%s, interval %s) = %s, want %s", tt.ran, tt.interval, got, tt.want)
			}
		})
	}
}

func TestFormatElapsed(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{-time.Second, "0s"},
		{1500 * time.Millisecond, "1s"},
		{45 * time.Second, "45s"},
		{time.Minute, "1m"},
		{4*time.Minute + 30*time.Second, "4m30s"},
		{59*time.Minute + 59*time.Second, "59m59s"},
		{time.Hour, "1h"},
		{time.Hour + 2*time.Minute, "1h2m"},
		{time.Hour + 2*time.Minute + 59*time.Second, "1h2m"},
		{26*time.Hour + 5*time.Minute, "26h5m"},
		{1000 * time.Hour, "1000h"},
	}
	for _, tt := range tests {
		if got := FormatElapsed(tt.d); got != tt.want {
			t.Errorf("FormatElapsed(%s) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// runningAt is the message of a driver running since t0 with two of two
// executors, observed at now.
func runningAt(now time.Time, interval time.Duration) string {
	return Assess(Observed{
		Driver:           driverPod(corev1.PodRunning, ctr(running())),
		Executors:        repeat(2, executorPod(corev1.PodRunning)),
		Expected:         2,
		Now:              now,
		ProgressInterval: interval,
	}).Message()
}

// A running driver's message opens as it always did, stays the same
// within an interval, and changes exactly when one more interval has
// passed: at most once per interval, from the clock alone.
func TestRunningMessageChangesOncePerInterval(t *testing.T) {
	const interval = 30 * time.Second
	changes := 0
	prev := runningAt(t0, interval)
	if prev != "RUNNING 2/2 executors" {
		t.Fatalf("at the start: %q, want the bare count", prev)
	}
	for s := time.Duration(1); s <= 10*time.Minute/time.Second; s++ {
		now := t0.Add(s * time.Second)
		msg := runningAt(now, interval)
		if !strings.HasPrefix(msg, "RUNNING 2/2 executors") {
			t.Fatalf("at +%ds: %q does not open with the executor count", s, msg)
		}
		boundary := (s*time.Second)%interval == 0
		switch {
		case msg != prev && !boundary:
			t.Fatalf("at +%ds, within an interval, the message changed: %q -> %q", s, prev, msg)
		case msg == prev && boundary:
			t.Fatalf("at +%ds, an interval on, the message stayed %q", s, msg)
		case msg != prev:
			changes++
		}
		prev = msg
	}
	if changes != 20 {
		t.Errorf("%d changes in 10 minutes, want 20", changes)
	}
	for _, tc := range []struct {
		ran  time.Duration
		want string
	}{
		{45 * time.Second, "RUNNING 2/2 executors, 30s"},
		{4*time.Minute + 40*time.Second, "RUNNING 2/2 executors, 4m30s"},
		{time.Hour + 2*time.Minute + 45*time.Second, "RUNNING 2/2 executors, 1h2m"},
	} {
		if got := runningAt(t0.Add(tc.ran), interval); got != tc.want {
			t.Errorf("at +%s: %q, want %q", tc.ran, got, tc.want)
		}
	}
}

// With the interval 0 the message is the executor count alone, however
// long the driver runs.
func TestRunningMessageWithoutProgress(t *testing.T) {
	for _, ran := range []time.Duration{0, 45 * time.Second, 3 * time.Hour} {
		if got := runningAt(t0.Add(ran), 0); got != "RUNNING 2/2 executors" {
			t.Errorf("at +%s with progress off: %q", ran, got)
		}
	}
}

// The time comes after the counts, before a detail and a note; only a
// running driver shows it.
func TestElapsedPlaceInTheMessage(t *testing.T) {
	o := Outcome{State: "RUNNING", Counts: "1/3 executors (2 pending)", Elapsed: 90 * time.Second, Detail: "driver pod is being deleted", Attempt: Attempt{N: 2, Of: 3}}
	if got, want := o.Message(), "RUNNING 1/3 executors (2 pending), 1m30s: driver pod is being deleted (attempt 2/3)"; got != want {
		t.Errorf("Message() = %q, want %q", got, want)
	}
	deleting := driverPod(corev1.PodRunning, ctr(running()))
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	a := Assess(Observed{Driver: deleting, Now: t0.Add(time.Minute), ProgressInterval: 30 * time.Second})
	if got, want := a.Message(), "RUNNING 0 executors, 1m: driver pod is being deleted"; got != want {
		t.Errorf("a driver being deleted: %q, want %q", got, want)
	}
	for _, p := range []*corev1.Pod{
		driverPod(corev1.PodPending, ctr(waiting("ContainerCreating", ""))),
		driverPod(corev1.PodSucceeded, ctr(exited(0, "Completed", ""))),
		driverPod(corev1.PodFailed, ctr(exited(1, "Error", ""))),
		driverPod(corev1.PodUnknown, ctr(running())),
	} {
		a := Assess(Observed{Driver: p, Now: t0.Add(time.Hour), ProgressInterval: time.Second})
		if a.Elapsed != 0 || strings.Contains(a.Message(), "1h") {
			t.Errorf("%s driver: elapsed %s in %q, want none", p.Status.Phase, a.Elapsed, a.Message())
		}
	}
}

// The outcome carries the driver container's exit code once it
// terminated, and none before.
func TestOutcomeExitCode(t *testing.T) {
	tests := []struct {
		name   string
		driver *corev1.Pod
		want   *int32
	}{
		{"succeeded", driverPod(corev1.PodSucceeded, ctr(exited(0, "Completed", ""))), code(0)},
		{"failed", driverPod(corev1.PodFailed, ctr(exited(1, "Error", javaTrace))), code(1)},
		{"OOMKilled", driverPod(corev1.PodFailed, ctr(exited(137, "OOMKilled", ""))), code(137)},
		{"exited while a sidecar keeps the pod running", driverPod(corev1.PodRunning, ctr(exited(2, "Error", "")), sidecar()), code(2)},
		{"evicted after the driver exited", driverPod(corev1.PodFailed, ctr(exited(137, "Error", "")), podReason("Evicted", "low on memory")), code(137)},
		{"running", driverPod(corev1.PodRunning, ctr(running())), nil},
		{"pending", driverPod(corev1.PodPending, ctr(waiting("ImagePullBackOff", ""))), nil},
		{"evicted before it started", driverPod(corev1.PodFailed, podReason("Evicted", "low on memory")), nil},
		{"not found", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Assess(Observed{Driver: tt.driver, Now: t0.Add(time.Hour), SubmittedAt: t0}).Outcome()
			if fmtCode(o.ExitCode) != fmtCode(tt.want) {
				t.Errorf("ExitCode = %s, want %s (%q)", fmtCode(o.ExitCode), fmtCode(tt.want), o.Message())
			}
		})
	}
}
