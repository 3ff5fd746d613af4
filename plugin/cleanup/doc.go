// Package cleanup deletes what sparkplug launched once nothing needs it,
// for both modes, by one rule for "this workflow has ended" (Ended: a
// completed phase, Argo's completed label, or a deletion under way).
//
//   - ttl.go: a finished driver whose timeToLiveSeconds ran out, once the
//     Workflow shows its node fulfilled (Expire, every --ttl-interval);
//   - sweep.go: the running drivers and Kueue Workloads of a workflow
//     that ends, is stopped or terminated (Ending), as soon as its cache
//     sees it (OnEnding), when the controller's discovery sees its
//     TaskSet go (Check), and at a sidecar's shutdown (SweepEnding);
//   - leftovers.go: the drivers no follower of their workflow will
//     delete (Leftovers): the monitor's or the controller's leader over
//     its cache, and any later sidecar of the namespace for the drivers
//     whose time to live ran out (LeftoversOf, every
//     --ttl-leftover-interval).
//
// A process runs its periodic cleanup once (Loop, Run): a sidecar for
// its workflow and the leftovers of its namespace; the monitor, and the
// controller, under their leader. Deletions are by uid, of drivers that
// pass the ownership rule (package driverpod) only, and each is said in
// a log line, a count and an Event on the Workflow.
package cleanup
