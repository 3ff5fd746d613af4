// Package scope keeps, per running Workflow, a read cache of exactly what
// sparkplug needs to answer that workflow's polls: its WorkflowTaskSet and
// the pods, ConfigMaps, Services and Ingresses labelled with its uid.
//
// One sidecar runs per workflow, so a namespace-wide pod informer per
// sidecar would multiply API server load by the number of running
// workflows. A Scope watches only objects carrying
// sparkplug.io/workflow-uid=<uid> (and the one TaskSet by name), so a
// steady-state status poll is answered from memory with zero API requests.
// Writes go through the client and are folded into the cache at once
// (a mutation cache), so the next poll sees them even before the watch
// does. Scopes start on a workflow's first request and stop when idle.
//
// One workflow may run a thousand Spark steps, so the cache keeps of each
// object only what sparkplug reads (slim: no managedFields, of a pod its
// containers' names but no other spec, no ConfigMap data, of the Workflow
// its phase, shutdown and node statuses, decompressed when Argo compressed
// them), and a request reads only its own step's share: pods and
// ConfigMaps are indexed by template key and application id, the TaskSet's
// tasks by template key once per TaskSet version.
package scope
