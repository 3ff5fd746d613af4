package scope

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"

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
//   - of the Workflow, all but its shutdown, phase, message, times, node
//     statuses (decompressed, when Argo compressed them) and artifact
//     repository: its templates and the copies Argo stores of them
//     (storedTemplates, storedWorkflowTemplateSpec) are Argo's, and the
//     TaskSet holds each node's template.
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
		// A Workflow over Argo's size limit (1 MiB: some 800 nodes) keeps
		// its nodes gzipped in compressedNodes; sparkplug reads them (a
		// loop child's result must be JSON, and only its node says it is
		// one).
		// An undecodable one (never seen) leaves the nodes unknown, as
		// Argo's node status offloading does: an informer's transform
		// must not fail, or the watch stops taking updates.
		_ = decompressNodes(o)
		o.Spec = wfv1.WorkflowSpec{Shutdown: o.Spec.Shutdown}
		o.Status = wfv1.WorkflowStatus{
			Phase: o.Status.Phase, Message: o.Status.Message,
			StartedAt: o.Status.StartedAt, FinishedAt: o.Status.FinishedAt,
			Nodes: o.Status.Nodes, ArtifactRepositoryRef: o.Status.ArtifactRepositoryRef,
		}
	}
	return obj, nil
}

// maxNodesJSON bounds what decompressNodes inflates: Argo compresses a
// Workflow whose JSON is over 1 MiB, so its nodes' JSON is some MiB.
const maxNodesJSON = 64 << 20

// decompressNodes fills a Workflow's node statuses from compressedNodes
// (base64 of gzipped JSON, Argo's workflow/packer), when Argo compressed
// them. Argo's own decoder needs a gzip library of its own; the standard
// one reads the same format.
func decompressNodes(wf *wfv1.Workflow) error {
	if len(wf.Status.Nodes) > 0 || wf.Status.CompressedNodes == "" {
		return nil
	}
	gz, err := base64.StdEncoding.DecodeString(wf.Status.CompressedNodes)
	if err != nil {
		return err
	}
	r, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return err
	}
	defer r.Close()
	js, err := io.ReadAll(io.LimitReader(r, maxNodesJSON+1))
	if err != nil {
		return err
	}
	if len(js) > maxNodesJSON {
		return fmt.Errorf("over %d MiB", maxNodesJSON>>20)
	}
	if err := json.Unmarshal(js, &wf.Status.Nodes); err != nil {
		return err
	}
	wf.Status.CompressedNodes = ""
	return nil
}
