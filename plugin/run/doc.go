// Package run is `sparkplug run`: submit one Workflow, follow it to its
// end, and say in one line per Spark node how each ended, as `argo submit
// --wait` does, without Argo's CLI. It is what the chart's `helm test`
// runs (a Pod of the sparkplug image, so a cluster that can pull the
// sidecar can run the test), and it works from a laptop as well.
//
// The pure parts, tested without a cluster: reading the file (one
// Workflow: Parse; its namespace the one asked for: Place) and the report
// (the workflow's end, then each Spark node's phase, message, application
// id and driver, in the order they started: Report). Follow does the API
// calls: one Create, then one Get every Interval until the Workflow ended
// or the time ran out (a Get that fails is retried until then; a Workflow
// deleted meanwhile ends the wait at once), writes the report, then makes
// one Delete of a Workflow that Succeeded unless asked to keep it. A Workflow
// that did not succeed is kept for the user to read, and the error says how
// to delete it.
//
// What the user running it needs in the namespace: create, get and delete
// on workflows.
package run
