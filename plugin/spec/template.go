package spec

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// SparkContainerIndex is the index of the Spark container in a pod
// template's containers, chosen as Spark's KubernetesUtils.selectSparkContainer
// chooses it: the container called name, else the first; -1 when there is
// no container (Spark then starts from an empty one).
func SparkContainerIndex(containers []corev1.Container, name string) int {
	if i := slices.IndexFunc(containers, func(c corev1.Container) bool { return c.Name == name }); i >= 0 {
		return i
	}
	if len(containers) > 0 {
		return 0
	}
	return -1
}

// reservedVolumes are the volume names sparkplug and Spark add to Spark
// pods; a template volume of the same name would hide them.
var reservedVolumes = []string{
	spark.ConfVolumeName,
	"spark-conf-volume-exec",
	spark.PodTemplateVolumeName,
	spark.SparkConfigMapVolumeName,
	spark.HadoopConfigMapVolumeName,
	spark.MetricsConfVolumeName,
}

// validateTemplate checks driver.template or executor.template (p is the
// role's path). A template is the base the pod is built on, as Spark uses
// spark.kubernetes.{driver,executor}.podTemplateFile; rejected are the
// parts Spark or sparkplug would silently replace (the pod's identity, the
// Spark container's image, arguments, cpu and memory) and the names that
// would clash with what the body adds.
func validateTemplate(p *field.Path, role string, ps *SparkPodSpec, volumes map[string]bool) field.ErrorList {
	t := ps.Template
	if t == nil {
		return nil
	}
	var errs field.ErrorList
	tp := p.Child("template")
	mp := tp.Child("metadata")
	if t.Name != "" {
		errs = append(errs, field.Forbidden(mp.Child("name"), "sparkplug names Spark's pods (the driver after the workflow node, executors after the driver); remove it"))
	}
	if t.GenerateName != "" {
		errs = append(errs, field.Forbidden(mp.Child("generateName"), "sparkplug names Spark's pods (the driver after the workflow node, executors after the driver); remove it"))
	}
	if t.Namespace != "" {
		errs = append(errs, field.Forbidden(mp.Child("namespace"), "Spark's pods run in the workflow's namespace; remove it"))
	}
	if len(t.OwnerReferences) > 0 {
		errs = append(errs, field.Forbidden(mp.Child("ownerReferences"), "the Workflow owns the driver and the driver its executors, so that they go with it; remove them"))
	}
	errs = append(errs, validateLabels(mp.Child("labels"), t.Labels)...)
	errs = append(errs, validateAnnotations(mp.Child("annotations"), t.Annotations)...)

	sp := tp.Child("spec")
	if rp := t.Spec.RestartPolicy; rp != "" && rp != corev1.RestartPolicyNever {
		errs = append(errs, field.Invalid(sp.Child("restartPolicy"), rp, "Spark's pods never restart (spark.restartPolicy reruns the application); remove it"))
	}

	sparkName := spark.DriverContainerName
	if role == spark.RoleExecutor {
		sparkName = spark.ExecutorContainerName
	}
	sparkIdx := SparkContainerIndex(t.Spec.Containers, sparkName)
	names := map[string]bool{}
	for i, c := range t.Spec.Containers {
		cp := sp.Child("containers").Index(i)
		if i == sparkIdx {
			errs = append(errs, validateSparkContainer(cp, role, c)...)
			continue
		}
		names[c.Name] = true
		errs = append(errs, validateName(cp.Child("name"), c.Name, validation.IsDNS1123Label, "a container name")...)
		if strings.TrimSpace(c.Image) == "" {
			errs = append(errs, field.Required(cp.Child("image"), "give the container image"))
		}
	}
	for i, c := range t.Spec.InitContainers {
		cp := sp.Child("initContainers").Index(i)
		names[c.Name] = true
		errs = append(errs, validateName(cp.Child("name"), c.Name, validation.IsDNS1123Label, "a container name")...)
		if strings.TrimSpace(c.Image) == "" {
			errs = append(errs, field.Required(cp.Child("image"), "give the container image"))
		}
	}
	for _, list := range []struct {
		name       string
		containers []corev1.Container
	}{{"initContainers", ps.InitContainers}, {"sidecars", ps.Sidecars}} {
		for i, c := range list.containers {
			if names[c.Name] {
				errs = append(errs, field.Invalid(p.Child(list.name).Index(i).Child("name"), c.Name, fmt.Sprintf("is also a container of spark.%s.template; rename one", role)))
			}
		}
	}

	for i, v := range t.Spec.Volumes {
		vp := sp.Child("volumes").Index(i).Child("name")
		errs = append(errs, validateName(vp, v.Name, validation.IsDNS1123Label, "a volume name")...)
		switch {
		case slices.Contains(reservedVolumes, v.Name):
			errs = append(errs, field.Forbidden(vp, "is the name of a volume sparkplug adds to Spark's pods; rename it"))
		case volumes[v.Name]:
			errs = append(errs, field.Invalid(vp, v.Name, "is also a volume in spark.volumes; rename one, or mount that one with volumeMounts"))
		}
	}
	return errs
}

// validateSparkContainer rejects what Spark always sets on the Spark
// container of a template, so a template value would be silently lost.
func validateSparkContainer(cp *field.Path, role string, c corev1.Container) field.ErrorList {
	var errs field.ErrorList
	if c.Image != "" {
		errs = append(errs, field.Forbidden(cp.Child("image"), fmt.Sprintf("Spark sets the Spark container's image from spark.image or spark.%s.image; set it there", role)))
	}
	if len(c.Args) > 0 {
		errs = append(errs, field.Forbidden(cp.Child("args"), fmt.Sprintf("Spark sets the Spark container's arguments (%s ...); give the application's in spark.arguments", role)))
	}
	for _, list := range []struct {
		name string
		rl   corev1.ResourceList
	}{{"requests", c.Resources.Requests}, {"limits", c.Resources.Limits}} {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if _, ok := list.rl[r]; ok {
				errs = append(errs, field.Forbidden(cp.Child("resources", list.name).Key(string(r)),
					fmt.Sprintf("Spark sets the Spark container's cpu and memory from spark.%s cores, coreRequest, coreLimit, memory and memoryOverhead; set those", role)))
			}
		}
	}
	return errs
}
