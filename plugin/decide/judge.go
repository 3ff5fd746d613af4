package decide

import (
	"fmt"
	"strconv"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// Verdict is what one run amounts to, given its newest attempt and the
// restart policy.
type Verdict struct {
	// Final: no further attempt will start; the phase is Succeeded or
	// Failed.
	Final bool
	// Outcome is what the node is told.
	Outcome state.Outcome
	// Relaunch: start attempt Attempt+1 now.
	Relaunch bool
	// Ended is the assessment that ended the attempt, when it is over.
	Ended state.Assessment
}

// judge applies the restart policy to the newest attempt of a run.
//
// Backoff is linear, as the Spark operator does it: attempt N waits
// N x interval after the previous one ended, so users who move their
// restartPolicy over see the timing they know. OnFailure reruns while the
// attempts so far are at most onFailureRetries (so retries+1 runs in all)
// and never reruns a success; OnInfrastructureFailure does the same for
// attempts that ended outside the application only (evicted, node lost,
// deleted); Always reruns after success and failure without limit.
func judge(a state.Assessment, attempt int, p spec.RestartPolicy, endedAt, now time.Time) Verdict {
	part := attemptPart(attempt, p)
	if !a.Done {
		return Verdict{Outcome: withAttempt(a.Outcome(), part)}
	}
	rerun := false
	var interval int64
	switch p.Type {
	case spec.RestartAlways:
		rerun = true
		interval = deref64(p.OnFailureRetryInterval, 5)
	case spec.RestartOnFailure:
		rerun = !a.Succeeded && int32(attempt) <= deref32(p.OnFailureRetries, 0)
		interval = deref64(p.OnFailureRetryInterval, 5)
	case spec.RestartOnInfrastructureFailure:
		rerun = !a.Succeeded && a.Infrastructure && int32(attempt) <= deref32(p.OnFailureRetries, 0)
		interval = deref64(p.OnFailureRetryInterval, 5)
	default: // Never, and anything validation let through, is no rerun.
	}
	if !rerun {
		return Verdict{Final: true, Outcome: withAttempt(a.Outcome(), part), Ended: a}
	}
	wait := time.Duration(int64(attempt)*interval) * time.Second
	at := endedAt.Add(wait)
	if !now.Before(at) {
		return Verdict{Relaunch: true, Ended: a, Outcome: pendingRerun(
			fmt.Sprintf("starting attempt %s after", attemptOfMax(attempt+1, p)), a)}
	}
	return Verdict{Ended: a, Outcome: pendingRerun(
		fmt.Sprintf("attempt %s in %s", attemptOfMax(attempt+1, p), at.Sub(now).Round(time.Second)), a)}
}

// pendingRerun: the attempt that a ended is followed by another.
func pendingRerun(what string, a state.Assessment) state.Outcome {
	// The driver that ended is still the one the outputs name, so its
	// exit code goes with them until the next attempt's driver exists.
	return state.Outcome{State: spark.StatePendingRerun, Phase: state.PhaseRunning, Detail: what + ": " + a.Message(), ExitCode: a.ExitCode}
}

// attemptPart is the attempt a message names when the policy can rerun:
// N of retries+1 for OnFailure and OnInfrastructureFailure with retries,
// N alone for Always; none otherwise.
func attemptPart(attempt int, p spec.RestartPolicy) state.Attempt {
	switch p.Type {
	case spec.RestartOnFailure, spec.RestartOnInfrastructureFailure:
		if deref32(p.OnFailureRetries, 0) == 0 {
			return state.Attempt{}
		}
		return state.Attempt{N: attempt, Of: deref32(p.OnFailureRetries, 0) + 1}
	case spec.RestartAlways:
		return state.Attempt{N: attempt}
	}
	return state.Attempt{}
}

// withAttempt is o naming attempt a.
func withAttempt(o state.Outcome, a state.Attempt) state.Outcome {
	o.Attempt = a
	return o
}

// attemptOfMax is "2/3" when the policy reruns a limited number of times
// (retries+1 attempts in all), else "2".
func attemptOfMax(attempt int, p spec.RestartPolicy) string {
	if p.Type == spec.RestartOnFailure || p.Type == spec.RestartOnInfrastructureFailure {
		return ofMax(attempt, deref32(p.OnFailureRetries, 0)+1)
	}
	return strconv.Itoa(attempt)
}

func deref32(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

func deref64(p *int64, def int64) int64 {
	if p == nil {
		return def
	}
	return *p
}
