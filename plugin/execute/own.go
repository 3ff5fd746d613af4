package execute

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Labels alone never make a run. Anyone who may label a pod can copy
// sparkplug's labels onto it (an Argo template's metadata.labels land on
// its pod), so a driver pod, or a tombstone ConfigMap, is a run of a
// workflow's node only if it has the name sparkplug gives that node's
// attempt (objects.NamesFor: a hash of the workflow's uid and the node) and
// that Workflow owns it. Whoever may create pods in the namespace may
// still act as the plugin's ServiceAccount: the namespace is the trust
// boundary.

// ownDriver reports whether p is the driver sparkplug made for the node
// and attempt its labels name, in workflow wf.
func ownDriver(p *corev1.Pod, wf spark.WorkflowRef) bool {
	return own(p, wf, runNames(p.ObjectMeta, wf).DriverPod)
}

// ownTomb reports whether cm is the ConfigMap of the driver sparkplug
// made for the node and attempt its labels name, in workflow wf.
func ownTomb(cm *corev1.ConfigMap, wf spark.WorkflowRef) bool {
	return own(cm, wf, runNames(cm.ObjectMeta, wf).ConfigMap)
}

// runNames are the names of the run an object's annotations and labels
// say it belongs to.
func runNames(m metav1.ObjectMeta, wf spark.WorkflowRef) objects.Names {
	return objects.NamesFor(objects.Run{Workflow: wf, NodeID: m.Annotations[spark.AnnotationNodeID],
		Attempt: attemptOf(&corev1.Pod{ObjectMeta: m})})
}

// own: o has the name want and the Workflow wf owns it.
func own(o metav1.Object, wf spark.WorkflowRef, want string) bool {
	if o.GetName() != want || wf.UID == "" {
		return false
	}
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == "Workflow" && string(ref.UID) == wf.UID {
			return true
		}
	}
	return false
}
