package objects

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// executorTemplate is the executor pod template: the executor fields Spark
// has no conf key for, applied as the Spark operator's webhook applies them
// to executor pods. The driver reads it when it creates each executor and
// lays its own settings (image, resources, labels, env, owner) over it.
func (b *Builder) executorTemplate(s *spec.SparkApplicationSpec, n Names, c map[string]string) (*corev1.Pod, error) {
	e := &s.Executor
	pod, err := podBase(b.executor, e.Template, spark.ExecutorContainerName)
	if err != nil {
		return nil, fmt.Errorf("executor.template: %w", err)
	}
	pod.APIVersion, pod.Kind = "v1", "Pod"
	ctr := &pod.Spec.Containers[containerIndex(pod, spark.ExecutorContainerName)]
	if err := podFields(pod, ctr, s, &e.SparkPodSpec); err != nil {
		return nil, fmt.Errorf("executor: %w", err)
	}
	mountMetricsConf(pod, ctr, s, n)
	for _, v := range e.Env {
		setEnv(ctr, v)
	}
	ctr.Ports = append(ctr.Ports, containerPorts(e.Ports)...)
	if s.Monitoring != nil && s.Monitoring.Prometheus != nil && s.Monitoring.ExposeExecutorMetrics {
		ctr.Ports = append(ctr.Ports, prometheusPort(s.Monitoring))
	}
	if g := e.GPU; g != nil && g.Name != "" && g.Quantity > 0 {
		// Spark adds its cpu and memory to the template's resources and
		// keeps other limits.
		if ctr.Resources.Limits == nil {
			ctr.Resources.Limits = corev1.ResourceList{}
		}
		ctr.Resources.Limits[corev1.ResourceName(g.Name)] = *resource.NewQuantity(g.Quantity, resource.DecimalSI)
	}
	if e.Lifecycle != nil {
		ctr.Lifecycle = e.Lifecycle.DeepCopy()
	}
	if e.PriorityClassName != nil && *e.PriorityClassName != "" {
		pod.Spec.PriorityClassName = *e.PriorityClassName
		pod.Spec.Priority = nil
	}
	pod.Spec.NodeSelector = merged(pod.Spec.NodeSelector, e.NodeSelector)
	if len(pod.Spec.NodeSelector) == 0 {
		pod.Spec.NodeSelector = nil
	}
	if err := batchScheduling(pod, s, &e.SparkPodSpec, spark.RoleExecutor, c); err != nil {
		return nil, err
	}
	addSidecars(pod, &e.SparkPodSpec)
	return pod, nil
}

// podFields applies the fields the driver and the executors have in common
// and Spark has no conf key for, with the Spark operator's semantics: lists
// (tolerations, host aliases, init containers, sidecars, envFrom) are
// appended, single values (affinity, security contexts, scheduler, DNS,
// grace period, runtime class) replace the skeleton's. Sidecars are added
// by addSidecars, last.
func podFields(pod *corev1.Pod, ctr *corev1.Container, s *spec.SparkApplicationSpec, ps *spec.SparkPodSpec) error {
	volumes := map[string]corev1.Volume{}
	for _, v := range s.Volumes {
		volumes[v.Name] = v
	}
	for i, m := range ps.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			return fmt.Errorf("volumeMounts[%d]: no volume named %q in spark.volumes", i, m.Name)
		}
		addVolume(pod, ctr, *v.DeepCopy(), m)
	}
	for _, cm := range ps.ConfigMaps {
		name := volumeName(cm.Name, "-vol")
		addVolume(pod, ctr, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name},
		}}}, corev1.VolumeMount{Name: name, MountPath: cm.Path, ReadOnly: true})
	}
	if s.SparkConfigMap != nil && *s.SparkConfigMap != "" {
		addVolume(pod, ctr, corev1.Volume{Name: spark.SparkConfigMapVolumeName, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: *s.SparkConfigMap},
		}}}, corev1.VolumeMount{Name: spark.SparkConfigMapVolumeName, MountPath: spark.SparkConfigMapDir, ReadOnly: true})
		setEnv(ctr, corev1.EnvVar{Name: spark.EnvConfDir, Value: spark.SparkConfigMapDir})
	}
	if s.HadoopConfigMap != nil && *s.HadoopConfigMap != "" {
		addVolume(pod, ctr, corev1.Volume{Name: spark.HadoopConfigMapVolumeName, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: *s.HadoopConfigMap},
		}}}, corev1.VolumeMount{Name: spark.HadoopConfigMapVolumeName, MountPath: spark.HadoopConfDir, ReadOnly: true})
		setEnv(ctr, corev1.EnvVar{Name: spark.EnvHadoopConfDir, Value: spark.HadoopConfDir})
	}
	for _, e := range ps.EnvFrom {
		ctr.EnvFrom = append(ctr.EnvFrom, *e.DeepCopy())
	}
	if ps.SecurityContext != nil {
		ctr.SecurityContext = ps.SecurityContext.DeepCopy()
	}

	spec := &pod.Spec
	if ps.Affinity != nil {
		spec.Affinity = ps.Affinity.DeepCopy()
	}
	for _, t := range ps.Tolerations {
		spec.Tolerations = append(spec.Tolerations, *t.DeepCopy())
	}
	if ps.PodSecurityContext != nil {
		spec.SecurityContext = ps.PodSecurityContext.DeepCopy()
	}
	if ps.SchedulerName != nil && *ps.SchedulerName != "" {
		spec.SchedulerName = *ps.SchedulerName
	}
	if ps.TerminationGracePeriodSeconds != nil {
		spec.TerminationGracePeriodSeconds = ptr.To(*ps.TerminationGracePeriodSeconds)
	}
	if ptr.Deref(ps.HostNetwork, false) {
		spec.HostNetwork = true
		spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	}
	if ps.DNSConfig != nil {
		spec.DNSConfig = ps.DNSConfig.DeepCopy()
	}
	for _, h := range ps.HostAliases {
		spec.HostAliases = append(spec.HostAliases, *h.DeepCopy())
	}
	if ptr.Deref(ps.ShareProcessNamespace, false) {
		spec.ShareProcessNamespace = ptr.To(true)
	}
	if ps.RuntimeClassName != nil && *ps.RuntimeClassName != "" {
		spec.RuntimeClassName = ptr.To(*ps.RuntimeClassName)
	}
	for _, c := range ps.InitContainers {
		if !slices.ContainsFunc(spec.InitContainers, func(x corev1.Container) bool { return x.Name == c.Name }) {
			spec.InitContainers = append(spec.InitContainers, *c.DeepCopy())
		}
	}
	return nil
}

