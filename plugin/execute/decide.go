package execute

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// Deciding is pure: decide, decideReport and afterRefusal read a snapshot
// and a policy and return what to do, and act does it. judge.go (the
// restart policy) and limits.go (the time limits) are parts of it.

// policy is what a decision applies besides the snapshot: the step's body
// and timeout, and the plugin's grace periods.
type policy struct {
	body *spec.SparkApplicationSpec
	// timeout is the template's timeout over the whole run; 0 is none.
	timeout time.Duration
	// notFoundGrace and handoutGrace are Options.NotFoundGrace and
	// Options.HandoutGrace.
	notFoundGrace, handoutGrace time.Duration
	// progressInterval is Options.ProgressInterval.
	progressInterval time.Duration
}

// plan is what one request must do: launch, adopt, make sure of the live
// runs' companions, and which run answers.
type plan struct {
	// closed: no open node backs the decision; confirm it with a fresh
	// TaskSet before acting on it (identity.Decision.Closed).
	closed bool
	// unlisted, when set, is the whole answer: no node with the template
	// is listed yet, and nothing is written.
	unlisted *state.Outcome
	// repeat, when set, is a result already recorded for a node with this
	// template, answered again as it is.
	repeat *wfv1.NodeResult
	// unanswered: the asking node cannot be told from an identical node
	// whose result is recorded (identity.Decision.Ambiguous): launch,
	// adopt and ensure as planned, but answer nothing the agent would
	// record, and let it ask again.
	unanswered bool
	// launch are the first attempts to launch, in order.
	launch []launchOrder
	// adopt maps a run (by the node it was launched for) to the open node
	// that takes it over; recorded on the run before answering.
	adopt map[string]string
	// ensure are the runs (by node) whose driver still runs: their
	// ConfigMap and Services must exist.
	ensure []string
	// answer is the run (by node) whose state answers; empty: none yet,
	// an identical step's driver must finish first.
	answer string
	// record is how to record a final answer's hand-out.
	record identity.Mode
}

// launchOrder is one attempt of a node to launch; blocked, when set, is
// the answer instead while earlier refused submissions of that attempt
// wait out their backoff.
type launchOrder struct {
	node    string
	attempt int
	blocked *state.Outcome
}

// decide resolves which node asks (package identity) and plans the
// request.
func decide(s *snapshot, p policy) plan {
	d := identity.Resolve(append(slices.Clip(s.tasks), recentlyUnlisted(s)...), views(s, p), s.now, p.handoutGrace)
	pl := plan{closed: d.Closed, adopt: d.Adopt, answer: d.Answer, record: d.Record, unanswered: d.Ambiguous}
	switch {
	case d.Unlisted:
		o := unlisted()
		pl.unlisted = &o
		return pl
	case d.Repeat != nil:
		pl.repeat = d.Repeat
		return pl
	}
	for _, n := range d.Launch {
		pl.launch = append(pl.launch, launchOrder{node: n, attempt: 1, blocked: backoff(s, p, n, 1)})
		if pl.answer == "" && !pl.unanswered {
			pl.answer = n
		}
	}
	// Every live driver of this template gets its ConfigMap and Services
	// back if a restart cut its launch short, not only the one answering
	// (identical nodes answer through one run at a time).
	for n, rn := range s.runs {
		if rn.live() {
			pl.ensure = append(pl.ensure, n)
		}
	}
	sort.Strings(pl.ensure)
	return pl
}

// report is what answering from one run takes: stop its driver (a limit
// ended the attempt), launch the next attempt, record the hand-out.
type report struct {
	verdict Verdict
	// stop is the limit whose driver must be stopped first; limitNone: none.
	stop limit
	// relaunch: launch attempt+1 now; blocked, when set, answers instead
	// while the refused submissions of that attempt wait out their backoff.
	relaunch bool
	blocked  *state.Outcome
	// record is how to record the final result's hand-out on the run;
	// ModeNone: nothing to record.
	record identity.Mode
	// json: the result is a JSON string (the node is a loop's child).
	json bool
}

// decideReport decides how run rn answers, its hand-out recorded as record
// when final.
func decideReport(s *snapshot, p policy, rn *run, record identity.Mode) report {
	v, l := verdict(s, p, rn)
	rep := report{verdict: v, json: jsonResult(s, rn)}
	if l != limitNone && (v.Relaunch || v.Final) {
		rep.stop = l
	}
	if v.Relaunch {
		rep.relaunch = true
		rep.blocked = backoff(s, p, rn.nodeID, rn.attempt()+1)
	}
	reported := identity.Mode(rn.head().Annotations[spark.AnnotationReportedMode])
	if v.Final && record != identity.ModeNone && (reported != record || record == identity.ModeShared) {
		rep.record = record
	}
	return rep
}

