package state

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

func TestExecutorCounts(t *testing.T) {
	tests := []struct {
		name      string
		executors []*corev1.Pod
		want      ExecutorCounts
	}{
		{name: "none", want: ExecutorCounts{}},
		{
			name: "one of each phase",
			executors: pods(
				executorPod(corev1.PodPending), executorPod(""), executorPod(corev1.PodRunning, ctr(running())),
				executorPod(corev1.PodSucceeded), executorPod(corev1.PodFailed), executorPod(corev1.PodUnknown),
				executorPod("Hibernating")),
			want: ExecutorCounts{Pending: 2, Running: 1, Succeeded: 1, Failed: 1, Unknown: 2, Total: 7},
		},
		{
			name: "executor container exited non-zero while a sidecar keeps the pod running",
			executors: pods(
				executorPod(corev1.PodRunning, ctr(exited(1, "Error", "")), sidecar()),
				executorPod(corev1.PodRunning, ctr(exited(0, "Completed", "")), sidecar())),
			want: ExecutorCounts{Failed: 1, Succeeded: 1, Total: 2},
		},
		{
			name:      "failed pod whose executor exited 0 (a sidecar failed) succeeded",
			executors: pods(executorPod(corev1.PodFailed, ctr(exited(0, "Completed", "")), sidecar())),
			want:      ExecutorCounts{Succeeded: 1, Total: 1},
		},
		{
			name:      "unknown pod with a stale terminated status stays unknown",
			executors: pods(executorPod(corev1.PodUnknown, ctr(exited(1, "Error", "")))),
			want:      ExecutorCounts{Unknown: 1, Total: 1},
		},
		{
			name:      "renamed executor container falls back to the first container",
			executors: pods(executorPod(corev1.PodRunning, renamed("exec"), ctr(exited(137, "OOMKilled", "")))),
			want:      ExecutorCounts{Failed: 1, Total: 1},
		},
		{
			name:      "nil pods are skipped",
			executors: pods(nil, executorPod(corev1.PodRunning)),
			want:      ExecutorCounts{Running: 1, Total: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := countExecutors(tt.executors); got != tt.want {
				t.Errorf("countExecutors() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestAssessExecutorTarget(t *testing.T) {
	driver := driverPod(corev1.PodRunning, ctr(running()))
	tests := []struct {
		name string
		o    Observed
		want string
	}{
		{"one of one", Observed{Expected: 1, Executors: pods(executorPod(corev1.PodRunning))}, "RUNNING 1/1 executor"},
		{"dynamic, one", Observed{Dynamic: true, Executors: pods(executorPod(corev1.PodRunning))}, "RUNNING 1 executor"},
		{"dynamic hides the target", Observed{Dynamic: true, Expected: 4, Executors: repeat(3, executorPod(corev1.PodRunning))}, "RUNNING 3 executors"},
		{"none asked, none running", Observed{}, "RUNNING 0 executors"},
		{"more running than asked (replacements)", Observed{Expected: 2, Executors: repeat(3, executorPod(corev1.PodRunning))}, "RUNNING 3/2 executors"},
		{
			"pending, failed and unknown",
			Observed{Expected: 4, Executors: pods(
				executorPod(corev1.PodRunning), executorPod(corev1.PodPending),
				executorPod(corev1.PodFailed), executorPod(corev1.PodUnknown))},
			"RUNNING 1/4 executors (1 pending, 1 failed, 1 unknown)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.o.Driver, tt.o.Now, tt.o.SubmittedAt = driver, t0, t0
			a := Assess(tt.o)
			if got := a.Message(); got != tt.want {
				t.Errorf("Message() = %q, want %q", got, tt.want)
			}
			if got := a.Executors.Total; got != len(tt.o.Executors) {
				t.Errorf("Executors.Total = %d, want %d", got, len(tt.o.Executors))
			}
		})
	}
}

// States Assess never returns still get a stated phase and message.
func TestPhaseAndMessageOfEveryState(t *testing.T) {
	tests := []struct {
		state spark.State
		phase Phase
		msg   string
	}{
		{spark.StateNew, PhasePending, "NEW: d"},
		{spark.StateSubmitted, PhasePending, "SUBMITTED: d"},
		{spark.StatePendingRerun, PhasePending, "PENDING_RERUN: d"},
		{spark.StateRunning, PhaseRunning, "RUNNING 0 executors: d"},
		{spark.StateUnknown, PhaseRunning, "UNKNOWN: d; waiting"},
		{spark.StateSucceeding, PhaseSucceeded, "COMPLETED: d"},
		{spark.StateCompleted, PhaseSucceeded, "COMPLETED: d"},
		{spark.StateFailing, PhaseFailed, "FAILED: d"},
		{spark.StateFailed, PhaseFailed, "FAILED: d"},
		{spark.StateSubmissionFailed, PhaseFailed, "SUBMISSION_FAILED: d"},
		{"HIBERNATING", PhaseError, "HIBERNATING: d"},
	}
	for _, tt := range tests {
		t.Run(string(tt.state), func(t *testing.T) {
			a := Assessment{State: tt.state, Detail: "d"}
			if got := a.Phase(); got != tt.phase {
				t.Errorf("Phase() = %q, want %q", got, tt.phase)
			}
			if got := a.Message(); got != tt.msg {
				t.Errorf("Message() = %q, want %q", got, tt.msg)
			}
		})
	}
}

func TestIsFatalWaiting(t *testing.T) {
	for reason, want := range map[string]bool{
		"ErrImagePull":               true,
		"ImagePullBackOff":           true,
		"ErrImageNeverPull":          true,
		"InvalidImageName":           true,
		"CreateContainerConfigError": true,
		"CreateContainerError":       true,
		"ContainerCreating":          false,
		"PodInitializing":            false,
		"Unschedulable":              false,
		"":                           false,
	} {
		if got := IsFatalWaiting(reason); got != want {
			t.Errorf("IsFatalWaiting(%q) = %v, want %v", reason, got, want)
		}
	}
}

// Line is the outcome's message as a node shows it: redacted, then
// bounded.
func TestLineIsRedactedAndBounded(t *testing.T) {
	o := Outcome{State: spark.StateSubmissionFailed, Phase: PhaseFailed, Detail: "create pod: --db-password=leak01 " + strings.Repeat("x", 10000)}
	l := o.Line()
	if strings.Contains(l, "leak01") || len(l) > spec.MaxMessageBytes || !strings.HasPrefix(l, "SUBMISSION_FAILED: create pod: --db-password=") {
		t.Errorf("line %.120q (%d bytes); want redacted, at most %d bytes", l, len(l), spec.MaxMessageBytes)
	}
}
