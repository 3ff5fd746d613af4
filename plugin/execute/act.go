package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/sparkplug-io/sparkplug/plugin/build"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

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
	owner := build.WorkflowOwner(r.wf)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations":     ann,
		"ownerReferences": []metav1.OwnerReference{owner},
	}})
	if err != nil {
		return fmt.Errorf("encode tombstone patch: %w", err)
	}
	cmName := build.ConfigMapName(head.Name)
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

// launch creates attempt n of the node's run: the batch scheduler's
// PodGroup, if any, then the driver pod, then its ConfigMap and Service
// owned by it. A driver that already exists (a repeated call, a restarted
// plugin) is taken as it is. The driver pod is created by the request's
// launcher: natively here, or by spark-submit (sparkSubmit).
func (r *request) launch(node string, attempt int, previous *corev1.Pod) (*run, *executor.ExecuteTemplateReply) {
	br := build.Run{
		Workflow:    r.wf,
		NodeID:      node,
		TemplateKey: r.key,
		Attempt:     attempt,
	}
	objs, err := r.core.builder.Build(r.body, br)
	if err != nil {
		reply := failed(fmt.Sprintf("SUBMISSION_FAILED: build driver objects: %s", err))
		return nil, &reply
	}
	if previous != nil {
		// Carry the run's bookkeeping to the new head.
		for _, k := range []string{spark.AnnotationAdoptedBy} {
			if v, ok := previous.Annotations[k]; ok {
				objs.Driver.Annotations[k] = v
			}
		}
	}
	pods := r.core.clients.Kube.CoreV1().Pods(r.wf.Namespace)
	failKey := r.failKey(node, attempt)
	if wait, blocked := r.core.failures.backoff(failKey, r.body.RestartPolicy, r.now); blocked {
		f := r.core.failures.get(failKey)
		reply := r.reply(wfv1.NodePending, fmt.Sprintf("SUBMISSION_FAILED: retry %d%s in %s: %s", f.count+1, submissionMax(r.body.RestartPolicy), wait.Round(time.Second), f.message), nil)
		return nil, &reply
	}
	if reply := r.createPodGroup(objs.PodGroup, failKey, node); reply != nil {
		return nil, reply
	}
	var created *corev1.Pod
	if r.launcher() == spec.LauncherSparkSubmit {
		var reply *executor.ExecuteTemplateReply
		if created, reply = r.sparkSubmit(objs, br, node, failKey); reply != nil {
			return nil, reply
		}
	} else {
		created, err = pods.Create(r.ctx, objs.Driver, metav1.CreateOptions{})
		switch {
		case err == nil:
			r.log.Info("driver pod created", "node", node, "driver", created.Name, "attempt", attempt)
			r.core.metrics.Driver("launched", "")
		case apierrors.IsAlreadyExists(err):
			created, err = pods.Get(r.ctx, objs.Driver.Name, metav1.GetOptions{})
			if err != nil {
				return nil, r.transient("get existing driver pod %s: %s", objs.Driver.Name, err)
			}
			r.log.Info("driver pod already existed; continuing with it", "node", node, "driver", created.Name)
		case isTransient(err):
			return nil, r.transient("create driver pod %s: %s", objs.Driver.Name, err)
		default:
			r.withdrawPodGroup(objs.PodGroup)
			return nil, r.rejected(failKey, node, apiMessage(err))
		}
	}
	r.scope.Wrote(created)
	rn := &run{nodeID: node, attempts: []*corev1.Pod{created}}
	if err := r.companions(objs, created); err != nil {
		var refused *refusedError
		if errors.As(err, &refused) {
			r.discard(created)
			return nil, r.rejected(failKey, node, refused.Error())
		}
		return nil, r.transient("%s", err)
	}
	// Counted until the whole launch went through: a driver whose
	// companions are refused is a refused submission too.
	r.core.failures.clear(failKey)
	return rn, nil
}

// ensureCompanions recreates the objects a live driver owns (ConfigMap,
// Services, ...) when they are missing: the plugin stopped between
// creating the pod and them. Once a driver's companions are known to exist
// it is not checked again, so in steady state this makes no API request.
func (r *request) ensureCompanions(rn *run) error {
	head := rn.head()
	if head.UID == "" || r.core.companions.has(head.UID) {
		return nil
	}
	objs, err := r.core.builder.Build(r.body, build.Run{
		Workflow:    r.wf,
		NodeID:      rn.nodeID,
		TemplateKey: r.key,
		Attempt:     rn.attempt(),
	})
	if err != nil {
		return fmt.Errorf("rebuild objects of %s: %w", head.Name, err)
	}
	return r.companions(objs, head)
}

