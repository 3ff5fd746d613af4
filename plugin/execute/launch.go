package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/kube"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// launch creates attempt of the node's run in the current incarnation:
// the batch scheduler's PodGroup, if any, then the driver pod, then its
// ConfigMap and Service owned by it. A driver that already exists (a
// repeated pass, a restarted plugin) is taken as it is, if it is this
// workflow's driver under the name sparkplug gives it and could be its run
// (trust.go). The run takes names drawn now (objects.Run.NameKey), which
// nobody can hold, when draw says so: decide does once a pod or Service
// that is not the run's held one of its names (NamesTaken). The driver pod
// is created by the step's launcher: natively here, or by spark-submit
// (sparkSubmit). A launch that does not go through returns what befell it
// instead.
func (r *pass) launch(attempt int, body *spec.SparkApplicationSpec, draw bool) (*corev1.Pod, *decide.Befell) {
	br := r.step.Run(r.wf, r.node, attempt)
	br.Incarnation = r.incarnation
	// A name nobody can guess for the ConfigMap the driver mounts: none
	// can be made before it (see companions).
	br.ConfKey = objects.NewConfKey()
	if draw {
		br.NameKey = objects.NewConfKey()
		r.log.Info("a name of the run is held; launching under names drawn now", "attempt", attempt)
	}
	o := launchOrder{node: r.node, attempt: attempt}
	objs, err := r.core.builder.Build(body, br)
	if err != nil {
		return nil, unlaunchable(fmt.Sprintf("build driver objects: %s", err))
	}
	if out := r.createPodGroup(objs.PodGroup, o); out != nil {
		return nil, out
	}
	var created *corev1.Pod
	var out *decide.Befell
	if r.policy.SparkSubmit {
		created, out = r.sparkSubmit(objs, br, o)
	} else {
		var taken *corev1.Pod
		created, taken, out = r.createDriver(objs, o)
		if taken != nil {
			// A pod that is not the run's holds its name.
			r.withdrawPodGroup(objs.PodGroup)
			return nil, &decide.Befell{Kind: decide.NamesTaken, Attempt: attempt, Drawn: draw,
				Message: fmt.Sprintf("pod %s exists and is not this workflow's driver: delete it, or run the workflow under another name", taken.Name)}
		}
	}
	if out != nil {
		return nil, out
	}
	r.core.launched.first(created.UID)
	r.scope.Wrote(created)
	err = r.companions(objs, created)
	var squatted *squattedError
	if errors.As(err, &squatted) {
		// One of its companions' names is held, with the driver made.
		r.log.Info("a companion's name is held", "driver", created.Name, "error", err.Error())
		r.withdrawPodGroup(objs.PodGroup)
		return nil, &decide.Befell{Kind: decide.NamesTaken, Attempt: attempt, Drawn: draw, Driver: created, Message: err.Error()}
	}
	return r.launched(created, err, o)
}

// ensureCompanions recreates the objects a live driver owns (ConfigMap,
// Services, ...) when they are missing: the plugin stopped between
// creating the pod and them. Once a driver's companions are known to exist
// it is not checked again, so in steady state this makes no API request.
// A companion the API server refuses for good, or whose name is held, is
// recorded (CompanionRefused): decide says whether the driver runs on
// without it or is deleted, its attempt a refused submission.
func (r *pass) ensureCompanions(rn *decide.Run, snap *decide.Snapshot) (*decide.Befell, error) {
	head := rn.Head()
	if head.UID == "" || r.core.companions.has(head.UID) {
		return nil, nil
	}
	// Built as it was launched: with its Workload's admission, if queued.
	body, failure := r.bodyOf(snap, rn.Attempt())
	if failure != nil {
		return failure, nil
	}
	br := r.step.Run(r.wf, r.node, rn.Attempt())
	br.Incarnation = head.Annotations[spark.AnnotationIncarnation]
	br.NameKey = head.Annotations[spark.AnnotationNameKey]
	objs, err := r.core.builder.Build(body, br)
	if err != nil {
		return nil, fmt.Errorf("rebuild objects of %s: %w", head.Name, err)
	}
	err = r.companions(objs, head)
	if !failsAttempt(err) {
		return nil, err
	}
	return companionRefused(rn.Attempt(), head, err), nil
}

