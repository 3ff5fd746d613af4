package identity

import (
	"reflect"
	"sort"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
)

// Task is a WorkflowTaskSet entry whose template has the request's key.
type Task struct {
	NodeID string
	// Recorded is the result the agent already patched into status.nodes
	// for this node, if any.
	Recorded *wfv1.NodeResult
	// Unlisted: Argo no longer lists this node, whose final result it
	// recorded moments ago. An agent whose view of the TaskSet lags may
	// still ask about it, and Argo would write the answer over that
	// result; so, like a recorded node still listed, it makes a request
	// ambiguous. It is never launched for nor answered.
	Unlisted bool
}

// Open reports whether the node still waits for a final result.
func (t Task) Open() bool {
	return t.Recorded == nil || !t.Recorded.Phase.Completed()
}

// Mode says to whom a final result was handed out.
type Mode string

const (
	// ModeNone: never handed out.
	ModeNone Mode = ""
	// ModeOwn: handed out while its own node was the only open node with
	// this template, so it certainly reached that node.
	ModeOwn Mode = "own"
	// ModeShared: handed out while several identical nodes were open, so it
	// reached one of them, not necessarily its own.
	ModeShared Mode = "shared"
)

// Run is what sparkplug launched for one node, read back from the cluster.
type Run struct {
	// NodeID is the node the run was launched for.
	NodeID string
	// Final: no further attempt will start, the run's result is known.
	Final bool
	// Reported is how and when the final result was handed out.
	Reported   Mode
	ReportedAt time.Time
	// AdoptedBy is the node that took this run over after its own node
	// received another identical run's result.
	AdoptedBy string
	// Landed: Argo shows this run's result on a completed node, so a
	// hand-out of it certainly arrived and it must never be handed out
	// again, whatever the grace period says.
	Landed bool
}

// Decision is what the caller must do for one request.
type Decision struct {
	// Launch lists the open nodes that have no run yet.
	Launch []string
	// Adopt maps a run (by the node it was launched for) to the open node
	// that takes it over; record it on the run before answering.
	Adopt map[string]string
	// Answer names the run (by the node it was launched for) whose state
	// answers this request. Empty when no run answers yet.
	Answer string
	// Record is how to record the hand-out when the answering run is final;
	// ModeNone when nothing must be recorded.
	Record Mode
	// Repeat, when set, is a final result already recorded in the TaskSet
	// for a node with this template: the agent is asking again (after its
	// own restart) and gets the same answer.
	Repeat *wfv1.NodeResult
	// Unlisted: no node with this template is listed in the TaskSet. The
	// caller's view may lag; it should read the TaskSet afresh once.
	Unlisted bool
	// Ambiguous: the asking node cannot be told apart from an identical
	// node whose final result is already recorded (a restarted agent asks
	// again about every listed node, and Argo applies whatever it is
	// told, even to a node it completed), and the answers for them would
	// differ. The caller must answer nothing (a reply whose node has no
	// phase, which the agent does not record) and let the agent ask
	// again: once Argo has removed the recorded nodes, the request is
	// plain. Launch and Adopt still hold.
	Ambiguous bool
	// Closed: no node with this template is open in the caller's view, so
	// the decision (Repeat, an Answer repeating a hand-out, or Unlisted)
	// rests on nodes that are already done. A view that lags behind a node
	// the controller just added would hand that new node an old result:
	// the caller must confirm with a fresh TaskSet before acting on it.
	Closed bool
}

