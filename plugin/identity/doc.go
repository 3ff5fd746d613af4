// Package identity holds the pure facts about Argo nodes that
// sparkplug's labels and results need, without Argo's types: NodeHash, a
// label-safe hash of a node id (ids can exceed a label's 63 characters);
// LoopChild and AttemptParent, what a node's name says of a loop's child,
// whose result Argo decodes as JSON, and of a retried attempt (scope.InLoop
// reads them off a Workflow's nodes); KeyLength, the length of a
// template's key (step.Key, the sparkplug.io/template label); and the
// one rule for an object owned by a Workflow (OwnedByWorkflow,
// WorkflowOwnerUID), which the writer, the monitor, the controller's
// discovery and the sidecar's start read.
//
// Which node a run belongs to is never inferred: sparkplug follows each
// node by its id in the WorkflowTaskSet (package execute).
package identity