// companions creates the objects a driver owns, those the cache does not
// show yet; one that already exists is taken as it is. A driver
// spark-submit created gets the Workflow as owner first, if it lacks it,
// and the objects select its application id (retarget).
func (r *request) companions(objs *build.Objects, driver *corev1.Pod) error {
	if err := r.ensureOwner(driver); err != nil {
		return err
	}
	build.OwnedBy(objs, driver)
	retarget(objs, driver)
	if pg := objs.PodGroup; pg != nil && build.InPodGroup(driver, pg) {
		// A driver an older sparkplug launched names no group: nothing to
		// hand over.
		if err := r.adoptPodGroup(pg); err != nil {
			var refused *refusedError
			var status apierrors.APIStatus
			if errors.As(err, &refused) || isTransient(err) || !errors.As(err, &status) {
				return err
			}
			// The group works as it is; it only stays the Workflow's.
			msg := fmt.Sprintf("PodGroup %s not handed to driver %s, it goes with the Workflow instead: %s", pg.GetName(), driver.Name, apiMessage(err))
			r.log.Warn("pod group handover refused", "driver", driver.Name, "pod_group", pg.GetName(), "error", apiMessage(err))
			r.core.event(r.wf, corev1.EventTypeWarning, "SparkObjectRefused", msg)
		}
	}
	for _, o := range objs.Companions() {
		if r.scope.Has(o) {
			continue
		}
		created, err := r.create(o)
		var status apierrors.APIStatus
		switch {
		case err == nil:
			r.scope.Wrote(created)
		case apierrors.IsAlreadyExists(err):
		case isTransient(err) || !errors.As(err, &status):
			return fmt.Errorf("create %s %s: %w", kindOf(o), o.GetName(), err)
		case slices.Contains(objs.Extra, o):
			// The UI's Service and the Ingresses: the application runs
			// without them, so a refusal is said, not fatal.
			msg := fmt.Sprintf("%s %s of driver %s not created, the application runs without it: %s", kindOf(o), o.GetName(), driver.Name, apiMessage(err))
			r.log.Warn("companion refused", "driver", driver.Name, "object", o.GetName(), "error", apiMessage(err))
			r.core.event(r.wf, corev1.EventTypeWarning, "SparkObjectRefused", msg)
		default:
			return &refusedError{what: kindOf(o) + " " + o.GetName(), err: err}
		}
	}
	r.core.companions.add(driver.UID)
	return nil
}

// refusedError is a companion the driver needs (its ConfigMap, its
// Service) that the API server refused for good: forbidden, over a quota,
// invalid. Asking again cannot help; the attempt is a refused submission.
type refusedError struct {
	what string
	err  error
}

func (e *refusedError) Error() string { return "create " + e.what + ": " + apiMessage(e.err) }
func (e *refusedError) Unwrap() error { return e.err }

// kindOf names an object's kind for messages.
func kindOf(o build.Object) string {
	if k := o.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	t := fmt.Sprintf("%T", o)
	return t[strings.LastIndex(t, ".")+1:]
}