// verdict assesses a run's newest attempt, applies the time limits and the
// restart policy, and says which limit, if any, ended the attempt.
func verdict(s *snapshot, p policy, rn *run) (Verdict, limit) {
	head := rn.head()
	if rn.tomb != nil {
		return tombVerdict(s, p, rn), limitNone
	}
	a := state.Assess(state.Observed{
		Driver:        rn.observedHead(),
		Executors:     rn.executors,
		Expected:      expectedExecutors(p.body),
		Dynamic:       p.body.DynamicAllocation != nil && p.body.DynamicAllocation.Enabled,
		SubmittedAt:   submittedAt(rn),
		Now:           s.now,
		NotFoundGrace: p.notFoundGrace,
		// Identity reads only the verdict's Final, never the message, so
		// a message that moves with the clock changes no decision.
		ProgressInterval: p.progressInterval,
	})
	pending := p.body.PendingTimeout()
	a, l := limits(a, rn.observedHead(), runStart(rn), s.now, p.timeout, pending)
	ended := driverpod.EndedAt(head, s.now)
	switch {
	case l == limitTimeout:
		return Verdict{Final: true, Outcome: a.Outcome().WithNote(attemptSuffix(rn.attempt(), p.body.RestartPolicy)), ended: a}, l
	case l == limitPending:
		ended = head.CreationTimestamp.Add(pending)
	case l == limitCannotStart:
		ended = head.CreationTimestamp.Time
	case rn.ghost:
		ended = rn.missingSince.Add(p.notFoundGrace)
	}
	return judge(a, rn.attempt(), p.body.RestartPolicy, ended, s.now), l
}

// tombVerdict is the verdict of a run whose newest driver sparkplug
// stopped: what the tombstone recorded, with the restart policy applied
// again (a stopped attempt may still be followed by another).
func tombVerdict(s *snapshot, p policy, rn *run) Verdict {
	ann := rn.tomb.Annotations
	a := state.Assessment{State: spark.StateFailing, Done: true, Reason: ann[spark.AnnotationStoppedReason], Detail: ann[spark.AnnotationStoppedDetail]}
	if limit(ann[spark.AnnotationStopped]) == limitTimeout {
		return Verdict{Final: true, Outcome: a.Outcome().WithNote(attemptSuffix(rn.attempt(), p.body.RestartPolicy))}
	}
	stoppedAt, err := time.Parse(time.RFC3339, ann[spark.AnnotationStoppedAt])
	if err != nil {
		stoppedAt = rn.tomb.CreationTimestamp.Time
	}
	return judge(a, rn.attempt(), p.body.RestartPolicy, stoppedAt, s.now)
}

// views are the runs as package identity sees them.
func views(s *snapshot, p policy) []identity.Run {
	landed := landedDrivers(s.nodes)
	out := make([]identity.Run, 0, len(s.runs))
	for _, rn := range s.runs {
		h := rn.head()
		v, _ := verdict(s, p, rn)
		ir := identity.Run{
			NodeID:    rn.nodeID,
			Final:     v.Final,
			Reported:  identity.Mode(h.Annotations[spark.AnnotationReportedMode]),
			AdoptedBy: h.Annotations[spark.AnnotationAdoptedBy],
			Landed:    landed[h.Name],
		}
		if at, err := time.Parse(time.RFC3339, h.Annotations[spark.AnnotationReported]); err == nil {
			ir.ReportedAt = at
		}
		out = append(out, ir)
	}
	return out
}

// landedDrivers are the drivers whose result Argo shows on a completed
// node (its driver-pod output): hand-outs that certainly arrived. Argo
// drops a node's TaskSet status before its task, so the TaskSet alone can
// make a fulfilled node look open again.
func landedDrivers(nodes wfv1.Nodes) map[string]bool {
	out := map[string]bool{}
	for _, n := range nodes {
		if !n.Phase.Completed() || n.Outputs == nil {
			continue
		}
		res := wfv1.NodeResult{Outputs: n.Outputs}
		if d := recordedParam(&res, OutputDriverPod); d != "" {
			out[d] = true
		}
	}
	return out
}

// jsonResult says whether the result must be a JSON string: a loop's child,
// whose outputs.result Argo decodes as JSON, may receive it. Identical
// nodes share runs and which of them a reply reaches is unknown (a done
// one too, when the agent asks again): one loop child among the listed
// nodes makes it JSON, since a plain one would fail the loop; with none
// listed, the run's own node or its adopter says.
func jsonResult(s *snapshot, rn *run) bool {
	for _, t := range s.tasks {
		if loop, _ := identity.InLoop(s.nodes, t.NodeID); loop {
			return true
		}
	}
	if s.nodes == nil || rn == nil {
		return false
	}
	for _, id := range []string{rn.nodeID, rn.head().Annotations[spark.AnnotationAdoptedBy]} {
		if loop, _ := identity.InLoop(s.nodes, id); loop {
			return true
		}
	}
	return false
}

