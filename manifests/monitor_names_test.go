package manifests

// monitorMetricNames are the metric families sparkplug monitor exports.
// Stand-in until plugin/monitor's MetricNames exists.
func monitorMetricNames() []string {
	return []string{
		"spark_application_count",
		"spark_application_submit_count",
		"spark_application_failed_submission_count",
		"spark_application_running_count",
		"spark_application_success_count",
		"spark_application_failure_count",
		"spark_application_start_latency_seconds",
		"spark_application_start_latency_seconds_histogram",
		"spark_application_submit_latency_seconds",
		"spark_application_submit_latency_seconds_histogram",
		"spark_application_success_execution_time_seconds",
		"spark_application_failure_execution_time_seconds",
		"spark_executor_running_count",
		"spark_executor_success_count",
		"spark_executor_failure_count",
		"sparkplug_build_info",
		"sparkplug_monitor_leader",
		"sparkplug_monitor_drivers_deleted_total",
	}
}
