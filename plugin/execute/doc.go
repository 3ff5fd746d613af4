// Package execute answers Argo's template.execute for `spark` steps: it is
// the request core between the thin HTTP server and the cluster.
//
// Each request goes gather -> decide -> act:
//   - gather (gather.go) reads one plain snapshot from the workflow's cache
//     (package scope): the TaskSet's nodes with the request's template key
//     and their recorded results, the Workflow's node status, the runs
//     launched for them (driver pods by node, ghosts, tombstones) with
//     their executors, and the submission failures kept in memory. It
//     writes nothing, and makes no API request in steady state.
//   - decide (decide.go, judge.go, limits.go) is pure: which node is asking
//     (package identity), what to launch and adopt, and for the answering
//     run its state (package state), the time limits, the restart policy,
//     whether to stop it, relaunch it or record its hand-out. Answers are
//     typed state.Outcome values; state.Outcome.Message renders the text.
//     One answer is none: while an identical node's recorded result is
//     still listed, the asking node cannot be told apart from it, and the
//     reply's node has no phase, which the agent does not record
//     (identity.Decision.Ambiguous).
//     decide_test.go holds the table: one named row per scenario.
//   - act (act.go, launch.go, submit.go) carries the plan out: creates the
//     objects that package objects builds (a batch scheduler's PodGroup first, then
//     the driver, natively or by spark-submit, then what the driver owns),
//     annotates hand-outs and adoptions on the driver pods, turns a stopped
//     driver's ConfigMap into a tombstone, records Events (events.go) and
//     metrics, and replies. It re-decides at most once: with a fresh
//     TaskSet when only closed nodes backed the decision, and how a freshly
//     launched attempt answers.
//
// The step itself (body, key, timeout, objects) comes from package step,
// which sparkplug render uses too. Outside requests, sweep.go deletes the
// running drivers of an ending workflow and ttl.go expires finished ones.
// options.go holds the core's settings; bookkeeping.go the little kept in
// memory; outcomes.go the answers that are not a run's own state.
//
// Nothing is remembered only in memory except submission-failure counts
// and the spark-submit runs in flight: attempts, hand-outs and adoptions
// live on the driver pods, so a restarted plugin continues where the last
// one stopped and repeated calls never create a second driver (names are
// deterministic; a create that finds the object is an adoption, not an
// error).
package execute
