package execute

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/kueue"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// All of Kueue on the act side, for a step queued in a Kueue LocalQueue
// (step.KueueQueue). Gather reads the node's Workloads from the cache
// (kueueWorkloads, scope.KueueWorkloadsOfNode) with a waiting one's place
// in its LocalQueue (kueuePosition). Act creates a Workload before
// anything else of an attempt (kueueEnqueue, with its priority,
// kueuePriority), reads it back admitted to build the attempt's objects
// with the admitted flavors (kueueAdmittedBody, bodyOf), marks it
// PodsReady once its pods run (kueueMarkPodsReady) and deletes it when the
// attempt or the node is over (kueueDequeue). Package decide says when;
// package kueue says what a Workload is and what its conditions mean.

// fieldManager is who sparkplug's server-side applies are from.
const fieldManager = "sparkplug"

// kueueClient is the dynamic client of the workflow's namespace's
// Workloads.
func (r *pass) kueueClient() (dynamic.ResourceInterface, error) {
	if r.core.clients.Dynamic == nil {
		return nil, errors.New("no dynamic client to reach Kueue's Workloads with")
	}
	return r.core.clients.Dynamic.Resource(kueue.WorkloadResource).Namespace(r.wf.Namespace), nil
}

// kueueEnqueue creates the Workload of attempt, owned by the Workflow,
// with the priority of the step's priority class. One of its name that
// exists (a repeated pass, a restarted plugin) is taken if it is the
// run's; someone else's fails the attempt. Kueue's API not being served is a
// refused submission whose message says what to install.
func (r *pass) kueueEnqueue(attempt int) *decide.Befell {
	br := r.step.Run(r.wf, r.node, attempt)
	br.Incarnation = r.incarnation
	objs, err := r.core.builder.Build(r.step.Body, br)
	if err != nil {
		return unlaunchable(fmt.Sprintf("build driver objects: %s", err))
	}
	want := objs.Workload
	if want == nil {
		return unlaunchable("the step is queued but no Kueue Workload was built for it")
	}
	if out := r.kueuePriority(want, attempt); out != nil {
		return out
	}
	res, err := r.kueueClient()
	if err != nil {
		return r.transient("%s", err)
	}
	made, err := res.Create(r.ctx, want, metav1.CreateOptions{})
	switch {
	case err == nil:
		r.scope.Wrote(made)
		r.log.Info("Kueue workload created", "workload", want.GetName(), "queue", r.step.KueueQueue, "attempt", attempt)
		r.core.event(r.wf, corev1.EventTypeNormal, spark.ReasonQueued,
			fmt.Sprintf("node %s, attempt %d: Workload %s waits in LocalQueue %s", r.node, attempt, want.GetName(), r.step.KueueQueue))
		return nil
	case apierrors.IsAlreadyExists(err):
		found, err := res.Get(r.ctx, want.GetName(), metav1.GetOptions{})
		if err != nil {
			return r.transient("get existing Kueue Workload %s: %s", want.GetName(), err)
		}
		if err := ours(found, want); err != nil {
			return r.rejected(attempt, err.Error())
		}
		r.scope.Wrote(found)
		return nil
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return r.rejected(attempt, fmt.Sprintf("the step is queued in LocalQueue %s (%s) but the API server does not serve Kueue's %s/%s Workloads: install Kueue v0.15 or later, or remove the label",
			r.step.KueueQueue, kueue.LabelQueueName, kueue.Group, kueue.Version))
	case isTransient(err):
		return r.transient("create Kueue Workload %s: %s", want.GetName(), err)
	case apierrors.IsForbidden(err):
		return r.rejected(attempt, fmt.Sprintf("create Kueue Workload %s: %s: give sparkplug's ServiceAccount the Kueue rules (manifests/components/kueue, or the chart's kueue.enabled)",
			want.GetName(), apiMessage(err)))
	default:
		return r.rejected(attempt, fmt.Sprintf("create Kueue Workload %s: %s", want.GetName(), apiMessage(err)))
	}
}

// kueuePriority gives a Workload its priority: the WorkloadPriorityClass
// of the template's kueue.x-k8s.io/priority-class label, else the
// driver's priorityClassName. Kueue's CRD requires the value with the
// reference, and its webhook does not compute it for a Workload it did
// not make, so sparkplug reads the class.
func (r *pass) kueuePriority(w *unstructured.Unstructured, attempt int) *decide.Befell {
	var ref kueue.PriorityClassRef
	var value int32
	if name := r.step.Template.Metadata.Labels[kueue.LabelPriorityClass]; name != "" {
		if r.core.clients.Dynamic == nil {
			return r.transient("no dynamic client to read WorkloadPriorityClass %s with", name)
		}
		pc, err := r.core.clients.Dynamic.Resource(kueue.WorkloadPriorityClassResource).Get(r.ctx, name, metav1.GetOptions{})
		if err != nil {
			return r.kueuePriorityRefused(attempt, "WorkloadPriorityClass", name, kueue.LabelPriorityClass, err)
		}
		v, _, _ := unstructured.NestedInt64(pc.Object, "value")
		ref, value = kueue.PriorityClassRef{Group: kueue.Group, Kind: "WorkloadPriorityClass", Name: name}, int32(v)
	} else if p := r.step.Body.Driver.PriorityClassName; p != nil && *p != "" {
		pc, err := r.core.clients.Kube.SchedulingV1().PriorityClasses().Get(r.ctx, *p, metav1.GetOptions{})
		if err != nil {
			return r.kueuePriorityRefused(attempt, "PriorityClass", *p, "spark.driver.priorityClassName", err)
		}
		ref, value = kueue.PriorityClassRef{Group: "scheduling.k8s.io", Kind: "PriorityClass", Name: *p}, pc.Value
	} else {
		return nil
	}
	refMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&ref)
	if err == nil {
		err = unstructured.SetNestedMap(w.Object, refMap, "spec", "priorityClassRef")
	}
	if err == nil {
		err = unstructured.SetNestedField(w.Object, int64(value), "spec", "priority")
	}
	if err != nil {
		return unlaunchable(fmt.Sprintf("set the priority of Kueue Workload %s: %s", w.GetName(), err))
	}
	return nil
}