// Resolve decides which run answers a request, given the TaskSet entries
// with the request's template key and the runs with that key.
//
// Rules:
//   - Every open node gets exactly one run; a node never gets a second run
//     while it has one (own or adopted) that has not been handed to someone
//     else.
//   - With one open node, its run answers, and a final result is recorded
//     as handed out "own". Repeating it is harmless: it reached that node.
//   - With several open identical nodes, any final run among theirs answers
//     and is recorded "shared". The node whose run was given away adopts
//     the run of the node that received it once that node's result is
//     recorded (the receiver's own run is then an orphan: launched for a
//     node that is no longer open, and never handed out). An adopted run
//     whose adopter was answered by yet another run is an orphan again.
//   - A shared hand-out that no node shows after the grace period was lost
//     (the agent restarted before patching it): the run may be handed out
//     again, by the node that held it or, once that node is closed with
//     another run's result, as an orphan.
//   - A request is ambiguous while an identical node whose final result is
//     recorded is still listed (or was unlisted moments ago: Task.Unlisted)
//     next to another with a different answer:
//     it may be the recorded node asking again, and any final or running
//     answer would overwrite its result. Nothing is answered then.
//   - With no open node, a result recorded in the TaskSet is repeated when
//     every listed node recorded the same; with no node listed at all, the
//     one run handed out is repeated, or the caller is told the template
//     is unlisted.
func Resolve(tasks []Task, runs []Run, now time.Time, grace time.Duration) Decision {
	var d Decision
	open := map[string]bool{}
	var openIDs []string
	recordedListed := false
	var listed []Task
	for _, t := range tasks {
		if t.Unlisted {
			recordedListed = true
			continue
		}
		listed = append(listed, t)
		if t.Open() {
			open[t.NodeID] = true
			openIDs = append(openIDs, t.NodeID)
		} else {
			recordedListed = true
		}
	}
	sort.Strings(openIDs)
	byNode := map[string]Run{}
	for _, r := range runs {
		byNode[r.NodeID] = r
	}

	if len(openIDs) == 0 {
		d := resolveClosed(listed, runs)
		d.Closed = true
		return d
	}

	// Orphans: runs whose holder (the node that adopted them, else their
	// own node) is no longer open, and that no node has: never handed out,
	// or handed out shared and lost (no node shows it after the grace
	// period), like the run of a node that took another's result.
	var orphans []string
	for _, r := range runs {
		holder := r.NodeID
		if r.AdoptedBy != "" {
			holder = r.AdoptedBy
		}
		if !open[holder] && (r.Reported == ModeNone || lostShared(r, now, grace)) {
			orphans = append(orphans, r.NodeID)
		}
	}
	sort.Strings(orphans)

	effective := map[string]string{}
	for _, n := range openIDs {
		mine := held(n, runs)
		if len(mine) == 0 {
			d.Launch = append(d.Launch, n)
			continue
		}
		if r, ok := firstUsable(mine); ok {
			effective[n] = r.NodeID
			continue
		}
		// Every run this node held was handed to an identical node.
		if len(orphans) > 0 {
			if d.Adopt == nil {
				d.Adopt = map[string]string{}
			}
			d.Adopt[orphans[0]] = n
			effective[n] = orphans[0]
			orphans = orphans[1:]
			continue
		}
		// A held run whose shared hand-out was lost may be handed out
		// again: any of them, not only the newest (a node can hold an
		// adopted lost run and a newer one that landed elsewhere).
		if lost, ok := lostOne(mine, now, grace); ok {
			effective[n] = lost.NodeID
		}
		// Otherwise wait: the receiver's result is not recorded yet.
	}

	if recordedListed {
		// An open node and a recorded one are listed side by side: the
		// request may be the recorded node's.
		d.Ambiguous = true
		return d
	}
	if len(openIDs) == 1 {
		e, ok := effective[openIDs[0]]
		if !ok {
			return d
		}
		d.Answer = e
		if byNode[e].Final {
			d.Record = ModeOwn
		}
		return d
	}
	var candidates []string
	for _, n := range openIDs {
		if e, ok := effective[n]; ok {
			candidates = append(candidates, e)
		}
	}
	// A run already handed to its own node is spoken for: it must not also
	// reach an identical node.
	for _, e := range candidates {
		if r := byNode[e]; r.Final && r.Reported != ModeOwn && !r.Landed {
			d.Answer, d.Record = e, ModeShared
			return d
		}
	}
	for _, e := range candidates {
		if !byNode[e].Final {
			d.Answer = e // not final: its state is the Running answer
			return d
		}
	}
	return d
}

// resolveClosed decides a request when no listed node is open: the agent
// asks again about a node whose result it recorded (after its own
// restart), or about one Argo has removed already.
func resolveClosed(tasks []Task, runs []Run) Decision {
	var recorded *wfv1.NodeResult
	for _, t := range tasks {
		if t.Recorded == nil {
			continue
		}
		if recorded != nil && !reflect.DeepEqual(recorded, t.Recorded) {
			return Decision{Ambiguous: true}
		}
		recorded = t.Recorded
	}
	if recorded != nil {
		return Decision{Repeat: recorded}
	}
	var reported []string
	for _, r := range runs {
		if r.Reported != ModeNone {
			reported = append(reported, r.NodeID)
		}
	}
	switch len(reported) {
	case 0:
		return Decision{Unlisted: true}
	case 1:
		return Decision{Answer: reported[0]}
	}
	// Several identical runs were handed out, and the asking node is gone
	// from the TaskSet: repeating any of them might give it another's.
	return Decision{Ambiguous: true}
}

// held returns the runs node n holds: its own run and those it adopted.
func held(n string, runs []Run) []Run {
	var mine []Run
	for _, r := range runs {
		if (r.NodeID == n && r.AdoptedBy == "") || r.AdoptedBy == n {
			mine = append(mine, r)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].NodeID < mine[j].NodeID })
	return mine
}

// firstUsable returns a held run that was not handed to another node: never
// handed out, or handed out to this very node.
func firstUsable(mine []Run) (Run, bool) {
	for _, r := range mine {
		if r.Reported != ModeShared {
			return r, true
		}
	}
	return Run{}, false
}

// lostShared: r was handed out to one of several identical nodes, and
// after the grace period none shows it.
func lostShared(r Run, now time.Time, grace time.Duration) bool {
	return r.Reported == ModeShared && !r.Landed && now.Sub(r.ReportedAt) > grace
}

// lostOne returns the newest held run whose shared hand-out was lost.
func lostOne(mine []Run, now time.Time, grace time.Duration) (Run, bool) {
	var last Run
	found := false
	for _, r := range mine {
		if lostShared(r, now, grace) && (!found || r.ReportedAt.After(last.ReportedAt)) {
			last, found = r, true
		}
	}
	return last, found
}
