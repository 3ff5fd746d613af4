// Package identity answers "which Argo node is asking?" when the request
// never says.
//
// The agent's template.execute request names the workflow and carries the
// substituted template, but no node id. Retries of one node and identical
// tasks of one DAG send identical requests, yet each node must get its own
// Spark run and its own result, and no node may get two runs. The
// WorkflowTaskSet is the authority: spec.tasks maps every unfulfilled node id
// to its template, status.nodes holds the results the agent already patched.
//
// Key canonicalises a template so a request and a TaskSet entry compare equal
// after Argo's decode/re-encode round trip. Resolve is a pure function from
// the TaskSet view and the runs sparkplug already launched (read back from
// the cluster, never from memory) to what to do: which nodes need a run,
// which run answers this request, and which bookkeeping to write. Identical
// nodes are interchangeable, so any one-to-one pairing of nodes and runs is
// correct; Resolve keeps the pairing one-to-one across lost replies and
// restarts. See the Resolve comment for the rules.
package identity
