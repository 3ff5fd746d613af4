package main

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/sparkconf"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Spark's words that plugin/spark does not name: executor labels, env and
// defaults of BasicExecutorFeatureStep and ExecutorPodsAllocator.
const (
	labelResourceProfileID  = "spark-exec-resourceprofile-id"
	defaultBlockManagerPort = 7079
	localDirVolumePrefix    = "spark-local-dir-"
)

// executorPod is the pod Spark's allocator creates for executor id, as
// KubernetesExecutorBuilder builds it from the conf (with
// BasicExecutorFeatureStep, ExecutorKubernetesCredentialsFeatureStep and
// LocalDirsFeatureStep): the template's pod when
// spark.kubernetes.executor.podTemplateFile names one (tmpl), its Spark
// container chosen by spark.kubernetes.executor.podTemplateContainerName or
// else the first; Spark's name, labels (spark.kubernetes.executor.label.*
// first, Spark's own win and may not be set by the user), annotations,
// image, resources, env, port and arguments laid over it; and the driver
// pod as controller when spark.kubernetes.driver.pod.name named one.
func executorPod(conf map[string]string, driver, tmpl *corev1.Pod, id int, sparkUser string) (*corev1.Pod, error) {
	execID := strconv.Itoa(id)
	appID := conf[spark.ConfAppID]
	if appID == "" {
		return nil, fmt.Errorf("no %s", spark.ConfAppID)
	}
	image := valueOr(conf[spark.ConfExecutorContainerImage], conf[spark.ConfContainerImage])
	if image == "" {
		return nil, fmt.Errorf("must specify the executor container image")
	}
	prefix := conf[spark.ConfExecutorPodNamePrefix]
	if prefix == "" && driver != nil {
		prefix = strings.TrimSuffix(driver.Name, "-driver")
	}
	if prefix == "" {
		return nil, fmt.Errorf("no %s", spark.ConfExecutorPodNamePrefix)
	}
	memMiB, err := sparkconf.ExecutorMemoryMiB(conf)
	if err != nil {
		return nil, err
	}
	cores := valueOr(conf[spark.ConfExecutorCores], "1")
	cpuRequest, err := resource.ParseQuantity(valueOr(conf[spark.ConfExecutorRequestCores], cores))
	if err != nil {
		return nil, fmt.Errorf("executor cpu request: %w", err)
	}

	pod := &corev1.Pod{}
	if tmpl != nil {
		pod = tmpl.DeepCopy()
	}
	pod.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	ctr, others := sparkContainer(pod, conf[spark.ConfExecutorPodTemplateContName])

	name := prefix + "-exec-" + execID
	pod.Name = name
	labels := substituted(withPrefix(conf, spark.ConfExecutorLabelPrefix), appID, execID)
	preset := map[string]string{
		spark.LabelAppSelector: appID,
		spark.LabelRole:        spark.RoleExecutor,
		spark.LabelExecID:      execID,
		labelResourceProfileID: "0",
	}
	if driver != nil {
		// spark-app-name and spark-version are computed by the same
		// spark-submit that labelled the driver.
		for _, k := range []string{spark.LabelAppName, spark.LabelVersion} {
			if v, ok := driver.Labels[k]; ok {
				preset[k] = v
			}
		}
	}
	for k := range preset {
		if _, ok := labels[k]; ok {
			return nil, fmt.Errorf("custom executor labels cannot contain %s as it is reserved for Spark", k)
		}
	}
	pod.Labels = merged(pod.Labels, labels, preset)
	pod.Annotations = merged(pod.Annotations, substituted(withPrefix(conf, spark.ConfExecutorAnnotationPrefix), appID, execID))
	if len(pod.Annotations) == 0 {
		pod.Annotations = nil
	}
	if driver != nil {
		pod.OwnerReferences = append(pod.OwnerReferences, metav1.OwnerReference{
			APIVersion: "v1", Kind: "Pod", Name: driver.Name, UID: driver.UID, Controller: ptrTo(true),
		})
	}

	ctr.Image = image
	ctr.ImagePullPolicy = corev1.PullPolicy(valueOr(conf[spark.ConfContainerImagePullPolicy], string(corev1.PullIfNotPresent)))
	mem := *resource.NewQuantity(memMiB<<20, resource.BinarySI)
	ctr.Resources.Requests = merged(ctr.Resources.Requests, corev1.ResourceList{corev1.ResourceMemory: mem, corev1.ResourceCPU: cpuRequest})
	ctr.Resources.Limits = merged(ctr.Resources.Limits, corev1.ResourceList{corev1.ResourceMemory: mem})
	if l := conf[spark.ConfExecutorLimitCores]; l != "" {
		q, err := resource.ParseQuantity(l)
		if err != nil {
			return nil, fmt.Errorf("executor cpu limit: %w", err)
		}
		ctr.Resources.Limits[corev1.ResourceCPU] = q
	}
	driverPort := valueOr(conf[spark.ConfDriverPort], strconv.Itoa(spark.DriverPort))
	env := []corev1.EnvVar{
		{Name: "SPARK_USER", Value: sparkUser},
		{Name: "SPARK_DRIVER_URL", Value: "spark://CoarseGrainedScheduler@" + joinHostPort(conf[spark.ConfDriverHost], driverPort)},
		{Name: "SPARK_EXECUTOR_CORES", Value: cores},
		{Name: "SPARK_EXECUTOR_MEMORY", Value: valueOr(conf[spark.ConfExecutorMemory], "1g")},
		{Name: spark.EnvApplicationID, Value: appID},
		{Name: spark.EnvConfDir, Value: spark.ConfDir},
		{Name: "SPARK_EXECUTOR_ID", Value: execID},
		{Name: "SPARK_RESOURCE_PROFILE_ID", Value: "0"},
	}
	executorEnv := withPrefix(conf, spark.ConfExecutorEnvPrefix)
	for _, k := range slices.Sorted(maps.Keys(executorEnv)) {
		env = append(env, corev1.EnvVar{Name: k, Value: executorEnv[k]})
	}
	env = append(env,
		corev1.EnvVar{Name: "SPARK_EXECUTOR_POD_IP", ValueFrom: fieldRef("status.podIP")},
		corev1.EnvVar{Name: "SPARK_EXECUTOR_POD_NAME", ValueFrom: fieldRef("metadata.name")},
		corev1.EnvVar{Name: spark.EnvLocalDirs, Value: localDirs(pod, ctr)},
	)
	for _, e := range env {
		setEnv(ctr, e)
	}
	blockManagerPort := valueOr(conf[spark.ConfBlockManagerPortAll], strconv.Itoa(defaultBlockManagerPort))
	port, err := strconv.Atoi(blockManagerPort)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: %w", spark.ConfBlockManagerPortAll, blockManagerPort, err)
	}
	if port != 0 && !slices.ContainsFunc(ctr.Ports, func(p corev1.ContainerPort) bool { return p.Name == spark.BlockManagerPortName }) {
		ctr.Ports = append(ctr.Ports, corev1.ContainerPort{Name: spark.BlockManagerPortName, ContainerPort: int32(port), Protocol: corev1.ProtocolTCP})
	}
	ctr.Args = append(ctr.Args, "executor")

	s := &pod.Spec
	s.Hostname = hostname(name)
	s.RestartPolicy = corev1.RestartPolicyNever
	s.NodeSelector = merged(s.NodeSelector, withPrefix(conf, spark.ConfNodeSelectorPrefix), withPrefix(conf, spark.ConfExecutorNodeSelectorPrefix))
	if len(s.NodeSelector) == 0 {
		s.NodeSelector = nil
	}
	for _, n := range strings.Split(conf[spark.ConfContainerImagePullSecrets], ",") {
		if n = strings.TrimSpace(n); n != "" {
			s.ImagePullSecrets = append(s.ImagePullSecrets, corev1.LocalObjectReference{Name: n})
		}
	}
	if sa := conf[spark.ConfExecutorServiceAccount]; sa != "" {
		s.ServiceAccountName = sa
	} else if s.ServiceAccountName == "" && driver != nil {
		s.ServiceAccountName = driver.Spec.ServiceAccountName
	}
	if n := valueOr(conf[spark.ConfExecutorSchedulerName], conf[spark.ConfSchedulerName]); n != "" {
		s.SchedulerName = n
	}
	// The Spark container goes last, after the template's others.
	s.Containers = append(others, *ctr)
	return pod, nil
}