// companionRefused records a companion of driver refused for good, or
// held by another's object (failsAttempt).
func companionRefused(attempt int, driver *corev1.Pod, err error) *decide.Befell {
	b := &decide.Befell{Kind: decide.CompanionRefused, Attempt: attempt, Driver: driver, Message: err.Error()}
	var refused *refusedError
	if errors.As(err, &refused) {
		b.Message = refused.Error()
	} else {
		b.Held = true
	}
	return b
}

// companions creates the objects a driver owns, those the cache does not
// show yet; one that already exists is taken only if it is the run's
// (ours), else the attempt fails (squattedError). A driver
// spark-submit created gets the Workflow as owner first, if it lacks it,
// and the objects select its application id (retarget).
func (r *pass) companions(objs *objects.Set, driver *corev1.Pod) error {
	if err := r.ensureOwner(driver); err != nil {
		return err
	}
	objects.OwnedBy(objs, driver)
	retarget(objs, driver)
	mountedConf(objs, driver)
	if pg := objs.PodGroup; pg != nil && objects.InPodGroup(driver, pg) {
		// A driver an older sparkplug launched names no group: nothing to
		// hand over.
		if err := r.adoptPodGroup(pg, driver); err != nil {
			var status apierrors.APIStatus
			if failsAttempt(err) || isTransient(err) || !errors.As(err, &status) {
				return err
			}
			// The group works as it is; it only stays the Workflow's.
			msg := fmt.Sprintf("PodGroup %s not handed to driver %s, it goes with the Workflow instead: %s", pg.GetName(), driver.Name, apiMessage(err))
			r.log.Warn("pod group handover refused", "driver", driver.Name, "pod_group", pg.GetName(), "error", apiMessage(err))
			r.core.event(r.wf, corev1.EventTypeWarning, spark.ReasonObjectRefused, msg)
		}
	}
	var todo []objects.Object
	for _, o := range objs.Companions() {
		cached := r.scope.Cached(o)
		if cached == nil {
			todo = append(todo, o)
			continue
		}
		if err := ours(cached, o); err != nil {
			return err
		}
	}
	// The companions only need the driver's uid, not each other: created
	// side by side, a launch costs the driver's create and the slowest
	// companion's, not the sum of all.
	made := make([]runtime.Object, len(todo))
	errs := make([]error, len(todo))
	var wg sync.WaitGroup
	for i, o := range todo {
		wg.Go(func() { made[i], errs[i] = r.create(o) })
	}
	wg.Wait()
	for i, o := range todo {
		created, err := made[i], errs[i]
		var status apierrors.APIStatus
		switch {
		case err == nil:
			r.scope.Wrote(created)
		case apierrors.IsAlreadyExists(err):
			if err := r.existing(o); err != nil {
				return err
			}
		case isTransient(err) || !errors.As(err, &status):
			return fmt.Errorf("create %s %s: %w", kindOf(o), o.GetName(), err)
		case !companionRequired(objs, o):
			// The UI's Service and the Ingresses: the application runs
			// without them, so a refusal is said, not fatal.
			msg := fmt.Sprintf("%s %s of driver %s not created, the application runs without it: %s", kindOf(o), o.GetName(), driver.Name, apiMessage(err))
			r.log.Warn("companion refused", "driver", driver.Name, "object", o.GetName(), "error", apiMessage(err))
			r.core.event(r.wf, corev1.EventTypeWarning, spark.ReasonObjectRefused, msg)
		default:
			return &refusedError{what: kindOf(o) + " " + o.GetName(), err: err}
		}
	}
	r.core.companions.add(driver.UID)
	return nil
}

