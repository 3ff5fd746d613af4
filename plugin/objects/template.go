package objects

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// podBase is the pod a role's Spark settings are laid on, as Spark builds a
// pod from spark.kubernetes.{driver,executor}.podTemplateFile
// (KubernetesUtils.loadPodFromTemplate, then the feature steps):
//
//   - without a template (the body's driver.template or executor.template),
//     the skeleton;
//   - with one, the template is the base. Its Spark container is chosen as
//     Spark's selectSparkContainer chooses it (the one named container,
//     else the first, else a new one), named container (Spark keeps the
//     template's name; sparkplug finds the application's result by this
//     one), and moved after the template's other containers, where Spark
//     adds it back. The skeleton is then laid over it as a strategic merge
//     patch: containers merge by name, maps merge, values the skeleton sets
//     win; an env var, port, mount or volume the skeleton sets replaces the
//     template's of the same name whole (dropReplaced); tolerations, a
//     list without a merge key, are joined rather than replaced.
//
// The caller then applies what Spark derives from the conf and what the
// body's fields set, both of which win over the template, as they do in
// Spark and the Spark operator.
func podBase(skeleton *corev1.Pod, tmpl *corev1.PodTemplateSpec, container string) (*corev1.Pod, error) {
	if tmpl == nil {
		return skeleton.DeepCopy(), nil
	}
	base := &corev1.Pod{ObjectMeta: *tmpl.ObjectMeta.DeepCopy(), Spec: *tmpl.Spec.DeepCopy()}
	i := spec.SparkContainerIndex(base.Spec.Containers, container)
	var ctr corev1.Container
	if i >= 0 {
		ctr = base.Spec.Containers[i]
		base.Spec.Containers = slices.Delete(base.Spec.Containers, i, i+1)
	}
	ctr.Name = container
	base.Spec.Containers = append(base.Spec.Containers, ctr)
	dropReplaced(base, skeleton)

	original, err := json.Marshal(base)
	if err != nil {
		return nil, fmt.Errorf("encode template: %w", err)
	}
	patch, err := json.Marshal(skeleton)
	if err != nil {
		return nil, fmt.Errorf("encode skeleton: %w", err)
	}
	merged, err := strategicpatch.StrategicMergePatch(original, patch, corev1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("lay the skeleton over the template: %w", err)
	}
	var pod corev1.Pod
	if err := json.Unmarshal(merged, &pod); err != nil {
		return nil, fmt.Errorf("decode template: %w", err)
	}
	pod.Spec.Tolerations = slices.Clone(base.Spec.Tolerations)
	for _, t := range skeleton.Spec.Tolerations {
		if !slices.ContainsFunc(pod.Spec.Tolerations, func(x corev1.Toleration) bool { return x.MatchToleration(&t) }) {
			pod.Spec.Tolerations = append(pod.Spec.Tolerations, t)
		}
	}
	pod.TypeMeta = skeleton.TypeMeta
	pod.Status = corev1.PodStatus{}
	return &pod, nil
}

// dropReplaced removes from the template the list items the skeleton sets
// under the same name (environment variables, ports, volume mounts of a
// container of the same name; volumes), so that the skeleton's item
// replaces the template's whole, as Spark's own setting would, instead of
// a field-by-field merge of the two (an env var with both value and
// valueFrom, a volume of two types).
func dropReplaced(base, skeleton *corev1.Pod) {
	for i := range base.Spec.Containers {
		c := &base.Spec.Containers[i]
		j := slices.IndexFunc(skeleton.Spec.Containers, func(s corev1.Container) bool { return s.Name == c.Name })
		if j < 0 {
			continue
		}
		s := &skeleton.Spec.Containers[j]
		c.Env = slices.DeleteFunc(c.Env, func(e corev1.EnvVar) bool {
			return slices.ContainsFunc(s.Env, func(x corev1.EnvVar) bool { return x.Name == e.Name })
		})
		c.Ports = slices.DeleteFunc(c.Ports, func(p corev1.ContainerPort) bool {
			return slices.ContainsFunc(s.Ports, func(x corev1.ContainerPort) bool { return x.ContainerPort == p.ContainerPort })
		})
		c.VolumeMounts = slices.DeleteFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			return slices.ContainsFunc(s.VolumeMounts, func(x corev1.VolumeMount) bool { return x.MountPath == m.MountPath })
		})
	}
	base.Spec.Volumes = slices.DeleteFunc(base.Spec.Volumes, func(v corev1.Volume) bool {
		return slices.ContainsFunc(skeleton.Spec.Volumes, func(x corev1.Volume) bool { return x.Name == v.Name })
	})
}

// mergeResources lays Spark's requests and limits over the template's:
// Spark adds its cpu, memory and custom resources to what the template
// container asks for and keeps the rest (ephemeral storage, devices).
func mergeResources(base, spark corev1.ResourceRequirements) corev1.ResourceRequirements {
	out := *base.DeepCopy()
	for _, l := range []struct {
		dst *corev1.ResourceList
		src corev1.ResourceList
	}{{&out.Requests, spark.Requests}, {&out.Limits, spark.Limits}} {
		if len(l.src) == 0 {
			continue
		}
		if *l.dst == nil {
			*l.dst = corev1.ResourceList{}
		}
		maps.Copy(*l.dst, l.src)
	}
	return out
}
