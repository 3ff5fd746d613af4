package kueue

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// View is what a Workload says, read once for one decision.
type View struct {
	Name string
	UID  string
	// LocalQueue is the LocalQueue it waits in (spec.queueName).
	LocalQueue string
	// Created is when it was made (its creationTimestamp).
	Created time.Time
	// Deleting: it is being deleted; Kueue no longer counts it.
	Deleting bool
	// Admitted: Kueue admitted it (quota reserved and every admission
	// check ready): the attempt may launch. At is when.
	Admitted   bool
	AdmittedAt time.Time
	// Waiting is, while not admitted, why: the QuotaReserved condition's
	// message ("couldn't assign flavors to pod set driver: insufficient
	// quota for cpu ..."), or the Admitted one's once quota is reserved
	// and admission checks are pending.
	Waiting string
	// Evicted: Kueue evicted it (EvictedReason: Preempted,
	// PodsReadyTimeout, ClusterQueueStopped, Deactivated, ...); its
	// driver must stop.
	Evicted        bool
	EvictedReason  string
	EvictedMessage string
	// NeverFits is, while not admitted, what of Kueue's reason says it
	// can never be admitted as its ClusterQueue stands: a pod set asks
	// more than the queue's whole capacity (NeverFitsOf); "" otherwise,
	// and always for a Workload Kueue may admit in part (a pod set with
	// a minCount), of which Kueue's message speaks of the whole count
	// while fewer pods might fit later.
	NeverFits string
	// PodsReady: sparkplug said its pods run.
	PodsReady bool
	// Admission is where and with which flavors it was admitted; nil
	// before.
	Admission *Admission
	// Position is, while it is Pending, its place in its LocalQueue (0:
	// the next to be admitted), when Kueue's visibility API gives it
	// (Positions); nil when not known. Read leaves it nil: the Workload
	// itself does not say.
	Position *int32
}

// Pending: it waits in its LocalQueue for Kueue to admit it, neither
// admitted, evicted nor being deleted; its Position is worth asking.
func (v View) Pending() bool {
	return !v.Admitted && !v.Evicted && !v.Deleting && v.LocalQueue != ""
}

// Preempted: Kueue evicted it to make room for another Workload.
func (v View) Preempted() bool {
	return v.Evicted && v.EvictedReason == ReasonPreempted
}

// Read reads a Workload as the informers and the API return it.
func Read(u *unstructured.Unstructured) (View, error) {
	var w Workload
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &w); err != nil {
		return View{}, fmt.Errorf("read Workload %s: %w", u.GetName(), err)
	}
	v := View{Name: w.Name, UID: string(w.UID), LocalQueue: w.Spec.QueueName, Created: w.CreationTimestamp.Time,
		Deleting: w.DeletionTimestamp != nil, Admission: w.Status.Admission}
	conds := w.Status.Conditions
	if c := meta.FindStatusCondition(conds, ConditionAdmitted); c != nil && c.Status == metav1.ConditionTrue {
		v.Admitted, v.AdmittedAt = true, c.LastTransitionTime.Time
	}
	if c := meta.FindStatusCondition(conds, ConditionEvicted); c != nil && c.Status == metav1.ConditionTrue {
		v.Evicted, v.EvictedReason, v.EvictedMessage = true, c.Reason, c.Message
		// Kueue clears the admission of an evicted Workload once its
		// pods are gone (Requeued); until then it still shows it.
		v.Admitted, v.AdmittedAt = false, time.Time{}
	}
	v.PodsReady = meta.IsStatusConditionTrue(conds, ConditionPodsReady)
	if !v.Admitted {
		if c := meta.FindStatusCondition(conds, ConditionQuotaReserved); c != nil && c.Status != metav1.ConditionTrue {
			v.Waiting = c.Message
			if !v.Evicted && !partial(w.Spec.PodSets) {
				v.NeverFits = NeverFitsOf(c.Reason, c.Message)
			}
		} else if c := meta.FindStatusCondition(conds, ConditionAdmitted); c != nil && c.Status != metav1.ConditionTrue {
			v.Waiting = c.Message
		}
	}
	return v, nil
}

// partial: Kueue may admit fewer pods of a pod set than it asks for
// (partial admission, its minCount).
func partial(sets []PodSet) bool {
	for _, ps := range sets {
		if ps.MinCount != nil && *ps.MinCount < ps.Count {
			return true
		}
	}
	return false
}

// Assigned is the admitted count of a pod set; ok is false when the
// admission names none (the whole pod set was admitted).
func (v View) Assigned(podSet string) (count int32, ok bool) {
	if v.Admission == nil {
		return 0, false
	}
	for _, a := range v.Admission.PodSetAssignments {
		if a.Name == podSet && a.Count != nil {
			return *a.Count, true
		}
	}
	return 0, false
}

// Flavors are the names of the flavors an admission assigned, each once.
func (a *Admission) Flavors() []string {
	if a == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, ps := range a.PodSetAssignments {
		for _, f := range ps.Flavors {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// ToUnstructured is w as the dynamic client writes it.
func ToUnstructured(w *Workload) (*unstructured.Unstructured, error) {
	w.APIVersion, w.Kind = Group+"/"+Version, WorkloadKind
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(w)
	if err != nil {
		return nil, fmt.Errorf("encode Workload %s: %w", w.Name, err)
	}
	u := &unstructured.Unstructured{Object: obj}
	// An empty status is not the Workload's to set, and a null
	// creationTimestamp (how Go encodes a zero one) is a field the
	// schema does not know in a pod set's template.
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	if sets, ok, _ := unstructured.NestedSlice(u.Object, "spec", "podSets"); ok {
		for _, ps := range sets {
			if m, ok := ps.(map[string]any); ok {
				unstructured.RemoveNestedField(m, "template", "metadata", "creationTimestamp")
			}
		}
		_ = unstructured.SetNestedSlice(u.Object, sets, "spec", "podSets")
	}
	return u, nil
}
