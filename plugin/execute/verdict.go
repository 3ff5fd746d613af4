package execute

import (
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// verdict assesses a run's newest attempt, applies the time limits and the
// restart policy, and says which limit, if any, ended the attempt.
func (r *request) verdict(run *run) (Verdict, limit) {
	head := run.head()
	if run.tomb != nil {
		return r.tombVerdict(run)
	}
	a := state.Assess(state.Observed{
		Driver:        run.observedHead(),
		Executors:     r.executors(head),
		Expected:      expectedExecutors(r.body),
		Dynamic:       r.body.DynamicAllocation != nil && r.body.DynamicAllocation.Enabled,
		SubmittedAt:   submittedAt(run),
		Now:           r.now,
		NotFoundGrace: r.core.opts.NotFoundGrace,
	})
	pending := r.body.PendingTimeout()
	a, l := limits(a, run.observedHead(), runStart(run), r.now, r.timeout, pending)
	ended := endedAt(head, r.now)
	switch {
	case l == limitTimeout:
		return Verdict{Final: true, Phase: a.Phase(), Message: a.Message() + attemptSuffix(run.attempt(), r.body.RestartPolicy), ended: a}, l
	case l == limitPending:
		ended = head.CreationTimestamp.Add(pending)
	case l == limitCannotStart:
		ended = head.CreationTimestamp.Time
	case run.ghost:
		ended = run.missingSince.Add(r.core.opts.NotFoundGrace)
	}
	return judge(a, run.attempt(), r.body.RestartPolicy, ended, r.now), l
}

// tombVerdict is the verdict of a run whose newest driver sparkplug
// stopped: what the tombstone recorded, with the restart policy applied
// again (a stopped attempt may still be followed by another).
func (r *request) tombVerdict(run *run) (Verdict, limit) {
	ann := run.tomb.Annotations
	l := limit(ann[spark.AnnotationStopped])
	a := state.Assessment{State: spark.StateFailing, Done: true, Reason: ann[spark.AnnotationStoppedReason], Detail: ann[spark.AnnotationStoppedDetail]}
	if l == limitTimeout {
		return Verdict{Final: true, Phase: a.Phase(), Message: a.Message() + attemptSuffix(run.attempt(), r.body.RestartPolicy)}, limitNone
	}
	stoppedAt, err := time.Parse(time.RFC3339, ann[spark.AnnotationStoppedAt])
	if err != nil {
		stoppedAt = run.tomb.CreationTimestamp.Time
	}
	return judge(a, run.attempt(), r.body.RestartPolicy, stoppedAt, r.now), limitNone
}

// runStart is when the run's first driver that still exists was created.
func runStart(rn *run) time.Time {
	if rn.ghost && len(rn.attempts) == 1 {
		return rn.missingSince
	}
	return rn.attempts[0].CreationTimestamp.Time
}