// sparkContainer splits the template's containers into the Spark one
// (named name, else the first, else a new one), named
// spark-kubernetes-executor when the template leaves it unnamed, and the
// others.
func sparkContainer(pod *corev1.Pod, name string) (*corev1.Container, []corev1.Container) {
	ctrs := pod.Spec.Containers
	i := slices.IndexFunc(ctrs, func(c corev1.Container) bool { return name != "" && c.Name == name })
	if i < 0 && len(ctrs) > 0 {
		i = 0
	}
	if i < 0 {
		return &corev1.Container{Name: spark.ExecutorContainerName}, nil
	}
	ctr := ctrs[i].DeepCopy()
	if ctr.Name == "" {
		ctr.Name = spark.ExecutorContainerName
	}
	return ctr, slices.Delete(slices.Clone(ctrs), i, i+1)
}

// localDirs returns SPARK_LOCAL_DIRS as LocalDirsFeatureStep sets it: the
// mount paths of the template's spark-local-dir-* volumes, or else one
// emptyDir it adds at /var/data/spark-local-dir-1.
func localDirs(pod *corev1.Pod, ctr *corev1.Container) string {
	var paths []string
	for _, m := range ctr.VolumeMounts {
		if strings.HasPrefix(m.Name, localDirVolumePrefix) {
			paths = append(paths, m.MountPath)
		}
	}
	if len(paths) > 0 {
		return strings.Join(paths, ",")
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: spark.LocalDirVolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: spark.LocalDirVolumeName, MountPath: spark.LocalDirPath})
	return spark.LocalDirPath
}

