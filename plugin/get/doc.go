// Package get is `sparkplug get`: the Spark steps of a namespace, or of
// every namespace, as `kubectl get sparkapplications` lists the Spark
// operator's applications, read from the Workflows that run them.
//
// A step is a Spark node of a Workflow (logs.SparkNodes: a Plugin node
// whose template is a spark step, or whose outputs say sparkplug ran it),
// with what the node reports: its phase, its message, and its outputs
// (application id, driver pod, attempt, UI URLs).
//
// The pure parts, tested without a cluster: a Workflow's steps (Steps), a
// driver pod's status in one word (DriverStatus), and the table kubectl
// would print of them, default and wide (Table), with the widths kept
// across the rows --watch prints later. Run does the API calls: one List
// of Workflows (one namespace, or all), a Get of each step's driver for
// the outputs that show its status (-o wide, json, yaml), and with Watch a
// watch on the same Workflows from the List's resource version, printing
// only the steps that changed.
//
// What the user running it needs: list (and, for --watch, watch) on
// workflows, and for -o wide, json or yaml get on pods, in the namespace,
// or in every namespace with -A.
package get
