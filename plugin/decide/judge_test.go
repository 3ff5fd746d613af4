package decide

import (
	"strings"
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

func i32(v int32) *int32 { return &v }
func i64(v int64) *int64 { return &v }

func TestJudge(t *testing.T) {
	ended := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	exit1 := int32(1)
	failedA := state.Assessment{State: spark.StateFailing, Done: true, ExitCode: &exit1, Reason: "Error"}
	okA := state.Assessment{State: spark.StateSucceeding, Done: true, Succeeded: true}
	runningA := state.Assessment{State: spark.StateRunning}
	never := spec.RestartPolicy{Type: spec.RestartNever}
	onFailure := spec.RestartPolicy{Type: spec.RestartOnFailure, OnFailureRetries: i32(2), OnFailureRetryInterval: i64(10)}
	always := spec.RestartPolicy{Type: spec.RestartAlways, OnFailureRetryInterval: i64(5)}
	infra := spec.RestartPolicy{Type: spec.RestartOnInfrastructureFailure, OnFailureRetries: i32(1), OnFailureRetryInterval: i64(10)}
	evictedA := state.Assessment{State: spark.StateFailing, Done: true, Reason: "Evicted", Infrastructure: true}

	cases := []struct {
		name        string
		a           state.Assessment
		attempt     int
		policy      spec.RestartPolicy
		now         time.Time
		wantFinal   bool
		wantPhase   state.Phase
		wantRelaunc bool
		wantMsg     string
	}{
		{"running is not final", runningA, 1, never, ended, false, state.PhaseRunning, false, "RUNNING"},
		{"never: failure is final", failedA, 1, never, ended, true, state.PhaseFailed, false, "FAILED"},
		{"never: success is final", okA, 1, never, ended, true, state.PhaseSucceeded, false, "COMPLETED"},
		{"onFailure: success is never rerun", okA, 1, onFailure, ended.Add(time.Hour), true, state.PhaseSucceeded, false, "COMPLETED"},
		{"onFailure: first failure waits 1x interval", failedA, 1, onFailure, ended.Add(5 * time.Second), false, state.PhaseRunning, false, "PENDING_RERUN: attempt 2/3 in 5s"},
		{"onFailure: first failure reruns after 1x interval", failedA, 1, onFailure, ended.Add(10 * time.Second), false, state.PhaseRunning, true, "starting attempt 2/3"},
		{"onFailure: second failure waits 2x interval (linear)", failedA, 2, onFailure, ended.Add(15 * time.Second), false, state.PhaseRunning, false, "attempt 3/3 in 5s"},
		{"onFailure: retries used up is final with the attempt count", failedA, 3, onFailure, ended.Add(time.Hour), true, state.PhaseFailed, false, "(attempt 3/3)"},
		{"onFailure: running shows the attempt", runningA, 2, onFailure, ended, false, state.PhaseRunning, false, "(attempt 2/3)"},
		{"onFailure without retries behaves like never", failedA, 1, spec.RestartPolicy{Type: spec.RestartOnFailure}, ended.Add(time.Hour), true, state.PhaseFailed, false, "FAILED"},
		{"always: success reruns", okA, 4, always, ended.Add(time.Hour), false, state.PhaseRunning, true, "starting attempt 5"},
		{"always: failure reruns", failedA, 1, always, ended.Add(5 * time.Second), false, state.PhaseRunning, true, "starting attempt 2"},
		{"onInfrastructureFailure: an eviction reruns", evictedA, 1, infra, ended.Add(10 * time.Second), false, state.PhaseRunning, true, "starting attempt 2/2"},
		{"onInfrastructureFailure: an application failure is final", failedA, 1, infra, ended.Add(time.Hour), true, state.PhaseFailed, false, "exited 1"},
		{"onInfrastructureFailure: retries used up", evictedA, 2, infra, ended.Add(time.Hour), true, state.PhaseFailed, false, "(attempt 2/2)"},
		{"onInfrastructureFailure: success is final", okA, 1, infra, ended.Add(time.Hour), true, state.PhaseSucceeded, false, "COMPLETED"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := judge(tc.a, tc.attempt, tc.policy, ended, tc.now)
			phase, msg := v.Outcome.Phase, v.Outcome.Message()
			if v.Final != tc.wantFinal || phase != tc.wantPhase || v.Relaunch != tc.wantRelaunc {
				t.Fatalf("got final=%v phase=%s relaunch=%v (%q); want final=%v phase=%s relaunch=%v",
					v.Final, phase, v.Relaunch, msg, tc.wantFinal, tc.wantPhase, tc.wantRelaunc)
			}
			if !strings.Contains(msg, tc.wantMsg) {
				t.Fatalf("message %q does not contain %q", msg, tc.wantMsg)
			}
		})
	}
}