// addSidecars appends the body's sidecars after the Spark container,
// skipping names the pod already has. It comes last because appending to
// the containers may move them, and with them the Spark container the
// other steps hold a pointer to.
func addSidecars(pod *corev1.Pod, ps *spec.SparkPodSpec) {
	for _, c := range ps.Sidecars {
		if !slices.ContainsFunc(pod.Spec.Containers, func(x corev1.Container) bool { return x.Name == c.Name }) {
			pod.Spec.Containers = append(pod.Spec.Containers, *c.DeepCopy())
		}
	}
}

// addVolume adds v to the pod unless a volume of that name is there, and
// mounts it in ctr.
func addVolume(pod *corev1.Pod, ctr *corev1.Container, v corev1.Volume, m corev1.VolumeMount) {
	if !slices.ContainsFunc(pod.Spec.Volumes, func(x corev1.Volume) bool { return x.Name == v.Name }) {
		pod.Spec.Volumes = append(pod.Spec.Volumes, v)
	}
	ctr.VolumeMounts = append(ctr.VolumeMounts, m)
}

// setEnv sets an environment variable: a later value replaces an earlier
// one of the same name in place, so the container has each name once.
func setEnv(ctr *corev1.Container, e corev1.EnvVar) {
	e = *e.DeepCopy()
	for i := range ctr.Env {
		if ctr.Env[i].Name == e.Name {
			ctr.Env[i] = e
			return
		}
	}
	ctr.Env = append(ctr.Env, e)
}

func hasEnv(ctr *corev1.Container, name string) bool {
	return slices.ContainsFunc(ctr.Env, func(e corev1.EnvVar) bool { return e.Name == name })
}

func containerIndex(pod *corev1.Pod, name string) int {
	return slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == name })
}

func containerPorts(ports []spec.Port) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, p := range ports {
		out = append(out, corev1.ContainerPort{Name: p.Name, ContainerPort: p.ContainerPort, Protocol: corev1.Protocol(p.Protocol)})
	}
	return out
}

// volumeName is base+suffix when that is a valid volume name (a DNS-1123
// label); otherwise a cleaned, shortened base, a hash of it, and the suffix,
// so that two long names stay apart.
func volumeName(base, suffix string) string {
	if name := base + suffix; len(validation.IsDNS1123Label(name)) == 0 {
		return name
	}
	clean := sanitize(base, validation.DNS1123LabelMaxLength-len(suffix)-1-nameHashChars, false)
	if clean == "" {
		clean = "vol"
	}
	return clean + "-" + hexSum(base)[:nameHashChars] + suffix
}

// merged returns the union of maps, later ones winning; never nil.
func merged(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}
