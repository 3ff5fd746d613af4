package monitor

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// phase is where a driver or an executor is, for the metrics.
type phase uint8

const (
	phasePending phase = iota
	phaseRunning
	phaseSucceeded
	phaseFailed
	// phaseUnknown: an executor pod whose phase is Unknown (its node
	// stopped reporting), the operator's ExecutorStateUnknown.
	phaseUnknown
)

var phaseNames = [...]string{"pending", "running", "succeeded", "failed", "unknown"}

func (p phase) String() string { return phaseNames[p] }

// facts are what the metrics read of a pod: a pure function of it
// (factsOf). Times are zero until they happened.
type facts struct {
	executor bool
	// first: a driver of attempt 1, the one that stands for the
	// application in spark_application_count and the latencies.
	first bool
	phase phase
	// created is the pod's creation, scheduled when PodScheduled became
	// true, started and finished the driver container's.
	created, scheduled, started, finished time.Time
}

// factsOf reads a driver or executor pod. A driver runs while its driver
// container runs (its pod may be Running with the container not yet
// started, or already ended); it ended as its pod did when the pod is
// Succeeded or Failed (the operator's GetDriverState: a Failed pod whose
// driver exited 0 succeeded), else as the container's exit code says.
// An executor is where its pod's phase is, as the operator's
// GetExecutorState.
func factsOf(p *corev1.Pod) facts {
	f := facts{executor: p.Labels[spark.LabelRole] == spark.RoleExecutor, created: p.CreationTimestamp.Time}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			f.scheduled = c.LastTransitionTime.Time
		}
	}
	if f.executor {
		switch p.Status.Phase {
		case corev1.PodRunning:
			f.phase = phaseRunning
		case corev1.PodSucceeded:
			f.phase = phaseSucceeded
		case corev1.PodFailed:
			f.phase = phaseFailed
		case corev1.PodUnknown:
			f.phase = phaseUnknown
		}
		return f
	}
	f.first = driverpod.Attempt(p) == 1
	var running *corev1.ContainerStateRunning
	var term *corev1.ContainerStateTerminated
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == spark.DriverContainerName {
			running, term = cs.State.Running, cs.State.Terminated
		}
	}
	switch {
	case running != nil:
		f.started = running.StartedAt.Time
	case term != nil:
		f.started, f.finished = term.StartedAt.Time, term.FinishedAt.Time
	}
	switch {
	case p.Status.Phase == corev1.PodSucceeded:
		f.phase = phaseSucceeded
	case p.Status.Phase == corev1.PodFailed && term != nil && term.ExitCode == 0:
		f.phase = phaseSucceeded
	case p.Status.Phase == corev1.PodFailed:
		f.phase = phaseFailed
	case term != nil && term.ExitCode == 0:
		f.phase = phaseSucceeded
	case term != nil:
		f.phase = phaseFailed
	case running != nil:
		f.phase = phaseRunning
	}
	return f
}

// what a change does to the metrics.
type what uint8

const (
	appCount            what = iota // spark_application_count +1
	appSubmit                       // spark_application_submit_count +1
	appRunningUp                    // spark_application_running_count +1
	appRunningDown                  // spark_application_running_count -1
	appSuccess                      // spark_application_success_count +1
	appFailure                      // spark_application_failure_count +1
	appSubmitLatency                // spark_application_submit_latency_seconds(_histogram)
	appStartLatency                 // spark_application_start_latency_seconds(_histogram)
	appSuccessTime                  // spark_application_success_execution_time_seconds
	appFailureTime                  // spark_application_failure_execution_time_seconds
	executorRunningUp               // spark_executor_running_count +1
	executorRunningDown             // spark_executor_running_count -1
	executorSuccess                 // spark_executor_success_count +1
	executorFailure                 // spark_executor_failure_count +1
)

var whatNames = [...]string{"app_count", "app_submit", "app_running+1", "app_running-1", "app_success", "app_failure",
	"app_submit_latency", "app_start_latency", "app_success_time", "app_failure_time",
	"executor_running+1", "executor_running-1", "executor_success", "executor_failure"}

func (w what) String() string { return whatNames[w] }

// change is one change to the metrics; seconds is the value observed.
type change struct {
	what    what
	seconds float64
}

// transitions are the metric changes of a pod going from prev to cur: prev
// nil, the pod is first seen (created, or listed when the monitor starts
// leading); cur nil, it is gone. As the Spark operator's handlers, a first
// sight counts what the pod is (an application, a submission, running, or
// ended) but observes no latency, which would be observed again after
// every restart; an update counts only a change of phase, and observes a
// latency when what it measures happened.
func transitions(prev, cur *facts) []change {
	switch {
	case prev == nil && cur == nil:
		return nil
	case cur == nil:
		return gone(prev)
	case cur.executor:
		return executorTransitions(prev, cur)
	case prev == nil:
		var out []change
		if cur.first {
			out = append(out, change{what: appCount})
		}
		out = append(out, change{what: appSubmit})
		switch cur.phase {
		case phaseRunning:
			out = append(out, change{what: appRunningUp})
		case phaseSucceeded:
			out = append(out, change{what: appSuccess})
		case phaseFailed:
			out = append(out, change{what: appFailure})
		}
		return out
	}
	var out []change
	// The operator observes both latencies for the first submission and
	// the first execution only: once per application.
	if cur.first && prev.scheduled.IsZero() && !cur.scheduled.IsZero() {
		out = append(out, latency(appSubmitLatency, cur.created, cur.scheduled)...)
	}
	if cur.first && prev.started.IsZero() && !cur.started.IsZero() {
		out = append(out, latency(appStartLatency, cur.created, cur.started)...)
	}
	if prev.phase == cur.phase {
		return out
	}
	if prev.phase == phaseRunning {
		out = append(out, change{what: appRunningDown})
	}
	switch cur.phase {
	case phaseRunning:
		out = append(out, change{what: appRunningUp})
	case phaseSucceeded:
		out = append(out, change{what: appSuccess})
		out = append(out, latency(appSuccessTime, cur.created, cur.finished)...)
	case phaseFailed:
		out = append(out, change{what: appFailure})
		out = append(out, latency(appFailureTime, cur.created, cur.finished)...)
	}
	return out
}

// executorTransitions are an executor's changes, as the operator's
// sparkpod_metrics: a first sight counts only a running executor.
func executorTransitions(prev, cur *facts) []change {
	if prev == nil {
		if cur.phase == phaseRunning {
			return []change{{what: executorRunningUp}}
		}
		return nil
	}
	if prev.phase == cur.phase {
		return nil
	}
	var out []change
	if prev.phase == phaseRunning {
		out = append(out, change{what: executorRunningDown})
	}
	switch cur.phase {
	case phaseRunning:
		out = append(out, change{what: executorRunningUp})
	case phaseSucceeded:
		out = append(out, change{what: executorSuccess})
	case phaseFailed:
		out = append(out, change{what: executorFailure})
	}
	return out
}

// gone: a pod deleted while it ran leaves the running gauge.
func gone(prev *facts) []change {
	switch {
	case prev.phase != phaseRunning:
		return nil
	case prev.executor:
		return []change{{what: executorRunningDown}}
	default:
		return []change{{what: appRunningDown}}
	}
}

// latency observes to-from, when both are known and in order (clocks of
// different components may disagree by a little; a negative time is
// none).
func latency(w what, from, to time.Time) []change {
	if from.IsZero() || to.IsZero() || to.Before(from) {
		return nil
	}
	return []change{{what: w, seconds: to.Sub(from).Seconds()}}
}
