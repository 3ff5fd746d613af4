package execute

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// act carries out a plan: discard a driver and count its refusal,
// abandon, stop, make sure of companions (or waive one), launch, start a
// log upload, and offer the outcome to the writer. It decides nothing:
// what befalls an action (a refused or failed launch, a companion
// refused, a name held, a spark-submit that runs on) ends the pass and
// is returned, recorded, for the next pass to decide on. An error is a
// transient failure: the node is reconciled again.
func (r *pass) act(snap *decide.Snapshot, pl decide.Plan) (*decide.Befell, error) {
	rn := snap.Run
	if pl.Discard != nil {
		r.discard(pl.Discard)
	}
	if pl.Refuse > 0 {
		return r.rejected(pl.Refuse, pl.Refusal), nil
	}
	if pl.Abandon {
		if err := r.abandon(rn); err != nil {
			return nil, err
		}
		return nil, r.kueueDequeue(pl.KueueDequeue)
	}
	if pl.Stop != decide.LimitNone {
		// The attempt was ended by a limit, not by Spark: stop its driver.
		if err := r.stop(rn, pl.Stop, pl.Ended); err != nil {
			return nil, err
		}
		if pl.Stop == decide.LimitPreempted || pl.Stop == decide.LimitEvicted {
			r.core.event(r.wf, corev1.EventTypeWarning, spark.ReasonEvicted,
				fmt.Sprintf("stopped driver %s of node %s: %s", rn.Head().Name, r.node, pl.Ended.Detail))
		}
	}
	// After the stop: an evicted attempt's quota goes back once its
	// driver is on its way out.
	if err := r.kueueDequeue(pl.KueueDequeue); err != nil {
		return nil, err
	}
	if pl.Ensure && pl.Stop == decide.LimitNone {
		befell, err := r.ensureCompanions(rn, snap)
		if err != nil || befell != nil {
			return befell, err
		}
	}
	if pl.Waive != "" {
		head := rn.Head()
		r.core.event(r.wf, corev1.EventTypeWarning, spark.ReasonObjectRefused,
			fmt.Sprintf("%s of running driver %s not made again", pl.Waive, head.Name))
		r.core.companions.add(head.UID)
	}
	if pl.KueueEnqueue > 0 {
		if befell := r.kueueEnqueue(pl.KueueEnqueue); befell != nil {
			return befell, nil
		}
		// The Workload is in the cache (Wrote): the next pass reports it.
		r.core.work.Add(flowKey(r.wf.UID, r.node))
	}
	if pl.Launch > 0 {
		body, befell := r.bodyOf(snap, pl.Launch)
		if befell == nil {
			_, befell = r.launch(pl.Launch, body, pl.DrawNames)
		}
		if befell != nil {
			return befell, nil
		}
		// The new driver is in the cache (Wrote): the next pass reports it.
		r.core.work.Add(flowKey(r.wf.UID, r.node))
	}
	if pl.PodsReady != nil {
		if err := r.kueueMarkPodsReady(pl.PodsReady); err != nil {
			// Asked again on the next pass; the run goes on meanwhile.
			r.log.Info("Kueue workload not marked PodsReady; trying again", "workload", pl.PodsReady.Name, "error", err.Error())
		}
	}
	if pl.Archive {
		r.archiveLog(rn)
	}
	if pl.Report {
		r.report(pl.Outcome, pl.Driver, pl.JSON)
	}
	return nil, nil
}

// report offers an outcome, with the driver its outputs name, to the
// workflow's writer, as decide gave it, and records an Event when the
// driver's state changed.
func (r *pass) report(o state.Outcome, driver *corev1.Pod, asJSON bool) {
	var artifact *wfv1.Artifact
	if driver != nil {
		artifact = driverLogOf(r.scope.WorkflowObject(), driver)
		r.core.stateEvent(r.wf, r.node, driver.Name, o)
		r.core.forgetProgress(o, driver)
	}
	r.flow.writer.Set(r.node, r.incarnation, r.core.result(o, driver, asJSON, r.step.Body, artifact))
}

// abandon stops the live driver of a node someone else fulfilled: Argo
// fails a node when its workflow is stopped or its deadline passes, and
// the agent fails one it could not reach the plugin about; no one will
// read this run's result.
func (r *pass) abandon(rn *decide.Run) error {
	head := rn.Head()
	if head.DeletionTimestamp != nil {
		return nil
	}
	if err := r.core.deleteDriver(r.ctx, head); err != nil {
		return fmt.Errorf("stop driver pod %s of a node Argo fulfilled: %w", head.Name, err)
	}
	r.log.Info("driver stopped: Argo fulfilled its node", "driver", head.Name)
	r.core.metrics.Driver("deleted", "node_fulfilled")
	r.core.event(r.wf, corev1.EventTypeNormal, spark.ReasonDriverDeleted,
		fmt.Sprintf("deleted driver %s of node %s: Argo fulfilled the node without it", head.Name, r.node))
	return nil
}

