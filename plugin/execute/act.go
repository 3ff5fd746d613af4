package execute

import (
	"encoding/json"
	"fmt"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// answer is one request: gather, decide, act. It re-decides at most once
// more: with a fresh TaskSet when the decision rested on closed nodes only,
// and, after launching a run's next attempt, how that attempt answers.
func (r *request) answer() (executor.ExecuteTemplateReply, error) {
	snap, err := r.gather(r.scope.TaskSet())
	if err != nil {
		return executor.ExecuteTemplateReply{}, err
	}
	pl := decide(snap, r.policy)
	if pl.closed {
		// No open node in the cache: it may lag behind a node the
		// controller just added (the agent can ask within milliseconds),
		// and an old node's result must never answer a new one. Read the
		// TaskSet afresh. Steady-state polls always see their own open
		// node and never come here.
		ts, err := r.core.clients.Workflows.ArgoprojV1alpha1().WorkflowTaskSets(r.wf.Namespace).Get(r.ctx, r.wf.Name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return executor.ExecuteTemplateReply{}, fmt.Errorf("get workflowtaskset %s/%s: %w", r.wf.Namespace, r.wf.Name, err)
		}
		if err == nil {
			if snap, err = r.gather(ts); err != nil {
				return executor.ExecuteTemplateReply{}, err
			}
			pl = decide(snap, r.policy)
		}
	}
	return r.act(snap, pl)
}

// act carries out a plan: launches, adoptions, companions, then the
// answering run's report.
func (r *request) act(snap *snapshot, pl plan) (executor.ExecuteTemplateReply, error) {
	switch {
	case pl.unlisted != nil:
		r.log.Info("template not listed in the workflow's task set")
		return r.reply(*pl.unlisted), nil
	case pl.repeat != nil:
		return executor.ExecuteTemplateReply{Node: pl.repeat}, nil
	}
	// While the asking node is unknown (pl.unanswered), what befalls
	// another node's launch is not this request's answer.
	for _, o := range pl.launch {
		if o.blocked != nil {
			if pl.unanswered {
				continue
			}
			return r.reply(*o.blocked), nil
		}
		rn, failure := r.launch(o, nil)
		if failure != nil {
			if pl.unanswered {
				continue
			}
			return r.reply(*failure), nil
		}
		snap.runs[o.node] = rn
	}
	for from, to := range pl.adopt {
		if err := r.annotate(snap.runs[from], map[string]string{spark.AnnotationAdoptedBy: to}); err != nil {
			return executor.ExecuteTemplateReply{}, err
		}
		r.log.Info("run adopted by an identical node", "run_node", from, "node", to)
	}
	for _, n := range pl.ensure {
		failure, err := r.ensureCompanions(snap.runs[n])
		if err != nil {
			return executor.ExecuteTemplateReply{}, err
		}
		if failure != nil && !pl.unanswered {
			return r.reply(*failure), nil
		}
	}
	if pl.unanswered {
		r.log.Debug("which identical node asks is unknown while one's result is recorded and listed: answering nothing")
		return unanswered(r.core.opts), nil
	}
	if pl.answer == "" {
		return r.reply(waitingForIdentical()), nil
	}
	return r.report(snap, snap.runs[pl.answer], pl.record)
}

// report answers from one run, carrying out decideReport: stop the driver
// a limit ended, launch the next attempt (and decide again how that one
// answers), record the hand-out, record an Event of the state.
func (r *request) report(snap *snapshot, rn *run, record identity.Mode) (executor.ExecuteTemplateReply, error) {
	rep := decideReport(snap, r.policy, rn, record)
	if rep.stop != limitNone {
		// The attempt was ended by a limit, not by Spark: stop its driver.
		if err := r.stop(rn, rep.stop, rep.verdict.ended); err != nil {
			return executor.ExecuteTemplateReply{}, err
		}
	}
	if rep.relaunch {
		if rep.blocked != nil {
			return r.reply(*rep.blocked), nil
		}
		next, failure := r.launch(launchOrder{node: rn.nodeID, attempt: rn.attempt() + 1}, rn.head())
		if failure != nil {
			return r.reply(*failure), nil
		}
		next.executors = r.executors(next.head())
		snap.runs[rn.nodeID] = next
		rn = next
		again := decideReport(snap, r.policy, rn, record)
		rep.verdict, rep.record = again.verdict, again.record
	}
	v := rep.verdict
	if rep.record != identity.ModeNone {
		// The log first: a final result, once handed out, is final.
		waiting, err := r.archiveLog(rn, v.Outcome)
		if err != nil {
			return executor.ExecuteTemplateReply{}, err
		}
		if waiting != nil {
			// An upload takes seconds: ask again as soon as while pending.
			out := reply(*waiting, rn.head(), rep.json, r.step.Body, r.core.opts)
			out.Requeue.Duration = r.core.opts.RequeuePending
			return out, nil
		}
	}
	head := rn.head()
	artifact, note := r.driverLog(head)
	v.Outcome = v.Outcome.WithNote(note)
	if rep.record != identity.ModeNone {
		if err := r.annotate(rn, map[string]string{
			spark.AnnotationReported:     r.now.UTC().Format(time.RFC3339),
			spark.AnnotationReportedMode: string(rep.record),
		}); err != nil {
			return executor.ExecuteTemplateReply{}, err
		}
		r.log.Info("final result handed out", "node", rn.nodeID, "driver", head.Name, "mode", rep.record, "phase", v.Outcome.Phase, "message", v.Outcome.Message())
	}
	r.core.stateEvent(r.wf, rn.nodeID, head.Name, v.Outcome)
	v.Outcome = r.core.withSparkProgress(v.Outcome, r.step.Body, head)
	out := reply(v.Outcome, head, rep.json, r.step.Body, r.core.opts)
	if artifact != nil && out.Node.Outputs != nil {
		out.Node.Outputs.Artifacts = append(out.Node.Outputs.Artifacts, *artifact)
	}
	return out, nil
}

// reply answers an outcome without a driver.
func (r *request) reply(o state.Outcome) executor.ExecuteTemplateReply {
	return reply(o, nil, false, r.step.Body, r.core.opts)
}

// stop ends a run's newest driver that a limit ended. It first turns the
// driver's ConfigMap into a tombstone (owned by the Workflow instead of the
// driver, annotated with what happened and with the run's bookkeeping), so
// the run is remembered once the pod is gone; then it deletes the pod, and
// with it, through ownership, the Service and the executors.
func (r *request) stop(rn *run, l limit, a state.Assessment) error {
	head := rn.head()
	if rn.ghost || rn.tomb != nil {
		return nil
	}
	ann := map[string]any{
		spark.AnnotationStopped:       string(l),
		spark.AnnotationStoppedAt:     r.now.UTC().Format(time.RFC3339),
		spark.AnnotationStoppedReason: a.Reason,
		spark.AnnotationStoppedDetail: a.Detail,
		spark.AnnotationDriver:        head.Name,
	}
	for _, k := range []string{spark.AnnotationReported, spark.AnnotationReportedMode, spark.AnnotationAdoptedBy} {
		if v, ok := head.Annotations[k]; ok {
			ann[k] = v
		}
	}
	owner := objects.WorkflowOwner(r.wf)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations":     ann,
		"ownerReferences": []metav1.OwnerReference{owner},
	}})
	if err != nil {
		return fmt.Errorf("encode tombstone patch: %w", err)
	}
	cmName := objects.ConfigMapName(head.Name)
	cm, err := r.core.clients.Kube.CoreV1().ConfigMaps(head.Namespace).Patch(r.ctx, cmName, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("write tombstone on configmap %s: %w", cmName, err)
	}
	r.scope.Wrote(cm)
	if head.DeletionTimestamp == nil {
		if err := r.core.deleteDriver(r.ctx, head); err != nil {
			return fmt.Errorf("stop driver pod %s: %w", head.Name, err)
		}
	}
	r.log.Info("driver stopped", "node", rn.nodeID, "driver", head.Name, "limit", string(l), "detail", a.Detail)
	r.core.metrics.Driver("deleted", string(l))
	stand := head.DeepCopy()
	for k, v := range ann {
		stand.Annotations[k] = v.(string)
	}
	rn.attempts[len(rn.attempts)-1] = stand
	rn.tomb = cm
	return nil
}

