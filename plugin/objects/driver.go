package objects

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/confvalue"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// confFileMode is 0644, the mode spark-submit gives the files of its conf
// volume.
const confFileMode int32 = 0o644

// noResource is what spark-submit passes as the primary resource of a JVM
// application whose classes are already on the classpath
// (SparkLauncher.NO_RESOURCE).
const noResource = "spark-internal"

// driverPod builds the driver pod the way spark-submit's driver feature
// steps do from the effective conf c, then applies the body's pod fields
// the way the Spark operator's webhook does: the driverSteps, in order, on
// the pod skeleton.
func (b *Builder) driverPod(s *spec.SparkApplicationSpec, r Run, n Names, c map[string]string) (*corev1.Pod, error) {
	pod, err := podBase(b.driver, s.Driver.Template, spark.DriverContainerName)
	if err != nil {
		return nil, fmt.Errorf("driver.template: %w", err)
	}
	pod.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	d := &driverBuild{pod: pod, ctr: &pod.Spec.Containers[containerIndex(pod, spark.DriverContainerName)], s: s, r: r, n: n, c: c}
	for _, step := range driverSteps {
		if err := step(d); err != nil {
			return nil, err
		}
	}
	return pod, nil
}

// driverBuild is the driver pod being built and what its steps read.
type driverBuild struct {
	pod *corev1.Pod
	ctr *corev1.Container // the driver container
	s   *spec.SparkApplicationSpec
	r   Run
	n   Names
	c   map[string]string // the effective conf
}

// driverSteps build the driver pod, in order; a later step sees what the
// earlier ones did (the body's environment, last, wins).
var driverSteps = []func(*driverBuild) error{
	driverMetadata,
	driverContainer,
	driverEnv,
	driverContainerResources,
	driverVolumes,
	driverPodSpec,
}

// driverMetadata: the user's labels and annotations (Spark substitutes
// {{APP_ID}} in their values), Spark's labels, the Spark operator's
// (operatorLabels), then sparkplug's, and the Workflow as owner.
func driverMetadata(d *driverBuild) error {
	pod, s, r, n, c := d.pod, d.s, d.r, d.n, d.c
	pod.Name = n.DriverPod
	pod.Namespace = r.Workflow.Namespace
	pod.Labels = merged(pod.Labels, substituteAppID(prefixed(c, spark.ConfDriverLabelPrefix), n.AppID))
	pod.Labels[spark.LabelAppSelector] = n.AppID
	pod.Labels[spark.LabelAppName] = appNameLabel(n)
	pod.Labels[spark.LabelRole] = spark.RoleDriver
	if s.SparkVersion != "" {
		pod.Labels[spark.LabelVersion] = s.SparkVersion
	}
	maps.Copy(pod.Labels, operatorLabels(n))
	maps.Copy(pod.Labels, sparkplugLabels(r))
	pod.Annotations = merged(pod.Annotations, substituteAppID(prefixed(c, spark.ConfDriverAnnotationPrefix), n.AppID))
	maps.Copy(pod.Annotations, sparkplugAnnotations(r))
	if s.TimeToLiveSeconds != nil {
		pod.Annotations[spark.AnnotationTTLSeconds] = strconv.FormatInt(*s.TimeToLiveSeconds, 10)
		pod.Labels[spark.LabelTTLSeconds] = strconv.FormatInt(*s.TimeToLiveSeconds, 10)
	}
	pod.OwnerReferences = []metav1.OwnerReference{WorkflowOwner(r.Workflow)}
	return nil
}

// driverContainer: the image, the command line and the ports.
func driverContainer(d *driverBuild) error {
	ctr, s, c := d.ctr, d.s, d.c
	image := valueOr(c[spark.ConfDriverContainerImage], c[spark.ConfContainerImage])
	if image == "" {
		return fmt.Errorf("no image: set spark.image or spark.driver.image")
	}
	ctr.Image = image
	ctr.ImagePullPolicy = corev1.PullPolicy(valueOr(c[spark.ConfContainerImagePullPolicy], string(corev1.PullIfNotPresent)))
	args, err := driverArgs(s)
	if err != nil {
		return err
	}
	ctr.Args = args
	ctr.Ports = append(ctr.Ports,
		corev1.ContainerPort{Name: spark.DriverPortName, ContainerPort: int32(driverPort(c)), Protocol: corev1.ProtocolTCP},
		corev1.ContainerPort{Name: spark.BlockManagerPortName, ContainerPort: int32(blockManagerPort(c)), Protocol: corev1.ProtocolTCP},
		corev1.ContainerPort{Name: spark.UIPortName, ContainerPort: int32(uiPort(c)), Protocol: corev1.ProtocolTCP},
	)
	ctr.Ports = append(ctr.Ports, containerPorts(s.Driver.Ports)...)
	if s.Monitoring != nil && s.Monitoring.Prometheus != nil && s.Monitoring.ExposeDriverMetrics {
		ctr.Ports = append(ctr.Ports, prometheusPort(s.Monitoring))
	}
	return nil
}

