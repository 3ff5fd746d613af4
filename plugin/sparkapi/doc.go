// Package sparkapi reads a running Spark application's own progress from
// its driver's monitoring REST API, for the RUNNING message of a spark
// node ("RUNNING 3/3 executors, 4m10s, stage 4/7, 1,200/3,000 tasks").
//
// # What is shown
//
// Client.Progress makes one request,
//
//	GET <ui>/api/v1/applications/<spark.app.id>/jobs?status=running
//
// (Spark's docs/monitoring.md; AbstractApplicationResource.jobsList),
// whose reply is a list of Spark's JobData (status/api/v1/api.scala). Of
// the jobs whose status is RUNNING it shows the one with the lowest jobId,
// the oldest, and renders it as "stage S/N, D/T tasks" with the numbers
// Spark's own jobs page shows for it (AllJobsPage):
//
//   - N = len(stageIds) - numSkippedStages, S = numCompletedStages + 1
//     (between 1 and N): the stage being worked on. While the job runs, stages
//     Spark will skip (their shuffle output is reused from an earlier job)
//     are counted in N until the job ends, as on Spark's page.
//   - T = numTasks - numSkippedTasks, D = numCompletedIndices (distinct
//     tasks done, so retries and speculative copies count once;
//     numCompletedTasks where an older Spark's reply lacks it), at most
//     T.
//     Spark's numTasks leaves out stages already computed when the job
//     started, so T is the work this job really has.
//
// Numbers carry thousands separators. With no running job (between jobs,
// or before the first) the text is "". One request per refresh keeps the
// load on the driver, whose UI shares its JVM, as small as it can be; the
// stage list (/stages?status=active) would add a request and tell nothing
// the job does not.
//
// # Why the request path never waits
//
// The Argo agent waits for the plugin's reply before it records a node's
// result, with a bounded number of workers for all the nodes of a
// workflow: a reply held up by one slow driver would hold up its node and
// the nodes queued behind it. So the request path
// calls Tracker.Get, which returns the text the last refresh left at once
// and, when that text is older than the refresh interval, starts a
// refresh in the background. Everything about a refresh is bounded: one
// call takes at most the client's timeout (500 ms by default, dialling to
// the last byte), reads at most MaxBody (1 MiB) of the reply, follows
// redirects only to the same host and port, uses no proxy; at most one
// refresh runs per key and at most MaxRefreshes (4) in all, so even with
// every driver hanging the plugin makes at most 4 requests per timeout.
// Entries not asked for in 10 minutes expire, and at most 10,000 are kept
// (the least recently asked go first), so a missed Forget costs nothing
// lasting. The first Get of a driver returns ""; its progress shows from
// the next reply on.
//
// # Use
//
// One Tracker for the process (NewTracker(NewClient(0), TrackerOptions{...})).
// For a running driver pod, the request path calls
//
//	text, _ := tracker.Get(string(driver.UID), uiURL, driver.Labels["spark-app-selector"])
//
// with uiURL the driver's UI inside the cluster (http://<ui or driver
// Service>.<namespace>.svc:<port>, never an Ingress URL meant for a
// browser), appends text to the message when it is not "", and calls
// Forget with the same key once the driver has ended or is deleted. The
// pod's UID keys a driver, not a node: a new attempt is a new pod.
//
// # When the driver's UI cannot be reached
//
// The text is then "", and the caller shows the executor count and the
// elapsed time alone, never an error: with spark.ui.enabled=false (nothing
// listens: refused), a NetworkPolicy that drops the plugin's packets (the
// timeout), UI filters or ACLs (spark.ui.filters, spark.acls.enable: HTTP
// 401/403), an SSL UI whose certificate the plugin does not trust, a
// driver that has not yet started its UI, or an application id that is
// not the driver's spark.app.id (HTTP 404: a live UI answers only for its
// own). A refresh that fails clears the text rather than keep a stale
// one, and the next refresh interval tries again.
package sparkapi
