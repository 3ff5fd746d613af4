// Package scope keeps, per followed Workflow, a read cache of exactly what
// sparkplug needs to follow that workflow's Spark nodes: its
// WorkflowTaskSet and Workflow, and the pods, ConfigMaps, Services and
// Ingresses labelled with its uid.
//
// One sidecar runs per workflow, so a namespace-wide pod informer per
// sidecar would multiply API server load by the number of running
// workflows. A Scope watches only objects carrying
// sparkplug.io/workflow-uid=<uid> (and the one TaskSet and Workflow by
// name), so a pass over a node reads memory and makes no API request.
// Writes go through the client and are folded into the cache at once (a
// mutation cache), so the next pass sees them even before the watch does.
// A scope starts when its workflow is first followed and lives until
// Release (or as long as the process); OnChange tells the caller which node
// a changed object concerns (or every node, for the TaskSet and the
// Workflow).
//
// The controller follows every workflow of its namespaces, where a watch
// per kind and workflow would be six per workflow: its registry
// (NewSharedRegistry) keeps, per namespace, one cache of each kind (run
// objects selected by the sparkplug.io/workflow-uid label, and every
// TaskSet and Workflow), and each scope reads only the objects of its own
// workflow's uid, as if it watched alone.
//
// One workflow may run a thousand Spark steps, so the cache keeps of each
// object only what sparkplug reads (slim: no managedFields, of a pod its
// containers' names and the ConfigMaps its volumes name but no other
// spec, no ConfigMap data), and a pass reads only its own node's share:
// pods and ConfigMaps are indexed by node and application id. The runs'
// Kueue Workloads are watched only once a queued step asks
// (kueue.go), their pod templates dropped.
//
// Of a Workflow it keeps its phase, shutdown, times and artifact
// repository, and of its nodes only the plugin nodes (a Spark node is
// one) and the Retry parents of their loop attempts, each by id, name,
// type and phase (nodes.go), and of an open plugin node the result Argo
// applied to it, its message and outputs (within bounds), which stands
// for its entry once that is withdrawn (nodestatus.Applied); a Workflow without a plugin node, most of a
// controller's, keeps hardly more than its name. Nodes Argo compressed
// are read as a stream, a node at a time, within bounds of the JSON read
// in all, of one node, and of what is kept: a Workflow over one (a
// compression bomb) is refused alone (Refused, OnRefused), its nodes not
// kept, and every other workflow is followed as before.
package scope
