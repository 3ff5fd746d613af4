// Package identity holds the pure facts about Argo nodes and templates
// that sparkplug's labels and results need: NodeHash, a label-safe hash of
// a node id (ids can exceed a label's 63 characters); InLoop, whether a
// node is a loop's child, whose result Argo decodes as JSON; and Key, a
// label-safe hash of a template's canonical form, the
// sparkplug.io/template label; and the one rule for an object owned by a
// Workflow (OwnedByWorkflow, WorkflowOwnerUID), which the writer, the
// monitor, the controller's discovery and the sidecar's start read.
//
// Which node a run belongs to is never inferred: sparkplug follows each
// node by its id in the WorkflowTaskSet (package execute).
package identity
