package spark

// WorkflowRef names the Argo Workflow a run belongs to: what a request's
// workflow.metadata says, what a run's names hash and what its objects are
// owned by. It is the one reference type every package passes around.
type WorkflowRef struct{ Name, Namespace, UID string }
