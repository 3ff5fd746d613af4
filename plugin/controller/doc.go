// Package controller is `sparkplug controller`: one process for the
// cluster (or for the namespaces it is given) that runs the Spark steps
// of every workflow there, where in sidecar mode each workflow's agent pod
// carries a sparkplug of its own.
//
// It needs no request from Argo's agent: a node's identity and its
// result both live in the workflow's WorkflowTaskSet (node-identity
// design), so whoever watches the TaskSets can launch and report. The
// agent pod carries only the acknowledger (cmd/sparkplug-ack), which
// answers the agent so that it writes nothing and never asks again.
//
// What it runs, as a process of its own (controller.go):
//   - the set-up it shares with the sidecar (package daemon: clients,
//     policy, templates, Events, metrics, profiles), its /metrics,
//     /healthz and /readyz, and leader election (daemon.Lead, on the
//     Lease sparkplug-controller);
//   - the monitor's duties (monitor.Duties): its metrics, and, while it
//     leads, counting and the leader's one cleanup loop (package
//     cleanup), which also expires the finished drivers of the workflows
//     it follows; `sparkplug monitor` runs the same duties alone, and
//     never the controller's;
//   - while it leads, the same per-node reconciler as the sidecar
//     (package execute, with its caches, package scope), fresh for each
//     leadership: everything is rebuilt from the cluster, so a new
//     leader, or a restarted one, continues where the last one stopped
//     (names are deterministic, a create that finds the object adopts
//     it, results are in the TaskSet);
//   - discovery (discover.go): one informer per namespace on the
//     WorkflowTaskSets of open workflows (Argo labels a finished
//     workflow's TaskSet completed), which starts following every
//     workflow whose TaskSet lists a Spark task, and stops following one
//     once it finished or is gone (execute.Options.ReleaseEnded).
//
// It imports no request code, neither HTTP nor the sidecar's answer to
// the agent (package request; plugin/depstest's modes_test.go checks):
// the agent's requests are the acknowledger's.
package controller