func (r *pass) kueuePriorityRefused(attempt int, kind, name, field string, err error) *decide.Befell {
	if isTransient(err) {
		return r.transient("get %s %s: %s", kind, name, err)
	}
	if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
		return r.rejected(attempt, fmt.Sprintf("%s %s (%s) does not exist: create it, or name another", kind, name, field))
	}
	return r.rejected(attempt, fmt.Sprintf("get %s %s (%s): %s", kind, name, field, apiMessage(err)))
}

// kueueAdmittedBody is the step's body as Kueue's admission of w asks for it
// (kueue.Admit): the admitted flavors' node labels and tolerations, the
// executors capped at the admitted count, the Workload's annotation and
// pod-set labels. A body Kueue's flavors contradict fails the attempt.
func (r *pass) kueueAdmittedBody(w *decide.Workload) (*spec.SparkApplicationSpec, error) {
	flavors := map[string]kueue.ResourceFlavorSpec{}
	for _, name := range w.Admission.Flavors() {
		if r.core.clients.Dynamic == nil {
			return nil, errors.New("no dynamic client to read ResourceFlavors with")
		}
		f, err := r.core.clients.Dynamic.Resource(kueue.ResourceFlavorResource).Get(r.ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("get ResourceFlavor %s of Workload %s: %w", name, w.Name, err)
		}
		var fs kueue.ResourceFlavorSpec
		if spec, ok, _ := unstructured.NestedMap(f.Object, "spec"); ok {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(spec, &fs); err != nil {
				return nil, fmt.Errorf("read ResourceFlavor %s: %w", name, err)
			}
		}
		flavors[name] = fs
	}
	return kueue.Admit(r.step.Body, w.Name, w.View, flavors)
}

// bodyOf is the body attempt's objects are built from: the step's, or
// for a queued step the one its admitted Workload asks for
// (kueueAdmittedBody). A body the admission contradicts fails the attempt;
// a flavor that cannot be read now is tried again.
func (r *pass) bodyOf(snap *decide.Snapshot, attempt int) (*spec.SparkApplicationSpec, *decide.Befell) {
	if r.step.KueueQueue == "" {
		return r.step.Body, nil
	}
	w, ok := snap.WorkloadOf(attempt)
	if !ok || !w.Admitted || w.Admission == nil {
		// A run whose Workload went (deleted by hand) runs on as built.
		return r.step.Body, nil
	}
	body, err := r.kueueAdmittedBody(&w)
	var conflict *kueue.ConflictError
	switch {
	case errors.As(err, &conflict):
		return nil, unlaunchable(err.Error())
	case err != nil:
		return nil, r.transient("%s", err)
	}
	return body, nil
}

// kueueDequeue deletes Workloads whose attempt, or node, is over: their
// quota goes back at once. Each delete names the Workload's uid, so a
// Workload made since under the name is left alone; one already gone is
// no error.
func (r *pass) kueueDequeue(ws []decide.Workload) error {
	if len(ws) == 0 {
		return nil
	}
	res, err := r.kueueClient()
	if err != nil {
		return err
	}
	for _, w := range ws {
		uid := types.UID(w.UID)
		err := res.Delete(r.ctx, w.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("delete Kueue Workload %s: %w", w.Name, err)
		}
		r.log.Info("Kueue workload deleted", "workload", w.Name, "attempt", w.Attempt)
	}
	return nil
}

