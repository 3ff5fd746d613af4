package submit

import (
	"encoding/json"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// sparkEnv are the driver container's variables Spark's submission steps
// set themselves (BasicDriverFeatureStep, LocalDirsFeatureStep,
// DriverCommandFeatureStep, the conf volume): a template entry would only
// duplicate them.
var sparkEnv = []string{
	"SPARK_USER",
	spark.EnvApplicationID,
	spark.EnvDriverBindAddress,
	spark.EnvLocalDirs,
	spark.EnvConfDir,
	spark.EnvPySparkPython,
	spark.EnvPySparkDriverPython,
}

// sparkPorts are the driver container's ports BasicDriverFeatureStep adds.
var sparkPorts = []string{spark.DriverPortName, spark.BlockManagerPortName, spark.UIPortName}

// DriverTemplate is the driver pod template for spark-submit: the pod the
// native launcher builds, less what Spark's submission steps add or
// overwrite, so that the pod spark-submit creates has the body's pod
// fields (volumes, tolerations, affinity, sidecars, security contexts,
// ...) as a native driver has them, and nothing twice. It keeps the
// Workflow as owner (Spark keeps a template's metadata) and drops:
//   - the name, namespace, labels and annotations: the conf carries them
//     (Args);
//   - the Spark container's image, pull policy, arguments, Spark's three
//     ports, and the variables Spark sets (sparkEnv, the
//     spark.kubernetes.driverEnv.* and secretKeyRef ones);
//   - the conf and executor-template volumes (spark-submit mounts its
//     own), the secret volumes of spark.kubernetes.driver.secrets.*, and
//     the scratch volumes sparkplug added (Spark adds its own; the body's
//     own spark-local-dir-* volumes stay, and Spark uses them);
//   - the image pull secrets of the conf, which Spark adds.
func DriverTemplate(driver *corev1.Pod, s *spec.SparkApplicationSpec, conf map[string]string) *corev1.Pod {
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{OwnerReferences: slices.Clone(driver.OwnerReferences)},
		Spec:       *driver.Spec.DeepCopy(),
	}

	dropEnv := slices.Clone(sparkEnv)
	for _, prefix := range []string{spark.ConfDriverEnvPrefix, spark.ConfDriverSecretKeyRefPrefix} {
		for k := range withPrefix(conf, prefix) {
			dropEnv = append(dropEnv, k)
		}
	}
	secrets := withPrefix(conf, spark.ConfDriverSecretsPrefix)
	own := map[string]bool{}
	for _, v := range s.Volumes {
		own[v.Name] = true
	}
	i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == spark.DriverContainerName })
	var ctr *corev1.Container
	if i >= 0 {
		ctr = &pod.Spec.Containers[i]
	}
	dropVolume := map[string]bool{spark.ConfVolumeName: true, spark.PodTemplateVolumeName: true}
	for _, v := range pod.Spec.Volumes {
		switch {
		case strings.HasPrefix(v.Name, "spark-local-dir-") && !own[v.Name]:
			dropVolume[v.Name] = true
		case v.Secret != nil && ctr != nil:
			if path, ok := secrets[v.Secret.SecretName]; ok && mountedAt(ctr, v.Name, path) {
				dropVolume[v.Name] = true
			}
		}
	}
	pod.Spec.Volumes = slices.DeleteFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return dropVolume[v.Name] })

	if ctr != nil {
		ctr.Image, ctr.ImagePullPolicy, ctr.Args = "", "", nil
		ctr.Ports = slices.DeleteFunc(ctr.Ports, func(p corev1.ContainerPort) bool { return slices.Contains(sparkPorts, p.Name) })
		ctr.Env = slices.DeleteFunc(ctr.Env, func(e corev1.EnvVar) bool { return slices.Contains(dropEnv, e.Name) })
		ctr.VolumeMounts = slices.DeleteFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return dropVolume[m.Name] })
		if len(ctr.Ports) == 0 {
			ctr.Ports = nil
		}
		if len(ctr.Env) == 0 {
			ctr.Env = nil
		}
	}
	pullSecrets := strings.Split(conf[spark.ConfContainerImagePullSecrets], ",")
	pod.Spec.ImagePullSecrets = slices.DeleteFunc(pod.Spec.ImagePullSecrets, func(r corev1.LocalObjectReference) bool {
		return slices.ContainsFunc(pullSecrets, func(n string) bool { return strings.TrimSpace(n) == r.Name })
	})
	if len(pod.Spec.ImagePullSecrets) == 0 {
		pod.Spec.ImagePullSecrets = nil
	}
	return pod
}

func mountedAt(c *corev1.Container, volume, path string) bool {
	return slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == volume && m.MountPath == path })
}

// withPrefix returns the entries of c under prefix, with the prefix
// removed.
func withPrefix(c map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range c {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" {
			out[rest] = v
		}
	}
	return out
}

// podYAML encodes a pod template without the fields a template never has.
func podYAML(p *corev1.Pod) ([]byte, error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	return yaml.Marshal(m)
}
