package monitor

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/cli"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// The families the chart's dashboard and alerts are written against: the
// Spark operator's, and the monitor's own.
var wantFamilies = []string{
	"spark_application_count",
	"spark_application_failed_submission_count",
	"spark_application_failure_count",
	"spark_application_failure_execution_time_seconds",
	"spark_application_running_count",
	"spark_application_start_latency_seconds",
	"spark_application_start_latency_seconds_histogram",
	"spark_application_submit_count",
	"spark_application_submit_latency_seconds",
	"spark_application_submit_latency_seconds_histogram",
	"spark_application_success_count",
	"spark_application_success_execution_time_seconds",
	"spark_executor_failure_count",
	"spark_executor_running_count",
	"spark_executor_success_count",
	"sparkplug_build_info",
	"sparkplug_monitor_drivers_deleted_total",
	"sparkplug_monitor_leader",
}

func TestMetricNames(t *testing.T) {
	var own []string
	all := MetricNames()
	for _, n := range all {
		if !strings.HasPrefix(n, "go_") && !strings.HasPrefix(n, "process_") {
			own = append(own, n)
		}
	}
	if !slices.Equal(own, wantFamilies) {
		t.Errorf("MetricNames (without go_ and process_):\n got %q\nwant %q", own, wantFamilies)
	}
	if !slices.Contains(all, "go_goroutines") {
		t.Errorf("MetricNames lacks the Go runtime's go_goroutines: %q", all)
	}
	if !slices.IsSorted(all) {
		t.Errorf("MetricNames is not sorted: %q", all)
	}
}