// kueueMarkPodsReady sets the PodsReady condition of an admitted Workload
// whose driver and executors run, as Kueue's job integrations do: a
// ClusterQueue with waitForPodsReady evicts a Workload that lacks it in
// time. It applies the one condition (server-side apply of the status,
// whose conditions are a map by type), so Kueue's own are left as they
// are.
func (r *pass) kueueMarkPodsReady(w *decide.Workload) error {
	res, err := r.kueueClient()
	if err != nil {
		return err
	}
	patch := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": kueue.Group + "/" + kueue.Version, "kind": kueue.WorkloadKind,
		"metadata": map[string]any{"name": w.Name, "namespace": r.wf.Namespace, "uid": w.UID},
		"status": map[string]any{"conditions": []any{map[string]any{
			"type": kueue.ConditionPodsReady, "status": string(metav1.ConditionTrue), "reason": "PodsReady",
			"message":            "the Spark driver and the executors Kueue admitted run",
			"lastTransitionTime": metav1.NewTime(r.now).UTC().Format("2006-01-02T15:04:05Z"),
		}}},
	}}
	updated, err := res.ApplyStatus(r.ctx, w.Name, patch, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("mark Kueue Workload %s PodsReady: %w", w.Name, err)
	}
	r.scope.Wrote(updated)
	return nil
}

// kueueWorkloads are the node's Kueue Workloads, every attempt's and
// incarnation's that this workflow owns under the name sparkplug gives
// them, and whether the cache has synced; a waiting one with its
// position in its LocalQueue, which Kueue's visibility API gives when it
// is served (the one request a gather may make, cached per LocalQueue:
// kueuePositions). Only a queued step starts the Workload cache; a step
// that is not queued reads it only once another started it (a Workload
// left from a queue-name label since removed is deleted all the same).
func (r *pass) kueueWorkloads() ([]decide.Workload, bool) {
	if r.step.KueueQueue == "" && r.scope.KueueWorkloads() == nil {
		return nil, true
	}
	objs, synced := r.scope.KueueWorkloadsOfNode(r.node)
	var out []decide.Workload
	for _, o := range objs {
		if o.GetAnnotations()[spark.AnnotationNodeID] != r.node || !driverpod.OwnWorkload(o, r.wf) {
			continue
		}
		v, err := kueue.Read(o)
		if err != nil {
			r.log.Warn("Kueue Workload not readable; left alone", "workload", o.GetName(), "error", err.Error())
			continue
		}
		m := metav1.ObjectMeta{Labels: o.GetLabels(), Annotations: o.GetAnnotations()}
		w := decide.Workload{View: v, Attempt: attemptOf(&corev1.Pod{ObjectMeta: m}), Current: r.current(m)}
		if w.Current && v.Pending() {
			// Where it waits, when Kueue's visibility API says.
			if p, ok := r.core.kueuePosition(r.ctx, r.wf.Namespace, v.LocalQueue, v.Name); ok {
				w.Position = &p
			}
		}
		out = append(out, w)
	}
	return out, synced
}

// How long a LocalQueue's positions are used before they are asked
// again, and how long a visibility API that did not answer is left
// alone: every node waiting in a LocalQueue reads them on each pass.
const (
	positionsTTL     = 5 * time.Second
	positionsBackoff = time.Minute
)

// kueuePositions are the positions of pending Workloads in their
// LocalQueue, from Kueue's visibility API when it is served (it is an
// option of Kueue's, off by default): one request per LocalQueue per
// positionsTTL, whatever the number of nodes waiting in it.
type kueuePositions struct {
	mu sync.Mutex
	m  map[string]positionsEntry // by namespace/localqueue
}

type positionsEntry struct {
	at        time.Time
	positions map[string]int32
	// unavailable: the API did not answer (not served, forbidden); it is
	// asked again after positionsBackoff.
	unavailable bool
}

// kueuePosition is Workload name's position in LocalQueue localQueue of
// namespace, 0 the next to be admitted; ok is false when it is not known.
func (c *Core) kueuePosition(ctx context.Context, namespace, localQueue, name string) (int32, bool) {
	key := namespace + "/" + localQueue
	now := c.opts.Now()
	c.kueuePositions.mu.Lock()
	e, ok := c.kueuePositions.m[key]
	c.kueuePositions.mu.Unlock()
	fresh := ok && (now.Sub(e.at) < positionsTTL || e.unavailable && now.Sub(e.at) < positionsBackoff)
	if !fresh {
		e = positionsEntry{at: now, unavailable: true}
		if rc := c.restClient(); rc != nil {
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			body, err := rc.Get().AbsPath(kueue.PendingPath(namespace, localQueue)).DoRaw(rctx)
			cancel()
			if err == nil {
				if p, err := kueue.Positions(body); err == nil {
					e = positionsEntry{at: now, positions: p}
				}
			}
		}
		c.kueuePositions.mu.Lock()
		if c.kueuePositions.m == nil {
			c.kueuePositions.m = map[string]positionsEntry{}
		}
		for k, old := range c.kueuePositions.m {
			if now.Sub(old.at) > positionsBackoff {
				delete(c.kueuePositions.m, k) // LocalQueues no longer asked about
			}
		}
		c.kueuePositions.m[key] = e
		c.kueuePositions.mu.Unlock()
	}
	p, ok := e.positions[name]
	return p, ok
}

// restClient is the client of the API server's raw paths, nil without
// one (a fake clientset).
func (c *Core) restClient() rest.Interface {
	if c.clients.Kube == nil || c.clients.Kube.Discovery() == nil {
		return nil
	}
	rc := c.clients.Kube.Discovery().RESTClient()
	if rc == nil || reflect.ValueOf(rc).IsNil() {
		return nil
	}
	return rc
}
