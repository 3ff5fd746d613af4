// Package monitor is `sparkplug monitor`: a small Deployment, beside
// the sidecars, that does what no sidecar can. A sidecar lives in its
// workflow's agent pod and goes with it, so it cannot count applications
// across workflows, and cannot clean up after its workflow has ended.
//
// Its work is Duties (duties.go): the metrics, and for each leadership
// the counting and the leader's one cleanup loop. Run (run.go) is
// `sparkplug monitor`'s process around them: the servers, the clients
// and the Lease, from package daemon. `sparkplug controller` runs the
// same Duties inside a process of its own (package controller); the
// monitor never runs Spark steps, and links no code that does
// (plugin/depstest's modes_test.go).
//
// # What it watches
//
// Per namespace of Options.Namespaces (one set of informers each, so a
// namespaced Role per namespace is all it needs): sparkplug's driver and
// executor pods (app.kubernetes.io/managed-by=sparkplug and spark-role),
// the metadata of Argo's Workflows (Argo keeps a workflow's state in its
// labels: workflows.argoproj.io/completed, .../phase, and the
// CronWorkflow or WorkflowTemplate it came from), and the Events of
// reason SparkSubmissionFailed the sidecars record on Workflows
// (watch.go).
//
// # Metrics
//
// The Spark operator's (v2.5) families, names, types and labels, so its
// dashboards and alerts keep working (metrics.go). The operator counts
// SparkApplications; sparkplug has none, so its driver pods stand for
// them: a first attempt's driver is an application, every driver a
// submission. The state of a pod is a pure function of it (factsOf in
// state.go), and what a change of state does to the metrics is another
// (transitions); both mirror the operator's handlers: a pod first seen,
// also when the monitor starts leading and lists what exists, counts what
// it is (so the running gauge comes back after a restart, and counters
// count again what is still there, as the operator's do for the
// SparkApplications that still exist), and an update counts only a change
// of state. Where the meaning differs:
//
//   - spark_application_success_count and _failure_count count every
//     attempt's driver; the operator counts an application once, by its
//     last attempt. A run that failed twice and then succeeded is 2
//     failures and 1 success here.
//   - spark_application_submit_latency_seconds runs from the first
//     attempt's driver pod's creation to its being scheduled: the nearest
//     thing to the operator's "submitted", which is when spark-submit
//     returned. spark_application_start_latency_seconds runs to the driver
//     container's start, and the execution times to its end.
//   - spark_application_failed_submission_count counts the submissions the
//     API server refused (no driver was made), from the count of the
//     SparkSubmissionFailed Events. client-go's recorder, which the
//     sidecar records them with, drops Events of one workflow beyond a
//     burst of 25 then one per 5 minutes, so a workflow refused faster
//     than that is undercounted; an Event that expired (after an hour, by
//     default) before the monitor saw it is not counted.
//   - the executors' families are the operator's sparkpod_metrics,
//     executors first seen already ended are not counted, as there.
//
// Every spark_* family is labelled namespace, workflow_template (the
// CronWorkflow, WorkflowTemplate or ClusterWorkflowTemplate the pod's
// workflow came from; "" for none, or while the monitor does not know
// the workflow), then one label per Options.MetricsLabels: the pod's
// label of that name, with '-' and any other character Prometheus refuses
// made '_' as the operator makes '-', "Unknown" when the pod has none (for
// failed submissions, which have no pod, the Workflow's label). No label
// names a workflow or a pod: the number of series stays bounded by what
// the cluster's templates are, not by how many runs there were. Metrics
// count what carries sparkplug's labels, as the operator's count pods by
// label; only the deletions below check ownership.
//
// # Cleanup
//
// Every Options.TTLInterval the leader deletes (cleanup.go, by package
// cleanup's rules, in the one cleanup loop of the process) the drivers
// whose timeToLiveSeconds ran out and whose workflow ended or is gone
// (reason expired, Event SparkDriverExpired), the drivers still running
// whose workflow ended (workflow_ended, Event SparkDriverDeleted: a
// stopped or terminated workflow ends while its drivers run, argo
// #10476, and its sidecar may have missed it), and the drivers of a
// Workflow that no longer exists (workflow_deleted). It uses the
// sidecar's rules (package driverpod): a pod is a driver only with the
// name sparkplug gives it and the Workflow as its owner, so a pod with
// copied labels is never deleted, and a deletion is by uid. The cache
// only chooses candidates: before acting the monitor reads the Workflow
// from the API server, so a cache that lags, or a completed workflow that
// `argo retry` made run again, never loses a driver.
//
// # Replicas
//
// Replicas elect a leader with a Lease (client-go's leaderelection).
// Only the leader runs the informers, counts and deletes; every replica
// serves /metrics, /healthz and /readyz. The spark_* families are
// registered for a leadership and unregistered at its end, so a replica
// that does not lead exports sparkplug_build_info,
// sparkplug_monitor_leader 0 and no spark_* series, and a sum over
// replicas never counts twice. A new leadership starts from nothing:
// fresh informers, counters from zero that count again what exists, as
// after a restart (Prometheus' rate() and increase() treat that as a
// counter reset). A leader that stops renewing its Lease fails /healthz.
// On SIGTERM it releases the Lease, so another replica takes over at
// once.
package monitor
