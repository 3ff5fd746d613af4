package monitor

import (
	"regexp"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/sparkplug-io/sparkplug/plugin/cleanup"
	"github.com/sparkplug-io/sparkplug/plugin/cli"
)

// sparkMetrics are the Spark operator's families (its
// internal/metrics/sparkapplication_metrics.go and sparkpod_metrics.go,
// names from pkg/common/metrics.go), with the same types and help. A set
// lives as long as one leadership: registered when this replica starts to
// lead, unregistered when it stops, so only the leader exports spark_*
// series and a sum over replicas never counts twice.
type sparkMetrics struct {
	count, submitCount, failedSubmissionCount, successCount, failureCount *prometheus.CounterVec
	runningCount                                                          *prometheus.GaugeVec
	successExecutionTime, failureExecutionTime                            *prometheus.SummaryVec
	submitLatency, startLatency                                           *prometheus.SummaryVec
	submitLatencyHistogram, startLatencyHistogram                         *prometheus.HistogramVec

	executorRunningCount               *prometheus.GaugeVec
	executorSuccessCount, executorFail *prometheus.CounterVec
}

func newSparkMetrics(labels []string, startBuckets []float64) *sparkMetrics {
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	}
	summary := func(name, help string) *prometheus.SummaryVec {
		return prometheus.NewSummaryVec(prometheus.SummaryOpts{Name: name, Help: help}, labels)
	}
	histogram := func(name, help string, buckets []float64) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	}
	return &sparkMetrics{
		count:                  counter("spark_application_count", "Total number of SparkApplication (here: first attempts' driver pods seen)"),
		submitCount:            counter("spark_application_submit_count", "Total number of submitted SparkApplication (here: driver pods seen, every attempt)"),
		failedSubmissionCount:  counter("spark_application_failed_submission_count", "Total number of failed SparkApplication submission (here: SparkSubmissionFailed Events on Workflows)"),
		runningCount:           gauge("spark_application_running_count", "Total number of running SparkApplication (here: driver containers running)"),
		successCount:           counter("spark_application_success_count", "Total number of successful SparkApplication (here: driver pods that succeeded, every attempt)"),
		failureCount:           counter("spark_application_failure_count", "Total number of failed SparkApplication (here: driver pods that failed, every attempt)"),
		successExecutionTime:   summary("spark_application_success_execution_time_seconds", "Time from a driver pod's creation to its driver's successful end"),
		failureExecutionTime:   summary("spark_application_failure_execution_time_seconds", "Time from a driver pod's creation to its driver's failed end"),
		submitLatency:          summary("spark_application_submit_latency_seconds", "Spark App Submit Latency from creation to submitted state (here: first attempt's driver pod created to scheduled)"),
		submitLatencyHistogram: histogram("spark_application_submit_latency_seconds_histogram", "Spark App Submit Latency counts in buckets from creation to submitted state (here: first attempt's driver pod created to scheduled)", submitLatencyBuckets),
		startLatency:           summary("spark_application_start_latency_seconds", "Spark App Start Latency (here: first attempt's driver pod created to its driver container started)"),
		startLatencyHistogram:  histogram("spark_application_start_latency_seconds_histogram", "Spark App Start Latency counts in buckets (here: first attempt's driver pod created to its driver container started)", startBuckets),
		executorRunningCount:   gauge("spark_executor_running_count", "Total number of running Spark executors"),
		executorSuccessCount:   counter("spark_executor_success_count", "Total number of successful Spark executors"),
		executorFail:           counter("spark_executor_failure_count", "Total number of failed Spark executors"),
	}
}

func (m *sparkMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.count, m.submitCount, m.failedSubmissionCount, m.runningCount, m.successCount, m.failureCount,
		m.successExecutionTime, m.failureExecutionTime, m.submitLatency, m.submitLatencyHistogram, m.startLatency, m.startLatencyHistogram,
		m.executorRunningCount, m.executorSuccessCount, m.executorFail}
}

