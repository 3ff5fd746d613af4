package driverpod

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Attempt is the restart-policy attempt of a driver pod (or of an object
// whose labels a pod was made of): its sparkplug.io/attempt label, 1 when
// it is missing or not a positive number.
func Attempt(p *corev1.Pod) int {
	n, err := strconv.Atoi(p.Labels[spark.LabelAttempt])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// Finished reports whether a driver pod has stopped or is stopping.
func Finished(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return true
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == spark.DriverContainerName && cs.State.Terminated != nil {
			return true
		}
	}
	return false
}

// EndedAt is when the driver's attempt ended: its container's finish time,
// else the time the pod was marked for deletion, else now.
func EndedAt(p *corev1.Pod, now time.Time) time.Time {
	var latest time.Time
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.FinishedAt.After(latest) {
			latest = t.FinishedAt.Time
		}
	}
	if !latest.IsZero() {
		return latest
	}
	if p.DeletionTimestamp != nil {
		return p.DeletionTimestamp.Time
	}
	return now
}

// Expired reports whether a driver pod finished more than its time to
// live (the sparkplug.io/ttl-seconds annotation) ago. A pod being deleted
// is not expired: it is already going.
func Expired(p *corev1.Pod, now time.Time) bool {
	ttl, err := strconv.ParseInt(p.Annotations[spark.AnnotationTTLSeconds], 10, 64)
	if err != nil || p.Labels[spark.LabelRole] != spark.RoleDriver || p.DeletionTimestamp != nil || !Finished(p) {
		return false
	}
	return !now.Before(EndedAt(p, now).Add(time.Duration(ttl) * time.Second))
}

// Labels alone never make a run. Anyone who may label a pod can copy
// sparkplug's labels onto it (an Argo template's metadata.labels land on
// its pod), so a driver pod, or a tombstone ConfigMap, is a run of a
// workflow's node only if it has the name sparkplug gives that node's
// attempt (objects.NamesFor: a hash of the workflow's uid and the node) and
// that Workflow owns it. Whoever may create pods in the namespace may
// still act as the plugin's ServiceAccount: the namespace is the trust
// boundary.

// OwnDriver reports whether p is the driver sparkplug made for the node
// and attempt its labels name, in workflow wf.
func OwnDriver(p *corev1.Pod, wf spark.WorkflowRef) bool {
	return Own(p, wf, runNames(p.ObjectMeta, wf).DriverPod)
}

// OwnTomb reports whether cm is the tombstone of the driver sparkplug
// made for the node and attempt its labels name, in workflow wf: the
// ConfigMap sparkplug creates for it (objects.Tombstone), or, from
// versions that re-owned the driver's ConfigMap instead, that one.
func OwnTomb(cm *corev1.ConfigMap, wf spark.WorkflowRef) bool {
	n := runNames(cm.ObjectMeta, wf)
	return Own(cm, wf, n.Tombstone) || Own(cm, wf, n.LegacyConfigMap())
}

// WorkflowOf is the Workflow a driver pod's labels and annotations name:
// the sparkplug.io/workflow-name annotation, the sparkplug.io/workflow-uid
// label, the pod's namespace. OwnDriver(p, WorkflowOf(p)) is whether p is
// sparkplug's driver at all.
func WorkflowOf(p *corev1.Pod) spark.WorkflowRef {
	return spark.WorkflowRef{Name: p.Annotations[spark.AnnotationWorkflowName], Namespace: p.Namespace, UID: p.Labels[spark.LabelWorkflowUID]}
}

// runNames are the names of the run an object's annotations and labels
// say it belongs to.
func runNames(m metav1.ObjectMeta, wf spark.WorkflowRef) objects.Names {
	return objects.NamesFor(objects.Run{Workflow: wf, NodeID: m.Annotations[spark.AnnotationNodeID],
		Attempt: Attempt(&corev1.Pod{ObjectMeta: m}), Incarnation: m.Annotations[spark.AnnotationIncarnation],
		NameKey: m.Annotations[spark.AnnotationNameKey]})
}

// Own reports whether o has the name want and the Workflow wf owns it.
func Own(o metav1.Object, wf spark.WorkflowRef, want string) bool {
	if wf.UID == "" {
		return false
	}
	return NotOurs(o, want, map[string]string{spark.LabelWorkflowUID: wf.UID}, objects.WorkflowOwner(wf)) == nil
}

// runLabels are the labels that tie an object to one run: its workflow,
// node and attempt. The others (template, managed-by) say nothing of
// which run.
var runLabels = []string{spark.LabelWorkflowUID, spark.LabelNode, spark.LabelAttempt}

// NotOurs is the one rule for whether an object sparkplug finds under a
// name it gives (a driver, its ConfigMap and Services, an Ingress, a
// PodGroup, a tombstone) is the run's own: it must have that name, carry
// the run's labels (those of labels that tie an object to a run: workflow
// uid, node, attempt) and be owned by one of owners, the uids sparkplug
// sets on that kind (the driver's, or the Workflow's). Anyone who may
// create such an object may pick the name and copy the labels in advance,
// but not the uid of a driver that does not exist yet; an object that
// fails the rule is never adopted, patched or deleted, and its run's
// attempt fails with this error, which says why it is not the run's. nil:
// it is.
func NotOurs(o metav1.Object, want string, labels map[string]string, owners ...metav1.OwnerReference) error {
	if err := NotTheRunsLabels(o, want, labels); err != nil {
		return err
	}
	for _, ref := range o.GetOwnerReferences() {
		for _, own := range owners {
			if ref.UID != "" && ref.UID == own.UID && ref.Kind == own.Kind {
				return nil
			}
		}
	}
	names := make([]string, len(owners))
	for i, own := range owners {
		names[i] = fmt.Sprintf("%s %s (uid %s)", own.Kind, own.Name, own.UID)
	}
	return fmt.Errorf("it is not owned by %s", strings.Join(names, " or "))
}

// NotTheRunsLabels is the first half of NotOurs, for the one moment an
// object of the run has no owner yet: a driver pod spark-submit has just
// created, before sparkplug adds the Workflow as its owner. It must have
// name want and carry the run's labels (of labels, those that tie an
// object to a run).
func NotTheRunsLabels(o metav1.Object, want string, labels map[string]string) error {
	if o.GetName() != want {
		return fmt.Errorf("its name is not %s", want)
	}
	for _, k := range runLabels {
		if w, ok := labels[k]; ok && o.GetLabels()[k] != w {
			return fmt.Errorf("its label %s is %q, not this run's %q", k, o.GetLabels()[k], w)
		}
	}
	return nil
}

// OwnWorkload reports whether w is the Kueue Workload sparkplug made for
// the node and attempt its labels name, in workflow wf: its name, the
// run's labels, the Workflow its owner.
func OwnWorkload(w metav1.Object, wf spark.WorkflowRef) bool {
	m := metav1.ObjectMeta{Labels: w.GetLabels(), Annotations: w.GetAnnotations()}
	return Own(w, wf, runNames(m, wf).Workload)
}