// readTemplate decodes a pod template file (a Pod in YAML or JSON), as
// KubernetesUtils.loadPodFromTemplate does.
func readTemplate(b []byte) (*corev1.Pod, error) {
	var pod corev1.Pod
	if err := yaml.Unmarshal(b, &pod); err != nil {
		return nil, fmt.Errorf("pod template: %w", err)
	}
	return &pod, nil
}

var nonWordStart = regexp.MustCompile(`^[^\w]+`)
var unsafeHostname = regexp.MustCompile(`[^\w-]+`)

// hostname is the last 63 characters of the pod name, made a hostname as
// BasicExecutorFeatureStep does.
func hostname(name string) string {
	h := name[max(0, len(name)-63):]
	h = nonWordStart.ReplaceAllString(h, "")
	return unsafeHostname.ReplaceAllString(h, "_")
}

func joinHostPort(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

func fieldRef(path string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}
}

// setEnv sets e in ctr, replacing a variable of the same name.
func setEnv(ctr *corev1.Container, e corev1.EnvVar) {
	if i := slices.IndexFunc(ctr.Env, func(x corev1.EnvVar) bool { return x.Name == e.Name }); i >= 0 {
		ctr.Env[i] = e
		return
	}
	ctr.Env = append(ctr.Env, e)
}

// substituted replaces {{APP_ID}} and {{EXECUTOR_ID}} in the values, as
// Utils.substituteAppNExecIds does.
func substituted(m map[string]string, appID, execID string) map[string]string {
	for k, v := range m {
		m[k] = strings.NewReplacer("{{APP_ID}}", appID, "{{EXECUTOR_ID}}", execID).Replace(v)
	}
	return m
}

// withPrefix returns the conf entries under prefix, keyed by the rest.
func withPrefix(conf map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range conf {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" {
			out[rest] = v
		}
	}
	return out
}

func merged[M ~map[K]V, K comparable, V any](ms ...M) M {
	out := M{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}

func valueOr(v, def string) string {
	if v != "" {
		return v
	}
	return def
}

func ptrTo[T any](v T) *T { return &v }