// stop ends a run's newest driver that a limit ended. It first creates
// its tombstone (objects.Tombstone: owned by the Workflow, annotated with
// what happened and with the run's bookkeeping), so the run is
// remembered once the pod is gone; then it deletes the pod, and with it,
// through ownership, its ConfigMap, Services and executors. A tombstone
// that exists is taken if it is the run's (a stop repeated after the
// pod's delete failed); someone else's is left as it is and said in an
// Event, and the driver is stopped all the same: a time limit holds.
func (r *pass) stop(rn *decide.Run, l decide.Limit, a state.Assessment) error {
	head := rn.Head()
	if rn.Ghost || rn.Tomb != nil {
		return nil
	}
	ann := map[string]string{
		spark.AnnotationStopped:       string(l),
		spark.AnnotationStoppedAt:     r.now.UTC().Format(time.RFC3339),
		spark.AnnotationStoppedReason: a.Reason,
		spark.AnnotationStoppedDetail: a.Detail,
		spark.AnnotationDriver:        head.Name,
		spark.AnnotationDriverUID:     string(head.UID),
	}
	want := objects.Tombstone(head, r.wf, ann)
	cm, err := r.tombstone(want)
	var squatted *squattedError
	switch {
	case errors.As(err, &squatted):
		r.log.Warn("tombstone not written", "driver", head.Name, "error", err.Error())
		r.core.event(r.wf, corev1.EventTypeWarning, spark.ReasonObjectRefused, fmt.Sprintf("driver %s stopped without its tombstone: %s", head.Name, err))
		cm = want
	case err != nil:
		return fmt.Errorf("write tombstone %s: %w", want.Name, err)
	default:
		r.scope.Wrote(cm)
	}
	if head.DeletionTimestamp == nil {
		if err := r.core.deleteDriver(r.ctx, head); err != nil {
			return fmt.Errorf("stop driver pod %s: %w", head.Name, err)
		}
	}
	r.log.Info("driver stopped", "driver", head.Name, "limit", string(l), "detail", a.Detail)
	r.core.metrics.Driver("deleted", string(l))
	stand := head.DeepCopy()
	if stand.Annotations == nil {
		stand.Annotations = map[string]string{}
	}
	maps.Copy(stand.Annotations, ann)
	rn.Attempts[len(rn.Attempts)-1] = stand
	rn.Tomb = cm
	return nil
}

// tombstone creates want, or takes the one of its name if it is the
// run's (ours).
func (r *pass) tombstone(want *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	cms := r.core.clients.Kube.CoreV1().ConfigMaps(want.Namespace)
	cm, err := cms.Create(r.ctx, want, metav1.CreateOptions{})
	if err == nil {
		// Its own, whatever the entry records by then: Argo removes a
		// final entry before its Workflow shows the node finished.
		r.core.launched.first(cm.UID)
	}
	if !apierrors.IsAlreadyExists(err) {
		return cm, err
	}
	if cm, err = cms.Get(r.ctx, want.Name, metav1.GetOptions{}); err != nil {
		return nil, err
	}
	return cm, ours(cm, want)
}

// annotate merges annotations into a driver pod, that very pod: the patch
// names its uid, which the API server holds against the pod's.
func (r *pass) annotate(head *corev1.Pod, ann map[string]string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": head.UID, "annotations": ann}})
	if err != nil {
		return fmt.Errorf("encode annotation patch: %w", err)
	}
	updated, err := r.core.clients.Kube.CoreV1().Pods(head.Namespace).Patch(r.ctx, head.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("annotate driver pod %s: %w", head.Name, err)
	}
	r.scope.Wrote(updated)
	return nil
}

// discard deletes a driver whose launch was refused after it was created;
// what it owns goes with it.
func (r *pass) discard(driver *corev1.Pod) {
	if err := r.core.deleteDriver(r.ctx, driver); err != nil {
		r.log.Error("cannot delete the driver of a refused launch; it goes with the workflow", "driver", driver.Name, "error", err.Error())
		return
	}
	r.core.discarded.add(driver.UID)
	r.core.metrics.Driver("deleted", "refused")
}

// transient logs an API error that asking again may cure and records it.
func (r *pass) transient(format string, args ...any) *decide.Befell {
	msg := fmt.Sprintf(format, args...)
	r.log.Info("transient error; the agent will ask again", "error", msg)
	return &decide.Befell{Kind: decide.Interrupted, Message: msg}
}

// unlaunchable records a launch that cannot be made at all.
func unlaunchable(message string) *decide.Befell {
	return &decide.Befell{Kind: decide.Unlaunchable, Message: message}
}

// rejected counts a refused submission of a node's attempt and records
// it; the next pass decides, by the restart policy, whether it is
// retried.
func (r *pass) rejected(attempt int, message string) *decide.Befell {
	f := r.core.failures.record(r.wf.UID, r.node, attempt, message, r.now)
	r.log.Info("driver submission refused", "attempt", attempt, "refusals", f.Count, "error", f.Message)
	// One Event per refused submission: nothing else in the cluster says
	// a submission failed (no driver was made), and sparkplug monitor
	// counts spark_application_failed_submission_count from them.
	r.core.event(r.wf, corev1.EventTypeWarning, spark.ReasonSubmissionFailed,
		fmt.Sprintf("node %s, attempt %d: %s", r.node, attempt, spec.Truncate(message, spec.MaxMessageBytes)))
	return &decide.Befell{Kind: decide.Rejected, Attempt: attempt, Message: f.Message}
}