// Every change lands in a family MetricNames names, of the operator's
// type.
func TestEveryChangeLandsInANamedFamily(t *testing.T) {
	l, err := newLabeler([]string{"app-type"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := newSparkMetrics(l.labelNames(), DefaultStartLatencyBuckets)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m.collectors()...)
	reg.MustRegister(newOwnMetrics(cli.Version{Version: "v1", Commit: "abc", GoVersion: "go1"}).collectors()...)
	for w := range what(len(whatNames)) {
		m.apply([]change{{what: w, seconds: 1}}, []string{"jobs", "tmpl", "batch"})
	}
	m.failedSubmissionCount.WithLabelValues("jobs", "tmpl", "batch").Inc()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := MetricNames()
	types := map[string]string{}
	for _, f := range families {
		if !slices.Contains(names, f.GetName()) {
			t.Errorf("family %s is not in MetricNames", f.GetName())
		}
		types[f.GetName()] = f.GetType().String()
	}
	for name, typ := range map[string]string{
		"spark_application_count": "COUNTER", "spark_application_running_count": "GAUGE",
		"spark_application_start_latency_seconds": "SUMMARY", "spark_application_start_latency_seconds_histogram": "HISTOGRAM",
		"spark_application_submit_latency_seconds": "SUMMARY", "spark_application_submit_latency_seconds_histogram": "HISTOGRAM",
		"spark_application_success_execution_time_seconds": "SUMMARY", "spark_application_failed_submission_count": "COUNTER",
		"spark_executor_running_count": "GAUGE", "spark_executor_failure_count": "COUNTER",
		"sparkplug_build_info": "GAUGE", "sparkplug_monitor_drivers_deleted_total": "COUNTER",
	} {
		if types[name] != typ {
			t.Errorf("%s is a %q, want %s", name, types[name], typ)
		}
	}
	if len(families) < len(wantFamilies) {
		t.Errorf("%d families gathered, want at least %d", len(families), len(wantFamilies))
	}
}

// testTracker is a tracker whose workflows are those given, by uid.
func testTracker(t *testing.T, metricsLabels []string, workflows map[string]*metav1.ObjectMeta) (*tracker, *sparkMetrics) {
	t.Helper()
	l, err := newLabeler(metricsLabels, func(ns, uid string) *metav1.ObjectMeta { return workflows[uid] })
	if err != nil {
		t.Fatal(err)
	}
	m := newSparkMetrics(l.labelNames(), DefaultStartLatencyBuckets)
	return newTracker(m, l), m
}

// A pod moving through its states counts each transition once, with the
// labels of its workflow's template and of --metrics-labels.
func TestTrackerCountsTransitionsOnce(t *testing.T) {
	wf := &metav1.ObjectMeta{Name: "nightly-123", Labels: map[string]string{argoLabelCronWorkflow: "nightly"}}
	tr, m := testTracker(t, []string{"app-type"}, map[string]*metav1.ObjectMeta{"wf-1": wf})
	p := pod(spark.RoleDriver, ofWorkflow("wf-1"), func(p *corev1.Pod) { p.Labels["app-type"] = "etl" })
	lv := []string{"jobs", "nightly", "etl"}
	tr.pod(p)
	tr.pod(p) // a resync: nothing new
	running := p.DeepCopy()
	scheduled(time.Second)(running)
	driverRunning(30 * time.Second)(running)
	tr.pod(running)
	tr.pod(running)
	assertValue(t, m.count.WithLabelValues(lv...), 1, "applications")
	assertValue(t, m.submitCount.WithLabelValues(lv...), 1, "submissions")
	assertValue(t, m.runningCount.WithLabelValues(lv...), 1, "running")
	if n := seriesOf(m.startLatency); n != 1 {
		t.Errorf("%d start latency series, want 1", n)
	}
	ended := running.DeepCopy()
	driverExited(0, 30*time.Second, time.Hour, corev1.PodSucceeded)(ended)
	tr.pod(ended)
	tr.podGone(ended.UID)
	tr.podGone(ended.UID)
	assertValue(t, m.runningCount.WithLabelValues(lv...), 0, "running after the end")
	assertValue(t, m.successCount.WithLabelValues(lv...), 1, "successes")
	assertValue(t, m.failureCount.WithLabelValues(lv...), 0, "failures")
}

// The running gauge is lowered on the series it was raised on, also when
// the pod's labels changed in between (here its workflow became known).
func TestRunningGaugeIsLoweredWhereItWasRaised(t *testing.T) {
	workflows := map[string]*metav1.ObjectMeta{"wf-1": {Labels: map[string]string{argoLabelWorkflowTemplate: "etl"}}}
	tr, m := testTracker(t, nil, workflows)
	p := pod(spark.RoleExecutor, phased(corev1.PodRunning), ofWorkflow("wf-1"))
	tr.pod(p)
	assertValue(t, m.executorRunningCount.WithLabelValues("jobs", "etl"), 1, "running executors, template etl")
	// The Workflow leaves the cache (deleted) before its executor ends:
	// the pod is still counted, its running gauge lowered where raised.
	delete(workflows, "wf-1")
	done := p.DeepCopy()
	done.Status.Phase = corev1.PodSucceeded
	tr.pod(done)
	assertValue(t, m.executorRunningCount.WithLabelValues("jobs", "etl"), 0, "running executors, template etl")
	assertValue(t, m.executorSuccessCount.WithLabelValues("jobs", ""), 1, "executors succeeded, template unknown")
	if n := seriesOf(m.executorRunningCount); n != 1 {
		t.Errorf("%d running-executor series, want only the one raised", n)
	}
}

// Pods that only look like a run's are not counted: Spark's and
// sparkplug's labels can be set by whoever creates pods in the namespace.
func TestTrackerIgnoresForgedPods(t *testing.T) {
	workflows := map[string]*metav1.ObjectMeta{"wf-1": {Name: "real"}}
	for name, p := range map[string]*corev1.Pod{
		"driver without owner": pod(spark.RoleDriver, phased(corev1.PodSucceeded), func(p *corev1.Pod) {
			p.Labels[spark.LabelWorkflowUID] = "wf-1"
		}),
		"driver owned by another workflow": pod(spark.RoleDriver, phased(corev1.PodSucceeded), ofWorkflow("wf-1"), func(p *corev1.Pod) {
			p.OwnerReferences[0].UID = "wf-other"
		}),
		"driver owned by a pod": pod(spark.RoleDriver, phased(corev1.PodSucceeded), ofWorkflow("wf-1"), func(p *corev1.Pod) {
			p.OwnerReferences[0].Kind = "Pod"
		}),
		"driver of an unknown workflow":   pod(spark.RoleDriver, phased(corev1.PodSucceeded), ofWorkflow("wf-gone")),
		"executor of an unknown workflow": pod(spark.RoleExecutor, phased(corev1.PodSucceeded), ofWorkflow("wf-gone")),
		"executor without workflow":       pod(spark.RoleExecutor, phased(corev1.PodSucceeded)),
	} {
		tr, m := testTracker(t, nil, workflows)
		tr.pod(p)
		if n := seriesOf(m.successCount) + seriesOf(m.executorSuccessCount) + seriesOf(m.count); n != 0 {
			t.Errorf("%s: counted (%d series)", name, n)
		}
	}
	// The real one is.
	tr, m := testTracker(t, nil, workflows)
	tr.pod(pod(spark.RoleDriver, phased(corev1.PodSucceeded), ofWorkflow("wf-1")))
	if n := seriesOf(m.count); n != 1 {
		t.Errorf("a driver owned by its known Workflow: %d application series, want 1", n)
	}
}

// ofWorkflow makes a pod its Workflow's: the workflow-uid label and, for
// a driver, the Workflow as controller.
func ofWorkflow(uid string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Labels[spark.LabelWorkflowUID] = uid
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Name: "wf", UID: types.UID(uid), Controller: ptr.To(true)}}
	}
}

