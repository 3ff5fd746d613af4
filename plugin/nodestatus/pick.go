package nodestatus

import (
	"encoding/json"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Want is the result a node should show, when it was last written, the
// Workflow's incarnation it was derived in, and since when the node has
// been in the result's state (its phase, and the state its message opens
// with: SUBMITTED, RUNNING, ...), for Rules.InterimHold.
type Want struct {
	Result      wfv1.NodeResult
	Written     time.Time
	Incarnation string
	Since       time.Time
}

// Memory is what the writer remembers between batches: the nodes whose
// entry it saw terminal, and since when such a node's entry is missing
// while the node is still listed.
type Memory struct {
	Terminal map[string]bool
	Vanished map[string]time.Time
}

// Rules are the timings of the write rules.
type Rules struct {
	// ProgressInterval: a change of the message alone (same phase, not
	// final) is written at most once per interval per node; 0: at once.
	ProgressInterval time.Duration
	// Hold is how long a node whose terminal entry vanished while it is
	// still listed is left alone: Argo's controller removes a fulfilled
	// node's entry first and its task a moment later, and updates the
	// Workflow after both. Past Hold, with the Workflow still showing the
	// node open, that update failed and the result is written again.
	Hold time.Duration
	// InterimHold is how long a node stays in an interim state, one that
	// every run passes through on its way, before that state is written:
	// a start's wait (Pending SUBMITTED: its driver not started yet;
	// Pending QUEUED: Kueue has not admitted it), or a driver that ended
	// while its log is stored (Running COMPLETED or FAILED, "archiving the
	// driver log"). Most last a second or two, and Argo shows the node as
	// it was meanwhile (Pending, or Running), so only one that lasts (a
	// slow image pull, a driver no node fits, a Kueue queue, a slow
	// upload) is worth a write; 0: at once. A result that records a
	// driver's uid the entry does not is never held (recordsNewDriver).
	InterimHold time.Duration
}

// Verdict of one batch: the entries to write, the entries to withdraw
// (Applied), and the nodes no longer to care about (unlisted, or closed
// by whoever wrote their final entry).
type Verdict struct {
	Batch    map[string]wfv1.NodeResult
	Withdraw []string
	Drop     []string
}

// MayWrite says whether the TaskSet ts of the Workflow wf (uid: the
// workflow this process serves) may be written at all: it is that
// workflow's, and neither it nor the Workflow is done, shut down or being
// deleted. why says what forbids it.
func MayWrite(ts *wfv1.WorkflowTaskSet, wf *wfv1.Workflow, uid string) (ok bool, why string) {
	switch {
	case ts == nil:
		return false, "no task set"
	case !identity.OwnedByWorkflow(ts.OwnerReferences, uid):
		return false, "the task set is not this workflow's"
	case ts.Labels[spark.ArgoLabelCompleted] == "true":
		return false, "the task set is completed"
	case wf == nil || string(wf.UID) != uid:
		return false, "the workflow is not known"
	case wf.Status.Phase.Completed():
		return false, "the workflow completed"
	case wf.Spec.Shutdown != "":
		return false, "the workflow is shut down"
	case wf.DeletionTimestamp != nil:
		return false, "the workflow is being deleted"
	}
	return true, ""
}

// Pick chooses, from the results wanted, the entries one batch writes
// into ts (rules R6 and R8 of the node-identity design):
//   - only nodes ts lists, whose entry is absent, or not final and other
//     than the result wanted;
//   - never over a final entry, whoever wrote it, nor for a node the
//     Workflow shows fulfilled;
//   - never a result without a phase;
//   - a node whose final entry vanished while it is still listed is held
//     (Rules.Hold);
//   - a change of a Running node's message alone, its state the same
//     (progress: executors, elapsed time), waits out
//     Rules.ProgressInterval;
//   - an interim state (interim: a start's wait, SUBMITTED or QUEUED; a
//     driver that ended while its log is stored) is written once the node
//     has been in it Rules.InterimHold, in the words it has then (a slow
//     image pull, a driver no node fits, a Kueue queue), and not at all
//     when the node moves on sooner; any other state (RUNNING,
//     PENDING_RERUN, a refused submission's SUBMISSION_FAILED, a final
//     result) is written at once, and so is an interim result that
//     records a driver the entry does not (recordsNewDriver);
//   - a Pending or Running entry the Workflow shows applied (Applied) is
//     withdrawn: Argo's controller copies every entry into its node at
//     every operate and updates the Workflow each time (setting the
//     node's finishedAt to now), so an entry left in place costs Argo a
//     Workflow write every requeue for as long as the node runs. Once
//     withdrawn, the node's applied result in the Workflow is what the
//     next result is compared with, as the entry was.
//
// It updates mem as it sees entries. The caller checked MayWrite.
func Pick(ts *wfv1.WorkflowTaskSet, wf *wfv1.Workflow, want map[string]Want, mem *Memory, r Rules, now time.Time) Verdict {
	v := Verdict{Batch: map[string]wfv1.NodeResult{}}
	for id, w := range want {
		if _, listed := ts.Spec.Tasks[id]; !listed {
			v.Drop = append(v.Drop, id)
			delete(mem.Vanished, id)
			continue
		}
		if n, ok := wf.Status.Nodes[id]; ok && n.Fulfilled() {
			continue
		}
		entry, has := ts.Status.Nodes[id]
		switch {
		case has && entry.Phase.Completed():
			mem.Terminal[id] = true
			v.Drop = append(v.Drop, id)
			continue
		case has:
			delete(mem.Vanished, id)
		case mem.Terminal[id]:
			since, ok := mem.Vanished[id]
			if !ok {
				mem.Vanished[id] = now
				continue
			}
			if now.Sub(since) < r.Hold {
				continue
			}
		}
		applied, shown := Applied(wf, id)
		cur, known := entry, has
		if !has {
			cur, known = applied, shown
		}
		withdraw := has && shown && Same(entry, applied)
		res := w.Result
		switch {
		case res.Phase == "":
		case known && Same(cur, res):
		case known && messageOnly(cur, res) && sameState(cur.Message, res.Message) && res.Phase == wfv1.NodeRunning &&
			r.ProgressInterval > 0 && now.Sub(w.Written) < r.ProgressInterval:
		case interim(res) && !recordsNewDriver(cur, known, res) && now.Sub(w.Since) < r.InterimHold:
		default:
			v.Batch[id] = res
			continue
		}
		if withdraw {
			v.Withdraw = append(v.Withdraw, id)
		}
	}
	return v
}

// Applied is the result the Workflow wf shows its node id in, as Argo's
// controller copied it from an entry: the node's phase, message and
// outputs, while it is Pending or Running with a message or outputs
// (shown). A node Argo has only created (Pending, nothing else) shows
// none, nor does a finished one: its final entry stays until Argo itself
// removes it.
func Applied(wf *wfv1.Workflow, id string) (wfv1.NodeResult, bool) {
	if wf == nil {
		return wfv1.NodeResult{}, false
	}
	n, ok := wf.Status.Nodes[id]
	if !ok || (n.Phase != wfv1.NodePending && n.Phase != wfv1.NodeRunning) || (n.Message == "" && n.Outputs == nil) {
		return wfv1.NodeResult{}, false
	}
	return wfv1.NodeResult{Phase: n.Phase, Message: n.Message, Outputs: n.Outputs}, true
}

// Current is what a node's result is now: its entry in ts, or, where
// there is none (withdrawn once applied), what the Workflow shows of it
// (Applied); has: either says anything. The driver a node records
// (output driver-uid) is read from it.
func Current(ts *wfv1.WorkflowTaskSet, wf *wfv1.Workflow, id string) (res wfv1.NodeResult, has bool) {
	if ts != nil {
		if e, ok := ts.Status.Nodes[id]; ok {
			return e, true
		}
	}
	return Applied(wf, id)
}

// interim: res is a state that every run passes through on its way
// (Rules.InterimHold): a Pending node's driver not started yet
// (SUBMITTED) or Kueue not admitted yet (QUEUED), or a Running node whose
// driver ended (COMPLETED, FAILED) while its log is stored before the
// final result.
func interim(res wfv1.NodeResult) bool {
	s := spark.State(stateWord(res.Message))
	switch res.Phase {
	case wfv1.NodePending:
		return s == spark.StateSubmitted || s == spark.StateQueued
	case wfv1.NodeRunning:
		return s == spark.StateCompleted || s == spark.StateFailed
	}
	return false
}

// recordsNewDriver: res records a driver's uid (output driver-uid) that
// the node's current entry cur (has: there is one) does not, the first
// result of a launched attempt's driver. It is never held
// (Rules.InterimHold), however interim its state: that record is the
// node's defence against a pod put in place of its driver under the
// driver's name, which counts as the node's run only while nothing records
// the uid (execute/trust.go, R4a). Holding it would widen that window
// ("The window between a create and its record", docs/node-identity.md)
// from about a write gap to the hold; who may create pods in a job
// namespace must never decide a node.
func recordsNewDriver(cur wfv1.NodeResult, has bool, res wfv1.NodeResult) bool {
	uid := Param(&res, spark.OutputDriverUID)
	return uid != "" && (!has || Param(&cur, spark.OutputDriverUID) != uid)
}

// Param is the value of output parameter name of a node's result res
// ("": none, or no result): what an entry records (the driver's uid, its
// pod, its attempt).
func Param(res *wfv1.NodeResult, name string) string {
	if res == nil || res.Outputs == nil {
		return ""
	}
	for _, p := range res.Outputs.Parameters {
		if p.Name == name && p.Value != nil {
			return p.Value.String()
		}
	}
	return ""
}

// inSameState: a and b are in the same state: the same phase, and messages
// that open with the same state (sameState). Since (Want) moves only
// when it changes.
func inSameState(a, b wfv1.NodeResult) bool {
	return a.Phase == b.Phase && sameState(a.Message, b.Message)
}

// sameState: two messages open with the same state (RUNNING,
// PENDING_RERUN, QUEUED, ...): what changed is progress (the executors,
// the elapsed time), not what the node is doing. A new state, in the same
// phase (a Running node whose attempt Kueue preempted is PENDING_RERUN), is
// written at once.
func sameState(a, b string) bool {
	return stateWord(a) == stateWord(b)
}

// stateWord is the state a message opens with: its leading capitals and
// underscores.
func stateWord(msg string) string {
	i := strings.IndexFunc(msg, func(r rune) bool { return (r < 'A' || r > 'Z') && r != '_' })
	if i < 0 {
		return msg
	}
	return msg[:i]
}

// messageOnly: b differs from a in its message alone.
func messageOnly(a, b wfv1.NodeResult) bool {
	a.Message = b.Message
	return Same(a, b)
}

// Same reports whether two results show the same thing.
func Same(a, b wfv1.NodeResult) bool {
	if a.Phase != b.Phase || a.Message != b.Message {
		return false
	}
	ja, _ := json.Marshal(a.Outputs)
	jb, _ := json.Marshal(b.Outputs)
	return string(ja) == string(jb)
}

// Patch is the merge patch of a batch on the TaskSet's status: guarded
// by the resourceVersion of the view the batch was picked from, so it
// applies only if nothing changed since (a compare-and-swap), with every
// field written, null when empty, so no field of an earlier entry stays,
// and each entry of withdraw removed (null).
func Patch(resourceVersion string, batch map[string]wfv1.NodeResult, withdraw ...string) ([]byte, error) {
	nodes := map[string]any{}
	for _, id := range withdraw {
		nodes[id] = nil
	}
	for id, res := range batch {
		e := map[string]any{"phase": res.Phase, "message": nil, "outputs": nil, "progress": nil}
		if res.Message != "" {
			e["message"] = res.Message
		}
		if res.Outputs != nil {
			e["outputs"] = res.Outputs
		}
		nodes[id] = e
	}
	return json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": resourceVersion},
		"status":   map[string]any{"nodes": nodes},
	})
}
