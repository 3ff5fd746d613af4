// Package logs is `sparkplug logs`: the driver logs of a workflow's Spark
// nodes, printed or followed as `argo logs` does for a workflow's pods.
//
// The pods are found the way sparkplug finds its own runs, never by
// guessing a name: the driver pods labelled with the Workflow's uid
// (sparkplug.io/workflow-uid) and spark-role=driver, kept only when they
// are what sparkplug made for a node (the name objects.NamesFor gives the
// node's attempt, owned by that Workflow), since anyone who may create pods
// in the namespace can copy labels; their executors by spark-app-selector
// and spark-role=executor, owned by their driver. A node is a Spark node
// when it is a Plugin node whose template is a spark step, or, when its
// template cannot be found in the Workflow, when a driver or the node's
// recorded outputs say sparkplug ran it.
//
// The pure parts, tested without a cluster: which nodes are Spark nodes and
// in which order they started (SparkNodes), which node an argument names
// (FindNode), which pods of a node are printed (Plan: attempts, executors),
// what is wrong with a pod whose log cannot be read (Pending, gone), and
// how several streams share one writer: whole lines, each after its pod's
// name, never two lines mixed (Output). Run does the API calls: one Get of
// the Workflow and one List of its drivers (and of each chosen driver's
// executors) without --follow; with it, a watch on the workflow's pods and
// a Get of the Workflow every few seconds, to see drivers appear and nodes
// finish, and one goroutine per followed pod, at most MaxStreams at once.
//
// With Previous, each container's previous instance is printed, as
// kubectl logs -p; a container that has not restarted has none, which is
// said before any log is asked for (Spark's pods never restart theirs).
//
// What the user running it needs in the namespace: get on workflows, list
// and watch on pods, get on pods/log.
package logs
