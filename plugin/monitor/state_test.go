package monitor

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// pod is a driver (or executor) pod created at t0, changed by opts as a
// kubelet would change it.
func pod(role string, opts ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "jobs", UID: "uid-p",
		CreationTimestamp: metav1.NewTime(t0),
		Labels:            map[string]string{spark.LabelRole: role, spark.LabelAttempt: "1"}}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func attempt(n string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Labels[spark.LabelAttempt] = n }
}

func scheduled(after time.Duration) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled,
			Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(after))})
	}
}

func phased(ph corev1.PodPhase) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Status.Phase = ph }
}

func driverRunning(after time.Duration) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: spark.DriverContainerName,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(after))}}}}
	}
}

func driverExited(code int32, started, finished time.Duration, ph corev1.PodPhase) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Phase = ph
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: spark.DriverContainerName,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code,
				StartedAt: metav1.NewTime(t0.Add(started)), FinishedAt: metav1.NewTime(t0.Add(finished))}}}}
	}
}

func TestFactsOf(t *testing.T) {
	sidecarOnly := func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "istio-proxy",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
			{Name: spark.DriverContainerName, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}
	}
	cases := []struct {
		name string
		pod  *corev1.Pod
		want facts
	}{
		{"a new driver", pod(spark.RoleDriver), facts{first: true, created: t0}},
		{"a later attempt's driver", pod(spark.RoleDriver, attempt("2")), facts{created: t0}},
		{"scheduled", pod(spark.RoleDriver, scheduled(3*time.Second)), facts{first: true, created: t0, scheduled: t0.Add(3 * time.Second)}},
		{"pod Running, its driver container not yet", pod(spark.RoleDriver, sidecarOnly), facts{first: true, created: t0}},
		{"driver container running", pod(spark.RoleDriver, driverRunning(time.Minute)),
			facts{first: true, phase: phaseRunning, created: t0, started: t0.Add(time.Minute)}},
		{"exited 0, pod still Running (a sidecar runs on)", pod(spark.RoleDriver, driverExited(0, time.Minute, time.Hour, corev1.PodRunning)),
			facts{first: true, phase: phaseSucceeded, created: t0, started: t0.Add(time.Minute), finished: t0.Add(time.Hour)}},
		{"exited 1", pod(spark.RoleDriver, driverExited(1, time.Minute, time.Hour, corev1.PodFailed)),
			facts{first: true, phase: phaseFailed, created: t0, started: t0.Add(time.Minute), finished: t0.Add(time.Hour)}},
		{"pod Failed, driver exited 0 (a sidecar failed): succeeded, as the operator", pod(spark.RoleDriver, driverExited(0, time.Minute, time.Hour, corev1.PodFailed)),
			facts{first: true, phase: phaseSucceeded, created: t0, started: t0.Add(time.Minute), finished: t0.Add(time.Hour)}},
		{"evicted before it started", pod(spark.RoleDriver, phased(corev1.PodFailed)), facts{first: true, phase: phaseFailed, created: t0}},
		{"pod Succeeded", pod(spark.RoleDriver, phased(corev1.PodSucceeded)), facts{first: true, phase: phaseSucceeded, created: t0}},
		{"executor pending", pod(spark.RoleExecutor, phased(corev1.PodPending)), facts{executor: true, created: t0}},
		{"executor running", pod(spark.RoleExecutor, phased(corev1.PodRunning)), facts{executor: true, phase: phaseRunning, created: t0}},
		{"executor succeeded", pod(spark.RoleExecutor, phased(corev1.PodSucceeded)), facts{executor: true, phase: phaseSucceeded, created: t0}},
		{"executor failed", pod(spark.RoleExecutor, phased(corev1.PodFailed)), facts{executor: true, phase: phaseFailed, created: t0}},
		{"executor unknown", pod(spark.RoleExecutor, phased(corev1.PodUnknown)), facts{executor: true, phase: phaseUnknown, created: t0}},
	}
	for _, tc := range cases {
		if got := factsOf(tc.pod); got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

func TestTransitions(t *testing.T) {
	f := func(p *corev1.Pod) *facts { x := factsOf(p); return &x }
	d := func(opts ...func(*corev1.Pod)) *facts { return f(pod(spark.RoleDriver, opts...)) }
	e := func(ph corev1.PodPhase) *facts { return f(pod(spark.RoleExecutor, phased(ph))) }
	c := func(w what) change { return change{what: w} }
	obs := func(w what, d time.Duration) change { return change{what: w, seconds: d.Seconds()} }
	cases := []struct {
		name      string
		prev, cur *facts
		want      []change
	}{
		{"a new application", nil, d(), []change{c(appCount), c(appSubmit)}},
		{"a second attempt: a submission, no application", nil, d(attempt("2")), []change{c(appSubmit)}},
		{"first seen running (a restart): counted running, no latency", nil, d(scheduled(time.Second), driverRunning(time.Minute)),
			[]change{c(appCount), c(appSubmit), c(appRunningUp)}},
		{"first seen ended", nil, d(driverExited(1, time.Minute, time.Hour, corev1.PodFailed)), []change{c(appCount), c(appSubmit), c(appFailure)}},
		{"first seen succeeded", nil, d(driverExited(0, time.Minute, time.Hour, corev1.PodSucceeded)), []change{c(appCount), c(appSubmit), c(appSuccess)}},
		{"scheduled", d(), d(scheduled(2 * time.Second)), []change{obs(appSubmitLatency, 2*time.Second)}},
		{"a later attempt scheduled: no latency", d(attempt("2")), d(attempt("2"), scheduled(2*time.Second)), nil},
		{"starts", d(scheduled(2 * time.Second)), d(scheduled(2*time.Second), driverRunning(90*time.Second)),
			[]change{obs(appStartLatency, 90*time.Second), c(appRunningUp)}},
		{"scheduled and started between two sightings", d(), d(scheduled(2*time.Second), driverRunning(90*time.Second)),
			[]change{obs(appSubmitLatency, 2*time.Second), obs(appStartLatency, 90*time.Second), c(appRunningUp)}},
		{"a later attempt starts: running, no latency", d(attempt("2")), d(attempt("2"), driverRunning(time.Minute)), []change{c(appRunningUp)}},
		{"succeeds", d(driverRunning(time.Minute)), d(driverExited(0, time.Minute, time.Hour, corev1.PodSucceeded)),
			[]change{c(appRunningDown), c(appSuccess), obs(appSuccessTime, time.Hour)}},
		{"fails", d(driverRunning(time.Minute)), d(driverExited(2, time.Minute, time.Hour, corev1.PodFailed)),
			[]change{c(appRunningDown), c(appFailure), obs(appFailureTime, time.Hour)}},
		{"ran and ended between two sightings: started and ended, never running", d(), d(driverExited(0, time.Minute, time.Hour, corev1.PodSucceeded)),
			[]change{obs(appStartLatency, time.Minute), c(appSuccess), obs(appSuccessTime, time.Hour)}},
		{"evicted before it started: a failure without a time", d(), d(phased(corev1.PodFailed)), []change{c(appFailure)}},
		{"nothing changed", d(driverRunning(time.Minute)), d(driverRunning(time.Minute)), nil},
		{"ended, then its pod phase caught up: counted once", d(driverExited(0, time.Minute, time.Hour, corev1.PodRunning)),
			d(driverExited(0, time.Minute, time.Hour, corev1.PodSucceeded)), nil},
		{"deleted while running", d(driverRunning(time.Minute)), nil, []change{c(appRunningDown)}},
		{"deleted after it ended", d(driverExited(0, time.Minute, time.Hour, corev1.PodSucceeded)), nil, nil},
		{"deleted before it ran", d(), nil, nil},
		{"a clock that disagrees: no negative latency", d(), d(scheduled(-time.Second)), nil},

		{"executor first seen pending", nil, e(corev1.PodPending), nil},
		{"executor first seen running", nil, e(corev1.PodRunning), []change{c(executorRunningUp)}},
		{"executor first seen ended: not counted, as the operator", nil, e(corev1.PodSucceeded), nil},
		{"executor runs", e(corev1.PodPending), e(corev1.PodRunning), []change{c(executorRunningUp)}},
		{"executor succeeds", e(corev1.PodRunning), e(corev1.PodSucceeded), []change{c(executorRunningDown), c(executorSuccess)}},
		{"executor fails", e(corev1.PodRunning), e(corev1.PodFailed), []change{c(executorRunningDown), c(executorFailure)}},
		{"executor fails pending", e(corev1.PodPending), e(corev1.PodFailed), []change{c(executorFailure)}},
		{"executor's node lost", e(corev1.PodRunning), e(corev1.PodUnknown), []change{c(executorRunningDown)}},
		{"executor deleted running", e(corev1.PodRunning), nil, []change{c(executorRunningDown)}},
		{"executor deleted ended", e(corev1.PodFailed), nil, nil},
	}
	for _, tc := range cases {
		if got := transitions(tc.prev, tc.cur); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %v\nwant %v", tc.name, got, tc.want)
		}
	}
}