// failKey names one attempt of a node in the submission-failure counts.
func (r *request) failKey(node string, attempt int) string {
	return r.wf.UID + "/" + node + "/" + strconv.Itoa(attempt)
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

// create creates one object with its typed client, or, for an
// unstructured one (a PodGroup), with the dynamic client.
func (r *request) create(o build.Object) (runtime.Object, error) {
	kube := r.core.clients.Kube
	ns := r.wf.Namespace
	opts := metav1.CreateOptions{}
	switch o := o.(type) {
	case *unstructured.Unstructured:
		res, err := r.dynamicResource(o)
		if err != nil {
			return nil, err
		}
		return res.Create(r.ctx, o, opts)
	case *corev1.ConfigMap:
		return kube.CoreV1().ConfigMaps(ns).Create(r.ctx, o, opts)
	case *corev1.Service:
		return kube.CoreV1().Services(ns).Create(r.ctx, o, opts)
	case *networkingv1.Ingress:
		return kube.NetworkingV1().Ingresses(ns).Create(r.ctx, o, opts)
	default:
		return nil, fmt.Errorf("sparkplug does not create %T objects", o)
	}
}

// dynamicResource is the dynamic client's resource for an unstructured
// object the builder made.
func (r *request) dynamicResource(o *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	if r.core.clients.Dynamic == nil {
		return nil, fmt.Errorf("no dynamic client to create %s %s with", o.GetKind(), o.GetName())
	}
	if o.GetKind() != spark.PodGroupKind {
		return nil, fmt.Errorf("sparkplug does not create %s objects", o.GroupVersionKind())
	}
	return r.core.clients.Dynamic.Resource(build.PodGroupResource(o)).Namespace(r.wf.Namespace), nil
}

// createPodGroup creates the run's PodGroup before its driver, owned by
// the Workflow: the batch scheduler must know it when it sees the driver.
// One that exists (a repeated call) is taken as it is. The API server
// having no such resource means the scheduler's CRD is not installed: a
// refused submission, counted and retried per onSubmissionFailureRetries
// as the Spark operator retries a failed batch scheduling, with a message
// that names the fix.
func (r *request) createPodGroup(pg *unstructured.Unstructured, failKey, node string) *executor.ExecuteTemplateReply {
	if pg == nil {
		return nil
	}
	_, err := r.create(pg)
	switch {
	case err == nil:
		r.log.Info("pod group created", "node", node, "pod_group", pg.GetName(), "api_version", pg.GetAPIVersion())
		return nil
	case apierrors.IsAlreadyExists(err):
		return nil
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		// Before isTransient: the API server's 404 for a resource it does
		// not serve is an "unexpected server response" to client-go.
		return r.rejected(failKey, node, build.MissingPodGroupCRD(pg))
	case isTransient(err):
		return r.transient("create PodGroup %s: %s", pg.GetName(), err)
	default:
		return r.rejected(failKey, node, fmt.Sprintf("create PodGroup %s: %s", pg.GetName(), apiMessage(err)))
	}
}

// adoptPodGroup hands the run's PodGroup, created owned by the Workflow,
// to the driver (OwnedBy set its owner), so that it goes with the driver,
// and labels it with the driver's application id (retarget: spark-submit
// chooses its own); one that is missing (someone deleted it) is created
// owned by the driver. This is one request per driver and process, like
// the other companions' checks.
func (r *request) adoptPodGroup(pg *unstructured.Unstructured) error {
	if pg == nil {
		return nil
	}
	res, err := r.dynamicResource(pg)
	if err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": pg.GetOwnerReferences(),
		"labels":          map[string]string{spark.LabelAppSelector: pg.GetLabels()[spark.LabelAppSelector]},
	}})
	if err != nil {
		return fmt.Errorf("encode pod group owner patch: %w", err)
	}
	_, err = res.Patch(r.ctx, pg.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		if _, err = res.Create(r.ctx, pg, metav1.CreateOptions{}); apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			// The driver names a group that cannot be made: it would
			// never be scheduled.
			return &refusedError{what: "PodGroup " + pg.GetName(), err: errors.New(build.MissingPodGroupCRD(pg))}
		}
	}
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("make the driver the owner of PodGroup %s: %w", pg.GetName(), err)
	}
	return nil
}

// withdrawPodGroup deletes the PodGroup of a driver the API server or
// spark-submit refused: a PodGroup without pods would otherwise wait,
// owned by the Workflow, until the Workflow goes, and Volcano may admit it
// to its queue and hold its minResources there. A retry creates it again.
// A failure is only logged: the PodGroup still goes with the Workflow.
func (r *request) withdrawPodGroup(pg *unstructured.Unstructured) {
	if pg == nil {
		return
	}
	res, err := r.dynamicResource(pg)
	if err == nil {
		err = res.Delete(r.ctx, pg.GetName(), metav1.DeleteOptions{})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		r.log.Info("pod group of a refused driver not deleted; it goes with the workflow", "pod_group", pg.GetName(), "error", err.Error())
	}
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

func (r *request) transient(format string, args ...any) *executor.ExecuteTemplateReply {
	msg := fmt.Sprintf(format, args...)
	r.log.Info("transient error; the agent will ask again", "error", msg)
	reply := r.reply(wfv1.NodePending, "SUBMITTED: retrying after a transient API error: "+msg, nil)
	return &reply
}

func failed(message string) executor.ExecuteTemplateReply {
	return executor.ExecuteTemplateReply{Node: &wfv1.NodeResult{Phase: wfv1.NodeFailed, Message: message}}
}

func isTransient(err error) bool {
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err) ||
		errors.Is(err, context.DeadlineExceeded) || isConnectionError(err)
}

func isConnectionError(err error) bool {
	s := err.Error()
	return strings.Contains(s, "connection refused") || strings.Contains(s, "connection reset") || strings.Contains(s, "EOF")
}

// apiMessage is the API server's own message for a rejected request.
func apiMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return err.Error()
}

func submissionMax(p spec.RestartPolicy) string {
	return fmt.Sprintf("/%d", deref32(p.OnSubmissionFailureRetries, 0))
}
