//go:build integration

package monitor

import (
	"net/http"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A driver and its executors move through their states as a kubelet
// moves them; the metrics follow, with the operator's names and the
// labels of the workflow's template and of --metrics-labels.
func TestMetricsFollowPodsThroughTheirStates(t *testing.T) {
	e := newEnv(t, "metrics")
	m := e.start(e.testOptions("only"))
	wf := e.workflow("etl-x7", map[string]string{argoLabelWorkflowTemplate: "etl"})
	app := map[string]string{"namespace": e.ns, "workflow_template": "etl", "app_type": "etl"}

	d := e.driver(wf, "etl-x7-1", 1, body(""))
	m.eventually("spark_application_count", app, 1)
	m.eventually("spark_application_submit_count", app, 1)
	e.setStatus(d, scheduledNow)
	m.eventually("spark_application_submit_latency_seconds", app, 1)
	m.eventually("spark_application_submit_latency_seconds_histogram", app, 1)
	e.setStatus(d, runningNow)
	m.eventually("spark_application_running_count", app, 1)
	m.eventually("spark_application_start_latency_seconds", app, 1)
	m.eventually("spark_application_start_latency_seconds_histogram", app, 1)

	// Executors carry no app-type label: "Unknown", as the operator's.
	exec := map[string]string{"namespace": e.ns, "workflow_template": "etl", "app_type": "Unknown"}
	x1, x2 := e.executor(d, 1), e.executor(d, 2)
	e.setStatus(x1, podPhase(corev1.PodRunning))
	e.setStatus(x2, podPhase(corev1.PodRunning))
	m.eventually("spark_executor_running_count", exec, 2)
	e.setStatus(x1, podPhase(corev1.PodSucceeded))
	e.setStatus(x2, podPhase(corev1.PodFailed))
	m.eventually("spark_executor_success_count", exec, 1)
	m.eventually("spark_executor_failure_count", exec, 1)
	m.eventually("spark_executor_running_count", exec, 0)

	e.setStatus(d, exited(1, 0))
	m.eventually("spark_application_failure_count", app, 1)
	m.eventually("spark_application_failure_execution_time_seconds", app, 1)
	m.eventually("spark_application_running_count", app, 0)

	// The second attempt is a submission, not an application; it counts
	// its own success, and observes no latency (once per application).
	d2 := e.driver(wf, "etl-x7-1", 2, body(""))
	m.eventually("spark_application_submit_count", app, 2)
	e.setStatus(d2, scheduledNow)
	e.setStatus(d2, runningNow)
	m.eventually("spark_application_running_count", app, 1)
	e.setStatus(d2, exited(0, 0))
	m.eventually("spark_application_success_count", app, 1)
	m.eventually("spark_application_success_execution_time_seconds", app, 1)
	m.eventually("spark_application_running_count", app, 0)
	for family, want := range map[string]float64{"spark_application_count": 1, "spark_application_start_latency_seconds": 1,
		"spark_application_submit_latency_seconds": 1, "spark_application_failure_count": 1} {
		if got, _ := m.value(family, app); got != want {
			t.Errorf("%s = %g after the second attempt, want %g", family, got, want)
		}
	}

	// Submissions that made no driver: the SparkSubmissionFailed Events'
	// counts on the Workflow.
	e.submissionFailed(wf, "etl-x7.refused", 2)
	m.eventually("spark_application_failed_submission_count", map[string]string{"namespace": e.ns, "workflow_template": "etl"}, 2)
	e.submissionFailed(wf, "etl-x7.refused", 3)
	m.eventually("spark_application_failed_submission_count", map[string]string{"namespace": e.ns, "workflow_template": "etl"}, 3)

	// No series names a workflow or a pod.
	for name, f := range m.scrape() {
		for _, s := range f.Metric {
			for _, l := range s.Label {
				if strings.Contains(l.GetValue(), wf.Name) || strings.Contains(l.GetValue(), d.Name) {
					t.Errorf("%s has a label %s=%q naming a workflow or pod", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, text := m.get(path); code != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, code, text)
		}
	}
	if v, _ := m.value("sparkplug_build_info", map[string]string{"version": "v0.0.0-test", "revision": "abc123", "goversion": "go1.test"}); v != 1 {
		t.Errorf("sparkplug_build_info = %g, want 1", v)
	}
}

// A monitor started anew counts again what is there: the running driver
// is running at once, from the cluster, not from memory.
func TestARestartedMonitorShowsTheRunningDriversAgain(t *testing.T) {
	e := newEnv(t, "restart")
	wf := e.workflow("nightly-1", map[string]string{argoLabelCronWorkflow: "nightly"})
	app := map[string]string{"namespace": e.ns, "workflow_template": "nightly"}
	d := e.driver(wf, "nightly-1-1", 1, body(""))
	e.setStatus(d, scheduledNow)
	e.setStatus(d, runningNow)
	finished := e.driver(wf, "nightly-1-2", 1, body(""))
	e.setStatus(finished, exited(0, time.Second))

	first := e.start(e.testOptions("first"))
	first.eventually("spark_application_running_count", app, 1)
	first.eventually("spark_application_success_count", app, 1)
	first.stop()

	second := e.start(e.testOptions("second"))
	second.eventually("spark_application_running_count", app, 1)
	second.eventually("spark_application_count", app, 2)
	second.eventually("spark_application_success_count", app, 1)
	e.setStatus(d, exited(0, 0))
	second.eventually("spark_application_running_count", app, 0)
	second.eventually("spark_application_success_count", app, 2)
}

// A driver whose timeToLiveSeconds ran out after its workflow completed
// is deleted, with an Event on the Workflow; one without a time to live
// is kept with its workflow.
func TestExpiredDriverOfACompletedWorkflowIsDeleted(t *testing.T) {
	e := newEnv(t, "expired")
	wf := e.workflow("spark-pi", nil)
	expired := e.driver(wf, "spark-pi-1", 1, body("timeToLiveSeconds: 1\n"))
	e.setStatus(expired, exited(0, 5*time.Second))
	kept := e.driver(wf, "spark-pi-2", 1, body(""))
	e.setStatus(kept, exited(0, 5*time.Second))
	m := e.start(e.testOptions("only"))
	m.eventually("spark_application_success_count", map[string]string{"namespace": e.ns}, 2)

	// While the workflow runs, its sidecar decides.
	time.Sleep(time.Second)
	if !e.exists(expired) {
		t.Fatal("the expired driver of a running workflow was deleted")
	}
	e.complete(wf, wfv1.WorkflowSucceeded)
	e.gone(expired, "expired driver of a completed workflow")
	e.eventuallyEvent(wf, "SparkDriverExpired", "deleted driver "+expired.Name+" of node spark-pi-1: timeToLiveSeconds ran out")
	m.eventually("sparkplug_monitor_drivers_deleted_total", map[string]string{"reason": "expired"}, 1)
	time.Sleep(time.Second)
	if !e.exists(kept) {
		t.Error("the finished driver without timeToLiveSeconds was deleted")
	}
}

// A driver still running when its workflow ended (stopped, terminated)
// is deleted, with an Event saying why.
func TestRunningDriverOfAnEndedWorkflowIsDeleted(t *testing.T) {
	e := newEnv(t, "ended")
	wf := e.workflow("stopped", nil)
	d := e.driver(wf, "stopped-1", 1, body(""))
	e.setStatus(d, runningNow)
	m := e.start(e.testOptions("only"))
	m.eventually("spark_application_running_count", map[string]string{"namespace": e.ns}, 1)
	time.Sleep(time.Second)
	if !e.exists(d) {
		t.Fatal("the running driver of a running workflow was deleted")
	}
	e.complete(wf, wfv1.WorkflowFailed)
	e.gone(d, "running driver of an ended workflow")
	e.eventuallyEvent(wf, "SparkDriverDeleted", "deleted driver "+d.Name+" of node stopped-1: its workflow ended while no sidecar watched")
	m.eventually("sparkplug_monitor_drivers_deleted_total", map[string]string{"reason": "workflow_ended"}, 1)
	m.eventually("spark_application_running_count", map[string]string{"namespace": e.ns}, 0)
}

// Pods that copy a driver's labels are never deleted: not with another
// name, not with the driver's name but no ownerReference to the Workflow.
func TestForgedDriversAreNeverDeleted(t *testing.T) {
	e := newEnv(t, "forged")
	wf := e.workflow("victim", nil)
	real := e.driver(wf, "victim-1", 1, body("timeToLiveSeconds: 0\n"))
	e.setStatus(real, runningNow)

	copied := real.DeepCopy()
	copied.ObjectMeta = metav1.ObjectMeta{Name: "copied-driver", Namespace: e.ns, Labels: real.Labels,
		Annotations: real.Annotations, OwnerReferences: real.OwnerReferences}
	copied.Status = corev1.PodStatus{}
	copied = e.create(copied)
	e.setStatus(copied, runningNow)
	// The name sparkplug would give node victim-2's driver, its labels
	// and annotations, no owner.
	unowned := e.build(wf, "victim-2", 1, body("timeToLiveSeconds: 0\n"))
	unowned.OwnerReferences = nil
	unowned = e.create(unowned)
	e.setStatus(unowned, exited(0, time.Minute))

	m := e.start(e.testOptions("only"))
	e.complete(wf, wfv1.WorkflowFailed)
	e.gone(real, "the real driver")
	m.eventually("sparkplug_monitor_drivers_deleted_total", map[string]string{"reason": "workflow_ended"}, 1)
	time.Sleep(2 * time.Second) // several sweeps
	for _, p := range []*corev1.Pod{copied, unowned} {
		if !e.exists(p) {
			t.Errorf("forged pod %s was deleted", p.Name)
		}
	}
	if v, _ := m.value("sparkplug_monitor_drivers_deleted_total", nil); v != 1 {
		t.Errorf("%g deletions counted, want 1", v)
	}
}

// The drivers of a Workflow that is gone are deleted: a deleted one, and
// one whose name a new Workflow took. (No garbage collector runs here, so
// nothing else deletes them.)
func TestDriversOfADeletedWorkflowAreDeleted(t *testing.T) {
	e := newEnv(t, "deleted")
	wf := e.workflow("one-off", nil)
	d := e.driver(wf, "one-off-1", 1, body(""))
	e.setStatus(d, runningNow)
	// A Workflow deleted and made again under its name before the
	// monitor starts: the cache has only the new one.
	again := e.workflow("again", nil)
	old := e.driver(again, "again-1", 1, body(""))
	e.setStatus(old, exited(0, time.Minute))
	e.deleteWorkflow(again)
	e.workflow("again", nil)
	m := e.start(e.testOptions("only"))
	e.gone(old, "driver of a workflow whose name another took")
	m.eventually("spark_application_running_count", map[string]string{"namespace": e.ns}, 1)
	time.Sleep(time.Second)
	if !e.exists(d) {
		t.Fatal("the driver of an existing workflow was deleted")
	}

	e.deleteWorkflow(wf)
	e.gone(d, "driver of a deleted workflow")
	m.eventually("sparkplug_monitor_drivers_deleted_total", map[string]string{"reason": "workflow_deleted"}, 2)
	m.eventually("spark_application_running_count", map[string]string{"namespace": e.ns}, 0)
	if n := len(e.events(wf, "SparkDriverDeleted")) + len(e.events(wf, "SparkDriverExpired")); n != 0 {
		t.Errorf("%d Events recorded on a Workflow that is gone", n)
	}
}

// Of two replicas, only the leader exports spark_* series and deletes;
// when it stops, it releases the Lease and the other takes over, counting
// from the cluster.
func TestOnlyTheLeaderCountsAndDeletes(t *testing.T) {
	e := newEnv(t, "leader")
	wf := e.workflow("busy", nil)
	d := e.driver(wf, "busy-1", 1, body(""))
	e.setStatus(d, runningNow)
	// A Lease that lasts: the follower can take over quickly only if the
	// leader released it.
	opts := func(id string) Options {
		o := e.testOptions(id)
		o.LeaseDuration, o.RenewDeadline = 15*time.Second, 10*time.Second
		return o
	}
	a := e.start(opts("a"))
	b := e.start(opts("b"))
	all := map[string]string{"namespace": e.ns}

	var leader, follower *running
	deadline := time.Now().Add(20 * time.Second)
	for leader == nil && time.Now().Before(deadline) {
		la, _ := a.value("sparkplug_monitor_leader", nil)
		lb, _ := b.value("sparkplug_monitor_leader", nil)
		switch {
		case la == 1 && lb == 0:
			leader, follower = a, b
		case lb == 1 && la == 0:
			leader, follower = b, a
		}
		time.Sleep(100 * time.Millisecond)
	}
	if leader == nil {
		t.Fatal("no single leader within 20s")
	}
	leader.eventually("spark_application_running_count", all, 1)
	for name := range follower.scrape() {
		if strings.HasPrefix(name, "spark_") {
			t.Errorf("the follower exports %s", name)
		}
	}
	if v, ok := follower.value("sparkplug_build_info", nil); !ok || v != 1 {
		t.Errorf("the follower's sparkplug_build_info = %g (%v), want 1", v, ok)
	}

	e.complete(wf, wfv1.WorkflowFailed)
	e.gone(d, "running driver of an ended workflow")
	leader.eventually("sparkplug_monitor_drivers_deleted_total", map[string]string{"reason": "workflow_ended"}, 1)
	if v, _ := follower.value("sparkplug_monitor_drivers_deleted_total", nil); v != 0 {
		t.Errorf("the follower counted %g deletions", v)
	}
	if n := len(e.events(wf, "SparkDriverDeleted")); n != 1 {
		t.Errorf("%d SparkDriverDeleted Events, want 1", n)
	}

	// The leader goes (SIGTERM): the Lease is released, the follower
	// leads well within the Lease's duration and counts what is there.
	wf2 := e.workflow("later", nil)
	d2 := e.driver(wf2, "later-1", 1, body(""))
	e.setStatus(d2, runningNow)
	leader.eventually("spark_application_running_count", all, 1)
	stoppedAt := time.Now()
	leader.stop()
	follower.eventually("sparkplug_monitor_leader", nil, 1)
	if took := time.Since(stoppedAt); took > 5*time.Second {
		t.Errorf("the follower took over after %s: was the Lease released?", took)
	}
	follower.eventually("spark_application_running_count", all, 1)
	follower.eventually("spark_application_count", all, 1) // d2; d is gone
	if n := len(e.events(wf, "SparkDriverDeleted")); n != 1 {
		t.Errorf("%d SparkDriverDeleted Events after the takeover, want still 1", n)
	}
}