// Failed submissions are the growth of the SparkSubmissionFailed Events'
// counts on Workflows.
func TestTrackerCountsFailedSubmissionsFromEventCounts(t *testing.T) {
	wf := &metav1.ObjectMeta{Labels: map[string]string{argoLabelWorkflowTemplate: "etl", "team": "data"}}
	tr, m := testTracker(t, []string{"team"}, map[string]*metav1.ObjectMeta{"wf-1": wf})
	event := func(uid string, count int32, reason, kind string) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}, Reason: reason, Count: count,
			InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: "jobs", UID: "wf-1"}}
	}
	counter := m.failedSubmissionCount.WithLabelValues("jobs", "etl", "data")
	tr.event(event("e1", 3, spark.ReasonSubmissionFailed, "Workflow"))
	assertValue(t, counter, 3, "an Event first seen counts its count")
	tr.event(event("e1", 5, spark.ReasonSubmissionFailed, "Workflow"))
	tr.event(event("e1", 5, spark.ReasonSubmissionFailed, "Workflow"))
	assertValue(t, counter, 5, "then what its count grew by")
	tr.event(event("e2", 0, spark.ReasonSubmissionFailed, "Workflow"))
	assertValue(t, counter, 6, "an Event without a count is one")
	tr.event(event("e3", 4, "SparkFailed", "Workflow"))
	tr.event(event("e4", 4, spark.ReasonSubmissionFailed, "Pod"))
	assertValue(t, counter, 6, "other reasons and objects count nothing")
	tr.eventGone("e1")
	if len(tr.events) != 1 {
		t.Errorf("%d Events remembered after one of two expired, want 1", len(tr.events))
	}
}

// collect is what c exports now.
func collect(c prometheus.Collector) []*dto.Metric {
	ch := make(chan prometheus.Metric)
	go func() { c.Collect(ch); close(ch) }()
	var out []*dto.Metric
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			panic(err)
		}
		out = append(out, &d)
	}
	return out
}

func seriesOf(c prometheus.Collector) int { return len(collect(c)) }

// assertValue checks the value of a counter or gauge series.
func assertValue(t *testing.T, c prometheus.Collector, want float64, what string) {
	t.Helper()
	ms := collect(c)
	if len(ms) != 1 {
		t.Fatalf("%s: %d series, want 1", what, len(ms))
	}
	got := ms[0].GetCounter().GetValue() + ms[0].GetGauge().GetValue()
	if got != want {
		t.Errorf("%s = %g, want %g", what, got, want)
	}
}