// backoff is the answer while a node's attempt must still wait after
// refused submissions (linear, onSubmissionFailureRetryInterval per
// failure), else nil.
func backoff(s *snapshot, p policy, node string, attempt int) *state.Outcome {
	f := s.failures[failKey(node, attempt)]
	if f.count == 0 {
		return nil
	}
	rp := p.body.RestartPolicy
	interval := time.Duration(deref64(rp.OnSubmissionFailureRetryInterval, 5)) * time.Second
	at := f.at.Add(time.Duration(f.count) * interval)
	if !s.now.Before(at) {
		return nil
	}
	o := state.Outcome{State: spark.StateSubmissionFailed, Phase: wfv1.NodePending,
		Detail: fmt.Sprintf("retry %s in %s: %s", ofMax(f.count, deref32(rp.OnSubmissionFailureRetries, 0)), at.Sub(s.now).Round(time.Second), f.message)}
	return &o
}

// afterRefusal is the answer once a submission was refused, f counting it:
// a retry later while restartPolicy.onSubmissionFailureRetries allows one,
// else Failed.
func afterRefusal(f submissionFailure, p policy) state.Outcome {
	rp := p.body.RestartPolicy
	retries := deref32(rp.OnSubmissionFailureRetries, 0)
	if f.count <= int(retries) && rp.Type != spec.RestartNever {
		return state.Outcome{State: spark.StateSubmissionFailed, Phase: wfv1.NodePending,
			Detail: fmt.Sprintf("retry %s soon: %s", ofMax(f.count, retries), f.message)}
	}
	return state.SubmissionFailed(f.message)
}

// keepsRunning: a driver whose companion is refused after it started (a
// restarted plugin cannot make its Service again) runs on with what it
// had; one that has not started would never start, and its attempt is a
// refused submission.
func keepsRunning(driver *corev1.Pod) bool {
	return driver.Status.Phase == corev1.PodRunning
}

// failKey names one attempt of a node in the submission-failure counts of
// a workflow.
func failKey(node string, attempt int) string {
	return fmt.Sprintf("%s/%d", node, attempt)
}

func submittedAt(rn *run) time.Time {
	if rn.ghost {
		return rn.missingSince
	}
	return rn.head().CreationTimestamp.Time
}

// runStart is when the run's first driver that still exists was created.
func runStart(rn *run) time.Time {
	if rn.ghost && len(rn.attempts) == 1 {
		return rn.missingSince
	}
	return rn.attempts[0].CreationTimestamp.Time
}

func expectedExecutors(s *spec.SparkApplicationSpec) int32 {
	if s.DynamicAllocation != nil && s.DynamicAllocation.Enabled {
		return 0
	}
	if s.Executor.Instances == nil {
		return 1
	}
	return *s.Executor.Instances
}

// unlistedAskWindow is how long after Argo recorded a node's final result
// (the node's finishedAt) an agent may still ask about it once Argo no
// longer lists it: an agent's view of the TaskSet lags (more so while its
// watch is cut and it lists again), and a request it had queued goes out
// anyway. Argo writes whatever answer it
// gets over the recorded result, so until then such a node makes a request
// ambiguous (identity.Task.Unlisted); the cost is an identical open
// sibling answered up to that much later. Seen under API faults: a twin's
// request, answered for its open identical sibling a moment after the twin
// left the list, gave both twins one application.
const unlistedAskWindow = 30 * time.Second

// recentlyUnlisted are the nodes with a run of the request's key that Argo
// no longer lists and completed less than unlistedAskWindow ago.
func recentlyUnlisted(s *snapshot) []identity.Task {
	listed := map[string]bool{}
	for _, t := range s.tasks {
		listed[t.NodeID] = true
	}
	candidates := map[string]bool{}
	for id, rn := range s.runs {
		candidates[id] = true
		if by := rn.head().Annotations[spark.AnnotationAdoptedBy]; by != "" {
			candidates[by] = true
		}
	}
	var out []identity.Task
	for id := range candidates {
		n, ok := s.nodes[id]
		if listed[id] || !ok || !n.Phase.Completed() || n.FinishedAt.IsZero() || s.now.Sub(n.FinishedAt.Time) > unlistedAskWindow {
			continue
		}
		out = append(out, identity.Task{NodeID: id, Recorded: &wfv1.NodeResult{Phase: n.Phase, Message: n.Message}, Unlisted: true})
	}
	slices.SortFunc(out, func(a, b identity.Task) int { return strings.Compare(a.NodeID, b.NodeID) })
	return out
}
