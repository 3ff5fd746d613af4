package scope

import (
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/sparkplug-io/sparkplug/plugin/kueue"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// slim is what the caches keep of an object, which is what sparkplug
// reads of it; a sidecar may follow a thousand drivers. Dropped:
//   - every object's managedFields, the server-side apply bookkeeping
//     (a driver pod's is written by the API server, the scheduler and
//     kubelet): a good part of each;
//   - of a pod's spec, all but its containers' names, by which its
//     container statuses are read, and the names of the ConfigMaps its
//     volumes mount, by which a driver's own is found again (its name was
//     drawn at launch: objects.ConfigMapOf): its status and metadata say
//     what it did (most of a driver pod is its spec: environment, volumes,
//     resources);
//   - a ConfigMap's data: driver ConfigMaps and tombstones are told by
//     their labels and annotations, and their data (spark.properties, pod
//     templates) is never read back;
//   - of the Workflow, all but its shutdown, phase, times, artifact
//     repository and the little a pass reads of its plugin nodes
//     (slimWorkflow, nodes.go): its templates and the copies Argo stores
//     of them (storedTemplates, storedWorkflowTemplateSpec) are Argo's,
//     the TaskSet holds each node's template, and its other nodes are
//     none of sparkplug's business.
//
// It changes obj in place: the informers hand it objects fresh from the
// API server, Wrote a copy of its own.
func slim(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	switch o := obj.(type) {
	case *corev1.Pod:
		names := make([]corev1.Container, len(o.Spec.Containers))
		for i, c := range o.Spec.Containers {
			names[i] = corev1.Container{Name: c.Name}
		}
		var confs []corev1.Volume
		for _, v := range o.Spec.Volumes {
			if v.ConfigMap != nil {
				confs = append(confs, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{
					ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: v.ConfigMap.LocalObjectReference}}})
			}
		}
		o.Spec = corev1.PodSpec{Containers: names, Volumes: confs}
	case *corev1.ConfigMap:
		o.Data, o.BinaryData = nil, nil
	case *unstructured.Unstructured:
		if o.GetKind() == kueue.WorkloadKind {
			// A pass reads a Workload's queue, conditions and admission,
			// never its pod templates (most of its size).
			unstructured.RemoveNestedField(o.Object, "spec", "podSets")
		}
	case *wfv1.Workflow:
		slimWorkflow(o)
	}
	return obj, nil
}

// slimWorkflow keeps of a Workflow what a pass reads: its shutdown,
// phase and times, artifact repository, and of its nodes those
// nodes.go keeps. A Workflow without a plugin node (none of its steps is
// a Spark step) keeps only its name, uid and the fields that say it
// ended; one whose nodes are refused keeps none, and says why
// (AnnotationRefused).
//
// Nodes Argo offloaded to its database stay unknown, as an undecodable
// compressedNodes once did: an informer's transform must not fail, or
// the watch stops taking updates.
func slimWorkflow(o *wfv1.Workflow) {
	// Only this transform says a Workflow is refused, not its author.
	delete(o.Annotations, AnnotationRefused)
	var (
		nodes wfv1.Nodes
		err   error
	)
	if o.Status.CompressedNodes != "" && len(o.Status.Nodes) == 0 {
		nodes, err = readCompressed(o.Status.CompressedNodes)
	} else {
		nodes, err = keptOf(o.Status.Nodes)
	}
	o.Spec = wfv1.WorkflowSpec{Shutdown: o.Spec.Shutdown}
	status := wfv1.WorkflowStatus{Phase: o.Status.Phase, StartedAt: o.Status.StartedAt, FinishedAt: o.Status.FinishedAt}
	switch {
	case err != nil:
		if o.Annotations == nil {
			o.Annotations = map[string]string{}
		}
		o.Annotations[AnnotationRefused] = err.Error()
		status.ArtifactRepositoryRef = o.Status.ArtifactRepositoryRef
	case len(nodes) == 0 && o.Status.OffloadNodeStatusVersion == "":
		// No Spark step: what says it ended, which the sweeps of a
		// workflow whose nodes are not listed yet read.
		o.ObjectMeta = metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, UID: o.UID,
			ResourceVersion: o.ResourceVersion, CreationTimestamp: o.CreationTimestamp, DeletionTimestamp: o.DeletionTimestamp}
	default:
		status.Nodes = nodes
		status.ArtifactRepositoryRef = o.Status.ArtifactRepositoryRef
	}
	o.Status = status
}