// apply makes the changes to the series of label values lv.
func (m *sparkMetrics) apply(cs []change, lv []string) {
	for _, c := range cs {
		switch c.what {
		case appCount:
			m.count.WithLabelValues(lv...).Inc()
		case appSubmit:
			m.submitCount.WithLabelValues(lv...).Inc()
		case appRunningUp:
			m.runningCount.WithLabelValues(lv...).Inc()
		case appRunningDown:
			m.runningCount.WithLabelValues(lv...).Dec()
		case appSuccess:
			m.successCount.WithLabelValues(lv...).Inc()
		case appFailure:
			m.failureCount.WithLabelValues(lv...).Inc()
		case appSubmitLatency:
			m.submitLatency.WithLabelValues(lv...).Observe(c.seconds)
			m.submitLatencyHistogram.WithLabelValues(lv...).Observe(c.seconds)
		case appStartLatency:
			m.startLatency.WithLabelValues(lv...).Observe(c.seconds)
			m.startLatencyHistogram.WithLabelValues(lv...).Observe(c.seconds)
		case appSuccessTime:
			m.successExecutionTime.WithLabelValues(lv...).Observe(c.seconds)
		case appFailureTime:
			m.failureExecutionTime.WithLabelValues(lv...).Observe(c.seconds)
		case executorRunningUp:
			m.executorRunningCount.WithLabelValues(lv...).Inc()
		case executorRunningDown:
			m.executorRunningCount.WithLabelValues(lv...).Dec()
		case executorSuccess:
			m.executorSuccessCount.WithLabelValues(lv...).Inc()
		case executorFailure:
			m.executorFail.WithLabelValues(lv...).Inc()
		}
	}
}

// ownMetrics are every replica's: what it is, whether it leads, what it
// deleted while it led, and the Go runtime's and the process's.
type ownMetrics struct {
	buildInfo *prometheus.GaugeVec
	leader    prometheus.Gauge
	deleted   *prometheus.CounterVec
	runtime   []prometheus.Collector
}

func newOwnMetrics(v cli.Version) *ownMetrics {
	m := &ownMetrics{
		buildInfo: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "sparkplug_build_info",
			Help: "Always 1; the labels say which sparkplug this is.",
		}, []string{"version", "revision", "goversion"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sparkplug_monitor_leader",
			Help: "1 on the monitor replica that leads (counts the spark_* metrics and deletes drivers), 0 on the others.",
		}),
		deleted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparkplug_monitor_drivers_deleted_total",
			Help: "Driver pods the monitor deleted: timeToLiveSeconds ran out after the workflow ended (expired), still running when the workflow ended (workflow_ended), or the workflow is gone (workflow_deleted).",
		}, []string{"reason"}),
		runtime: []prometheus.Collector{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})},
	}
	m.buildInfo.WithLabelValues(v.Version, v.Commit, v.GoVersion).Set(1)
	// Every reason from 0, so a rate() over it works before the first
	// deletion.
	for _, r := range []string{cleanup.ReasonExpired, cleanup.ReasonWorkflowEnded, cleanup.ReasonWorkflowDeleted} {
		m.deleted.WithLabelValues(r)
	}
	return m
}

func (m *ownMetrics) collectors() []prometheus.Collector {
	return append([]prometheus.Collector{m.buildInfo, m.leader, m.deleted}, m.runtime...)
}

// MetricNames are the names of the metric families the monitor exports,
// sorted: the spark_* families (on the leader), its own sparkplug_*
// ones, and the go_* and process_* ones of the Go runtime and the process.
// They come from the collectors the monitor registers, so a dashboard or
// an alert rule can be checked against them.
func MetricNames() []string {
	var names []string
	descs := make(chan *prometheus.Desc)
	go func() {
		for _, c := range append(newOwnMetrics(cli.Version{}).collectors(), newSparkMetrics(nil, DefaultStartLatencyBuckets).collectors()...) {
			c.Describe(descs)
		}
		close(descs)
	}()
	for d := range descs {
		// A Desc tells its name only in its String (Desc{fqName: "...", ...}).
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			names = append(names, m[1])
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

var fqName = regexp.MustCompile(`^Desc\{fqName: "([^"]+)"`)