// annotate merges annotations into a run's newest driver pod.
func (r *request) annotate(rn *run, ann map[string]string) error {
	if rn.ghost {
		return nil // nothing left to write on; the recorded result stands for it
	}
	head := rn.head()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	if err != nil {
		return fmt.Errorf("encode annotation patch: %w", err)
	}
	if rn.tomb != nil {
		cm, err := r.core.clients.Kube.CoreV1().ConfigMaps(rn.tomb.Namespace).Patch(r.ctx, rn.tomb.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
			return fmt.Errorf("annotate tombstone %s: %w", rn.tomb.Name, err)
		}
		r.scope.Wrote(cm)
		rn.tomb = cm
		stand := head.DeepCopy()
		for k, v := range ann {
			stand.Annotations[k] = v
		}
		rn.attempts[len(rn.attempts)-1] = stand
		return nil
	}
	updated, err := r.core.clients.Kube.CoreV1().Pods(head.Namespace).Patch(r.ctx, head.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("annotate driver pod %s: %w", head.Name, err)
	}
	r.scope.Wrote(updated)
	rn.attempts[len(rn.attempts)-1] = updated
	return nil
}

// discard deletes a driver whose launch was refused after it was created;
// what it owns goes with it.
func (r *request) discard(driver *corev1.Pod) {
	if err := r.core.deleteDriver(r.ctx, driver); err != nil {
		r.log.Error("cannot delete the driver of a refused launch; it goes with the workflow", "driver", driver.Name, "error", err.Error())
		return
	}
	r.core.discarded.add(driver.UID)
	r.core.metrics.Driver("deleted", "refused")
}

// transient logs an API error that asking again may cure and answers it.
func (r *request) transient(format string, args ...any) *state.Outcome {
	msg := fmt.Sprintf(format, args...)
	r.log.Info("transient error; the agent will ask again", "error", msg)
	o := transient(msg)
	return &o
}

// rejected counts a refused submission of a node's attempt and answers
// as afterRefusal decides.
func (r *request) rejected(o launchOrder, message string) *state.Outcome {
	key := r.wf.UID + "/" + failKey(o.node, o.attempt)
	r.core.failures.record(key, message, r.now)
	f := r.core.failures.get(key)
	out := afterRefusal(f, r.policy)
	if out.Phase == wfv1.NodeFailed {
		r.log.Info("driver submission failed", "node", o.node, "error", f.message)
	}
	// One Event per refused submission: nothing else in the cluster says
	// a submission failed (no driver was made), and sparkplug monitor
	// counts spark_application_failed_submission_count from them.
	r.core.event(r.wf, corev1.EventTypeWarning, ReasonSubmissionFailed,
		fmt.Sprintf("node %s, attempt %d: %s", o.node, o.attempt, spec.Truncate(message, spec.MaxMessageBytes)))
	return &out
}