// driverEnv: the application id, spark.kubernetes.driverEnv.*, PySpark's
// interpreters and the secrets' keys, as Spark's env feature steps set them.
func driverEnv(d *driverBuild) error {
	ctr, s, n, c := d.ctr, d.s, d.n, d.c
	setEnv(ctr, corev1.EnvVar{Name: spark.EnvApplicationID, Value: n.AppID})
	driverEnv := prefixed(c, spark.ConfDriverEnvPrefix)
	for _, k := range slices.Sorted(maps.Keys(driverEnv)) {
		setEnv(ctr, corev1.EnvVar{Name: k, Value: driverEnv[k]})
	}
	if s.Type == spec.TypePython {
		if py := c[spark.ConfPySparkPython]; py != "" {
			setEnv(ctr, corev1.EnvVar{Name: spark.EnvPySparkPython, Value: py})
		}
		if py := valueOr(c[spark.ConfPySparkDriverPython], c[spark.ConfPySparkPython]); py != "" {
			setEnv(ctr, corev1.EnvVar{Name: spark.EnvPySparkDriverPython, Value: py})
		}
	}
	secretEnv := prefixed(c, spark.ConfDriverSecretKeyRefPrefix)
	for _, k := range slices.Sorted(maps.Keys(secretEnv)) {
		name, key, ok := strings.Cut(secretEnv[k], ":")
		if !ok || name == "" || key == "" {
			return fmt.Errorf("%s%s %q: want <secret name>:<key>", spark.ConfDriverSecretKeyRefPrefix, k, secretEnv[k])
		}
		setEnv(ctr, corev1.EnvVar{Name: k, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key},
		}})
	}
	return nil
}

// driverContainerResources: requests and limits (driverResources), and
// the body's lifecycle hooks.
func driverContainerResources(d *driverBuild) error {
	res, err := driverResources(d.c, &d.s.Driver)
	if err != nil {
		return err
	}
	d.ctr.Resources = mergeResources(d.ctr.Resources, res)
	if d.s.Driver.Lifecycle != nil {
		d.ctr.Lifecycle = d.s.Driver.Lifecycle.DeepCopy()
	}
	return nil
}

// driverVolumes: the run's conf and executor template, the body's
// volumes, ConfigMaps and secrets, then the local dirs; then
// SPARK_CONF_DIR, and the body's environment last: it wins over
// everything derived.
func driverVolumes(d *driverBuild) error {
	pod, ctr, s, n, c := d.pod, d.ctr, d.s, d.n, d.c
	addVolume(pod, ctr, corev1.Volume{Name: spark.ConfVolumeName, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: n.ConfigMap},
		Items:                []corev1.KeyToPath{{Key: spark.PropertiesFile, Path: spark.PropertiesFile, Mode: ptr.To(confFileMode)}},
	}}}, corev1.VolumeMount{Name: spark.ConfVolumeName, MountPath: spark.ConfDir})
	addVolume(pod, ctr, corev1.Volume{Name: spark.PodTemplateVolumeName, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: n.ConfigMap},
		Items:                []corev1.KeyToPath{{Key: spark.ExecutorPodTemplateKey, Path: spark.PodTemplateFile, Mode: ptr.To(confFileMode)}},
	}}}, corev1.VolumeMount{Name: spark.PodTemplateVolumeName, MountPath: spark.PodTemplateDir})
	if err := podFields(pod, ctr, s, &s.Driver.SparkPodSpec); err != nil {
		return fmt.Errorf("driver: %w", err)
	}
	mountMetricsConf(pod, ctr, s, n)
	mounted := prefixed(c, spark.ConfDriverSecretsPrefix)
	for _, name := range slices.Sorted(maps.Keys(mounted)) {
		addVolume(pod, ctr, corev1.Volume{Name: volumeName(name, "-volume"), VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}},
			corev1.VolumeMount{Name: volumeName(name, "-volume"), MountPath: mounted[name]})
	}
	localDirs(pod, ctr, c)
	if !hasEnv(ctr, spark.EnvConfDir) {
		// spark-submit points SPARK_CONF_DIR at the properties file's
		// directory; with sparkConfigMap it is the user's files instead
		// (podFields), and --properties-file still names this one.
		setEnv(ctr, corev1.EnvVar{Name: spark.EnvConfDir, Value: spark.ConfDir})
	}
	for _, e := range s.Driver.Env {
		setEnv(ctr, e)
	}
	return nil
}