// mountedConf names the run's ConfigMap as driver mounts it: its launch
// drew the name (objects.Run.ConfKey), which a Set rebuilt since cannot
// know. A driver that mounts none of the run's (spark-submit's, with no
// metrics files) needs none.
func mountedConf(objs *objects.Set, driver *corev1.Pod) {
	if objs.ConfigMap == nil {
		return
	}
	if name := objects.ConfigMapOf(driver); name != "" {
		objs.ConfigMap.Name = name
	} else {
		objs.ConfigMap = nil
	}
}

// companionRequired: the driver cannot run without o (its ConfigMap, its
// Service), so a refusal of o is a refused submission; the UI's Service
// and the Ingresses (objs.Extra) it runs without.
func companionRequired(objs *objects.Set, o objects.Object) bool {
	return !slices.Contains(objs.Extra, o)
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

// failsAttempt: err ends the attempt as a refused submission (a refused
// or squatted object), asking again cannot help.
func failsAttempt(err error) bool {
	var refused *refusedError
	var squatted *squattedError
	return errors.As(err, &refused) || errors.As(err, &squatted)
}

// create creates one object with its typed client, or, for an
// unstructured one (a PodGroup), with the dynamic client.
func (r *pass) create(o objects.Object) (runtime.Object, error) {
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

// get reads o's namesake from the API server, with the client create
// uses.
func (r *pass) get(o objects.Object) (metav1.Object, error) {
	kube := r.core.clients.Kube
	ns := r.wf.Namespace
	opts := metav1.GetOptions{}
	switch o := o.(type) {
	case *unstructured.Unstructured:
		res, err := r.dynamicResource(o)
		if err != nil {
			return nil, err
		}
		return res.Get(r.ctx, o.GetName(), opts)
	case *corev1.ConfigMap:
		return kube.CoreV1().ConfigMaps(ns).Get(r.ctx, o.Name, opts)
	case *corev1.Service:
		return kube.CoreV1().Services(ns).Get(r.ctx, o.Name, opts)
	case *networkingv1.Ingress:
		return kube.NetworkingV1().Ingresses(ns).Get(r.ctx, o.Name, opts)
	default:
		return nil, fmt.Errorf("sparkplug does not read %T objects", o)
	}
}

// dynamicResource is the dynamic client's resource for an unstructured
// object the builder made.
func (r *pass) dynamicResource(o *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	if r.core.clients.Dynamic == nil {
		return nil, fmt.Errorf("no dynamic client to create %s %s with", o.GetKind(), o.GetName())
	}
	if o.GetKind() != spark.PodGroupKind {
		return nil, fmt.Errorf("sparkplug does not create %s objects", o.GroupVersionKind())
	}
	return r.core.clients.Dynamic.Resource(objects.PodGroupResource(o)).Namespace(r.wf.Namespace), nil
}

// createPodGroup creates the run's PodGroup before its driver, owned by
// the Workflow: the batch scheduler must know it when it sees the driver.
// One that exists (a repeated call) is taken only if it is the run's
// (ours); someone else's fails the attempt. pg takes the uid of the one
// taken, which withdrawPodGroup deletes by. The API server having no such
// resource means the scheduler's CRD is not installed: a refused
// submission, counted and retried per onSubmissionFailureRetries as the
// Spark operator retries a failed batch scheduling, with a message that
// names the fix.
func (r *pass) createPodGroup(pg *unstructured.Unstructured, o launchOrder) *decide.Befell {
	if pg == nil {
		return nil
	}
	made, err := r.create(pg)
	switch {
	case err == nil:
		r.log.Info("pod group created", "node", o.node, "pod_group", pg.GetName(), "api_version", pg.GetAPIVersion())
		pg.SetUID(made.(metav1.Object).GetUID())
		return nil
	case apierrors.IsAlreadyExists(err):
		found, err := r.get(pg)
		switch {
		case err == nil:
		case isTransient(err) || apierrors.IsNotFound(err):
			return r.transient("get existing PodGroup %s: %s", pg.GetName(), err)
		default:
			return r.rejected(o.attempt, fmt.Sprintf("get existing PodGroup %s: %s", pg.GetName(), apiMessage(err)))
		}
		if err := ours(found, pg); err != nil {
			return r.rejected(o.attempt, err.Error())
		}
		pg.SetUID(found.GetUID())
		return nil
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		// Before isTransient: the API server's 404 for a resource it does
		// not serve is an "unexpected server response" to client-go.
		return r.rejected(o.attempt, objects.MissingPodGroupCRD(pg))
	case isTransient(err):
		return r.transient("create PodGroup %s: %s", pg.GetName(), err)
	default:
		return r.rejected(o.attempt, fmt.Sprintf("create PodGroup %s: %s", pg.GetName(), apiMessage(err)))
	}
}

// adoptPodGroup hands the run's PodGroup, created owned by the Workflow,
// to the driver (OwnedBy set its owner), so that it goes with the driver,
// and labels it with the driver's application id (retarget: spark-submit
// chooses its own); one that is missing (someone deleted it) is created
// owned by the driver. The group found must be the run's, owned by the
// Workflow or by this driver (ours); the patch names its uid, so it
// changes that very object. This is a read and at most one write per
// driver and process, like the other companions' checks.
func (r *pass) adoptPodGroup(pg *unstructured.Unstructured, driver *corev1.Pod) error {
	if pg == nil {
		return nil
	}
	res, err := r.dynamicResource(pg)
	if err != nil {
		return err
	}
	found, err := res.Get(r.ctx, pg.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if _, err = res.Create(r.ctx, pg, metav1.CreateOptions{}); apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			// The driver names a group that cannot be made: it would
			// never be scheduled.
			return &refusedError{what: "PodGroup " + pg.GetName(), err: errors.New(objects.MissingPodGroupCRD(pg))}
		}
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("PodGroup %s made meanwhile; checked on the next pass", pg.GetName())
		}
	}
	if err != nil {
		return fmt.Errorf("make the driver the owner of PodGroup %s: %w", pg.GetName(), err)
	}
	want := pg.DeepCopy()
	want.SetOwnerReferences(append(pg.GetOwnerReferences(), objects.WorkflowOwner(r.wf)))
	if err := ours(found, want); err != nil {
		return err
	}
	appID := pg.GetLabels()[spark.LabelAppSelector]
	if found.GetLabels()[spark.LabelAppSelector] == appID && driverpod.NotOurs(found, pg.GetName(), nil, pg.GetOwnerReferences()...) == nil {
		return nil // handed over already
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":             found.GetUID(),
		"ownerReferences": pg.GetOwnerReferences(),
		"labels":          map[string]string{spark.LabelAppSelector: appID},
	}})
	if err != nil {
		return fmt.Errorf("encode pod group owner patch: %w", err)
	}
	if _, err = res.Patch(r.ctx, pg.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("make the driver the owner of PodGroup %s: %w", pg.GetName(), err)
	}
	return nil
}

// withdrawPodGroup deletes the PodGroup of a driver the API server or
// spark-submit refused: a PodGroup without pods would otherwise wait,
// owned by the Workflow, until the Workflow goes, and Volcano may admit it
// to its own queue (a Volcano Queue, not Kueue's) and hold its
// minResources there. A retry creates it again. It deletes only the
// group createPodGroup made or took (by its uid); a failure is only
// logged: the PodGroup still goes with the Workflow.
func (r *pass) withdrawPodGroup(pg *unstructured.Unstructured) {
	if pg == nil || pg.GetUID() == "" {
		return
	}
	res, err := r.dynamicResource(pg)
	if err == nil {
		uid := pg.GetUID()
		err = res.Delete(r.ctx, pg.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	}
	if err != nil && !apierrors.IsNotFound(err) {
		r.log.Info("pod group of a refused driver not deleted; it goes with the workflow", "pod_group", pg.GetName(), "error", err.Error())
	}
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

// deleteDriver deletes driver pod p, that very pod (by uid): one already
// gone, or replaced by a pod of its name, is no error (kube.DeletePod).
func (c *Core) deleteDriver(ctx context.Context, p *corev1.Pod) error {
	_, err := kube.DeletePod(ctx, c.clients.Kube, p)
	return err
}
