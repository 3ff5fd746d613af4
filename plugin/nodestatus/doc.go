// Package nodestatus writes each Spark node's result (phase, message,
// outputs) into its workflow's WorkflowTaskSet, under the node's own id:
// status.nodes[<node id>], where Argo's agent would have written a reply
// and where the controller reads results from, whoever wrote them.
//
// The rules come from the node-identity design, checked in Argo's source
// (v3.6 to v4.1):
//   - Pick (pure) chooses what one batch writes: only nodes still listed,
//     never over a final entry whoever wrote it, never for a node the
//     Workflow shows fulfilled, never a result without a phase, nothing
//     while a vanished final entry may be Argo's own removal (Rules.Hold),
//     a change of a Running node's message alone, in the same state
//     (its progress), at most once per progress interval, and an interim
//     state every run passes through (a start's SUBMITTED or QUEUED, a
//     stored driver log's upload) only once it has lasted
//     Rules.InterimHold, but for the first result recording a driver's
//     uid, written at once (the record is the defence against a pod put
//     in the driver's place): a normal life is three writes, the driver's
//     record, Running and its final result, two when the driver runs by
//     the first write; and a Pending or Running entry the Workflow shows
//     applied (Applied) is withdrawn, since Argo's controller copies every
//     entry into its node and updates the Workflow at every operate: each
//     result written then costs Argo one Workflow update, not one every
//     requeue while the driver runs; the next result is compared with what
//     the Workflow shows (Current);
//   - MayWrite (pure) forbids every write once the TaskSet or Workflow is
//     done, shut down or being deleted, or is another workflow's;
//   - Patch is one merge patch on the status subresource per batch,
//     guarded by the resourceVersion of the view the batch was picked
//     from, so a batch decided on a stale view never lands;
//   - Fit cuts a batch to what one patch may carry (MaxPatchBytes, 1 MiB,
//     under the API server's and etcd's limits); the rest waits for the
//     next patch, and a result too large for any patch is written as a
//     bounded failure saying what was too large (TooLarge);
//   - Writer carries it out: at most one patch per MinGap, a conflict read
//     afresh and decided again (Tries at most), a missing TaskSet waited
//     for, a refusal for size (413, etcd's "request is too large") taken
//     as a smaller batch, then the node's failure, then giving the node
//     up: never the same patch forever. It never updates the whole
//     object, never touches spec or labels, and removes no entry but an
//     applied Pending or Running one.
package nodestatus