// driverPodSpec: Spark's conf-derived pod settings (restart policy,
// service account, pull secrets, node selector, scheduler), then the
// body's priority class, batch scheduling and sidecars.
func driverPodSpec(d *driverBuild) error {
	pod, s, c := d.pod, d.s, d.c
	dr := &s.Driver
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	if sa := c[spark.ConfDriverServiceAccount]; sa != "" {
		pod.Spec.ServiceAccountName = sa
	}
	for _, name := range strings.Split(c[spark.ConfContainerImagePullSecrets], ",") {
		if name = strings.TrimSpace(name); name != "" && !slices.ContainsFunc(pod.Spec.ImagePullSecrets, func(r corev1.LocalObjectReference) bool { return r.Name == name }) {
			pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: name})
		}
	}
	pod.Spec.NodeSelector = merged(pod.Spec.NodeSelector, prefixed(c, spark.ConfNodeSelectorPrefix), prefixed(c, spark.ConfDriverNodeSelectorPrefix), dr.NodeSelector)
	if len(pod.Spec.NodeSelector) == 0 {
		pod.Spec.NodeSelector = nil
	}
	if dr.SchedulerName == nil || *dr.SchedulerName == "" {
		if name := valueOr(c[spark.ConfDriverSchedulerName], c[spark.ConfSchedulerName]); name != "" {
			pod.Spec.SchedulerName = name
		}
	}
	if dr.PriorityClassName != nil && *dr.PriorityClassName != "" {
		pod.Spec.PriorityClassName = *dr.PriorityClassName
		pod.Spec.Priority = nil
	}
	if err := batchScheduling(pod, s, &dr.SparkPodSpec, spark.RoleDriver, c); err != nil {
		return err
	}
	addSidecars(pod, &dr.SparkPodSpec)
	return nil
}

// driverArgs is the driver container's command line, as Spark's
// DriverCommandFeatureStep writes it:
//
//	driver [--proxy-user U] --properties-file /opt/spark/conf/spark.properties [--class C] RESOURCE ARGS...
//
// Python and R applications run through Spark's PythonRunner and RRunner.
// The resource is passed as written: sparkplug uploads nothing, so it must
// be readable from the driver container (local://, a path in the image, or
// a remote URL).
func driverArgs(s *spec.SparkApplicationSpec) ([]string, error) {
	args := []string{"driver"}
	if s.ProxyUser != nil && *s.ProxyUser != "" {
		args = append(args, "--proxy-user", *s.ProxyUser)
	}
	args = append(args, "--properties-file", path.Join(spark.ConfDir, spark.PropertiesFile))
	main := ptr.Deref(s.MainApplicationFile, "")
	var class string
	switch s.Type {
	case spec.TypePython, spec.TypeR:
		class = spark.PythonRunnerClass
		if s.Type == spec.TypeR {
			class = spark.RRunnerClass
		}
		if main == "" {
			return nil, fmt.Errorf("a %s application needs mainApplicationFile", s.Type)
		}
	default: // Java and Scala
		class = ptr.Deref(s.MainClass, "")
		if main == "" {
			main = noResource
		}
	}
	if class != "" {
		args = append(args, "--class", class)
	}
	args = append(args, main)
	return append(args, s.Arguments...), nil
}

// localDirs gives Spark its scratch space as LocalDirsFeatureStep does:
// volumes the body mounts under the name spark-local-dir-<N> are used as
// they are; otherwise one emptyDir per directory of spark.local.dir (or
// one default directory), in memory when spark.kubernetes.local.dirs.tmpfs
// is true. SPARK_LOCAL_DIRS lists them.
func localDirs(pod *corev1.Pod, ctr *corev1.Container, c map[string]string) {
	var dirs []string
	for _, m := range ctr.VolumeMounts {
		if strings.HasPrefix(m.Name, localDirVolumePrefix) {
			dirs = append(dirs, m.MountPath)
		}
	}
	if len(dirs) == 0 {
		for _, d := range strings.Split(c[spark.ConfLocalDir], ",") {
			if d = strings.TrimSpace(d); d != "" {
				dirs = append(dirs, d)
			}
		}
		if len(dirs) == 0 {
			dirs = []string{spark.LocalDirPath}
		}
		medium := corev1.StorageMediumDefault
		if tmpfs, _ := confvalue.Bool(spark.ConfLocalDirsTmpfs, c[spark.ConfLocalDirsTmpfs]); tmpfs {
			medium = corev1.StorageMediumMemory
		}
		for i, d := range dirs {
			name := fmt.Sprintf("%s%d", localDirVolumePrefix, i+1)
			addVolume(pod, ctr, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: medium}}},
				corev1.VolumeMount{Name: name, MountPath: d})
		}
	}
	setEnv(ctr, corev1.EnvVar{Name: spark.EnvLocalDirs, Value: strings.Join(dirs, ",")})
}

const localDirVolumePrefix = "spark-local-dir-"

func substituteAppID(m map[string]string, appID string) map[string]string {
	for k, v := range m {
		v = strings.ReplaceAll(v, "{{APP_ID}}", appID)
		m[k] = strings.ReplaceAll(v, "{{EXECUTOR_ID}}", "")
	}
	return m
}
