package objects

import (
	"fmt"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// Client builds the objects of a client-mode run (mode: client), the
// hand-made way of running Spark's client mode on Kubernetes: the driver
// pod runs spark-submit --deploy-mode client itself, so the driver is
// spark-submit's own JVM, and the objects around it are those of cluster
// mode, changed where client mode differs:
//
//   - the driver pod, built as in cluster mode (names, labels, owner,
//     resources, the body's pod fields), runs
//     spark-submit --master M --deploy-mode client --properties-file
//     /opt/spark/conf/spark-defaults.conf --conf
//     spark.driver.bindAddress=$(SPARK_DRIVER_BIND_ADDRESS) [--proxy-user U]
//     [--class C] RESOURCE ARGS (clientArgs), with the run's conf
//     directory mounted read-only at /opt/spark/conf;
//   - the immutable ConfigMap holds that directory: spark-defaults.conf
//     (the effective conf, Properties with clientConf's changes),
//     spark-env.sh and the executor pod template, plus the monitoring
//     files as in cluster mode;
//   - the headless driver Service, as in cluster mode: its selector
//     matches this driver only, and spark.driver.host names it, so the
//     executors reach the driver through it;
//   - a UI Service to the driver's port 4040, always (the sparkUIOptions
//     one, shaped by them when they are set), and an Ingress to it when
//     the body has a URL format for it, whose path is then
//     spark.ui.proxyBase in spark-defaults.conf (ingress.go);
//   - driverIngressOptions' Services and Ingresses, as in cluster mode.
//
// The driver is owned by the Workflow and the rest by the driver
// (OwnedBy), the labels and annotations are cluster mode's, so sparkplug
// follows, stops and cleans up a client-mode run as any other.
func (b *Builder) Client(s *spec.SparkApplicationSpec, r Run) (*Set, error) {
	if s.Mode != spec.ModeClient {
		return nil, fmt.Errorf("mode %q: Client builds client mode only", s.Mode)
	}
	return b.build(s, r, clientMode)
}

// clientMode: the driver pod runs spark-submit --deploy-mode client
// (clientDriver), its ConfigMap is a conf directory (clientConfigMap), and
// it always has a UI Service.
var clientMode = deployMode{
	driver: clientDriver,
	ui: func(s *spec.SparkApplicationSpec) *spec.SparkUIConfiguration {
		if s.SparkUIOptions == nil {
			return &spec.SparkUIConfiguration{}
		}
		return s.SparkUIOptions
	},
	configMap: clientConfigMap,
}

// clientConf changes the conf Properties derives for cluster mode into
// client mode's:
//
//   - spark.submit.deployMode is client, and spark.kubernetes.submitInDriver
//     is unset: that key tells Spark it is the driver of a cluster-mode
//     submission (it then reads spark.kubernetes.driver.master and the pod's
//     service account files as cluster mode's driver does);
//   - spark.master is the API server the driver talks to: k8s://<the body's
//     driver.kubernetesMaster>, else the cluster's own; in client mode Spark
//     reads no spark.kubernetes.driver.master, so it is unset;
//   - spark.kubernetes.executor.podTemplateFile is the template in the
//     run's conf directory.
//
// What stays as in cluster mode matters as much: spark.driver.host (the
// headless Service) with spark.driver.port and spark.driver.blockManager.port,
// which the Service exposes; spark.kubernetes.driver.pod.name, by which
// Spark makes the driver pod the owner of the executors; the application
// id and the executors' labels, by which sparkplug follows them.
func clientConf(c map[string]string, s *spec.SparkApplicationSpec) {
	c[spark.ConfSubmitDeployMode] = spark.DeployModeClient
	delete(c, spark.ConfSubmitInDriver)
	if m := strings.TrimSpace(ptr.Deref(s.Driver.KubernetesMaster, "")); m != "" {
		if !strings.HasPrefix(m, "k8s://") {
			m = "k8s://" + m
		}
		c[spark.ConfMaster] = m
	}
	delete(c, spark.ConfDriverMaster)
	c[spark.ConfExecutorPodTemplateFile] = path.Join(spark.ConfDir, spark.ExecutorPodTemplateKey)
}

// clientArgs is the driver container's command line in client mode:
//
//	/opt/spark/bin/spark-submit --master M --deploy-mode client
//	  --properties-file /opt/spark/conf/spark-defaults.conf
//	  --conf spark.driver.bindAddress=$(SPARK_DRIVER_BIND_ADDRESS)
//	  [--proxy-user U] [--class C] RESOURCE ARGS...
//
// It goes into the container's args, not its command, so that the image's
// entrypoint still runs first: Spark's (/opt/entrypoint.sh) runs a first
// argument other than driver or executor as it is, and an image without
// an entrypoint runs the args as the command.
//
// Kubernetes expands $(SPARK_DRIVER_BIND_ADDRESS) to the pod's IP (the
// variable comes from status.podIP), so the driver listens on the pod's
// address, as the image's "driver" mode does with the same variable, and
// advertises spark.driver.host, the headless Service. A Java or Scala
// application passes its main class; spark-submit runs a Python or R file
// through its own runner, chosen by the file's extension (validation
// requires .py, .R or .r in client mode), so no --class is passed for
// them. The resource is passed as written, as in cluster mode.
func clientArgs(s *spec.SparkApplicationSpec, c map[string]string) ([]string, error) {
	args := []string{
		spark.ClientSparkSubmit,
		"--master", c[spark.ConfMaster],
		"--deploy-mode", spark.DeployModeClient,
		"--properties-file", path.Join(spark.ConfDir, spark.ClientDefaultsFile),
		"--conf", spark.ConfDriverBindAddress + "=$(" + spark.EnvDriverBindAddress + ")",
	}
	if s.ProxyUser != nil && *s.ProxyUser != "" {
		args = append(args, "--proxy-user", *s.ProxyUser)
	}
	main := ptr.Deref(s.MainApplicationFile, "")
	if jvm(s) {
		if class := ptr.Deref(s.MainClass, ""); class != "" {
			args = append(args, "--class", class)
		}
		if main == "" {
			main = noResource
		}
	} else if main == "" {
		return nil, fmt.Errorf("a %s application needs mainApplicationFile", s.Type)
	}
	args = append(args, main)
	return append(args, s.Arguments...), nil
}

// clientDriver turns the driver pod driverPod built into client mode's:
// the container runs clientArgs, and the run's conf directory (ConfigMap
// keys spark-defaults.conf, spark-env.sh and the executor pod template) is
// the one volume at /opt/spark/conf, read-only, in place of cluster mode's
// spark.properties there and template at /opt/spark/pod-template.
func clientDriver(pod *corev1.Pod, s *spec.SparkApplicationSpec, n Names, c map[string]string) error {
	ctr := &pod.Spec.Containers[containerIndex(pod, spark.DriverContainerName)]
	args, err := clientArgs(s, c)
	if err != nil {
		return err
	}
	ctr.Args = args

	ours := func(v corev1.Volume, name string) bool {
		return v.Name == name && v.ConfigMap != nil && v.ConfigMap.Name == n.ConfigMap
	}
	conf := slices.IndexFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return ours(v, spark.ConfVolumeName) })
	if conf < 0 {
		return fmt.Errorf("no %s volume of ConfigMap %s", spark.ConfVolumeName, n.ConfigMap)
	}
	item := func(key string) corev1.KeyToPath {
		return corev1.KeyToPath{Key: key, Path: key, Mode: ptr.To(confFileMode)}
	}
	pod.Spec.Volumes[conf].ConfigMap.Items = []corev1.KeyToPath{
		item(spark.ClientDefaultsFile),
		item(spark.ClientEnvFile),
		item(spark.ExecutorPodTemplateKey),
	}
	pod.Spec.Volumes = slices.DeleteFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return ours(v, spark.PodTemplateVolumeName) })
	ctr.VolumeMounts = slices.DeleteFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == spark.PodTemplateVolumeName && m.MountPath == spark.PodTemplateDir
	})
	for i := range ctr.VolumeMounts {
		if m := &ctr.VolumeMounts[i]; m.Name == spark.ConfVolumeName && m.MountPath == spark.ConfDir {
			m.ReadOnly = true
		}
	}

	// An operator's skeleton may lack the variable the command line
	// expands; without it Kubernetes would pass $(...) as written.
	if !hasEnv(ctr, spark.EnvDriverBindAddress) {
		setEnv(ctr, corev1.EnvVar{Name: spark.EnvDriverBindAddress, ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"},
		}})
	}
	return nil
}

// clientConfigMap is the run's conf directory: spark-defaults.conf,
// spark-env.sh and the executor pod template, and the monitoring files,
// with the labels and annotations of cluster mode's ConfigMap (configMap)
// and its name.
func clientConfigMap(r Run, n Names, c map[string]string, executorTemplate string, files map[string]string) *corev1.ConfigMap {
	cm := configMap(r, n, c, executorTemplate, files)
	delete(cm.Data, spark.PropertiesFile)
	cm.Data[spark.ClientDefaultsFile] = renderProperties(c, "Spark defaults of "+n.AppID+" ("+n.DriverPod+"), written by sparkplug; spark-submit --deploy-mode client reads them (--properties-file)")
	cm.Data[spark.ClientEnvFile] = clientEnvScript(n)
	return cm
}

// clientEnvScript is spark-env.sh. It sets nothing, on purpose: spark-submit
// sources it only when SPARK_CONF_DIR is /opt/spark/conf, and a body's
// sparkConfigMap points SPARK_CONF_DIR at its own files, so nothing the
// driver needs may live here. What a hand-made spark-env.sh would carry
// is where it holds either way: the conf (memory, java options) in
// spark-defaults.conf, which spark-submit reads before it starts the
// driver's JVM; the bind address on the command line; the environment on
// the driver container.
func clientEnvScript(n Names) string {
	return "# spark-env.sh of " + n.AppID + " (" + n.DriverPod + "), written by sparkplug.\n" +
		"#\n" +
		"# spark-submit sources this file when SPARK_CONF_DIR is " + spark.ConfDir + ". It sets\n" +
		"# nothing: the Spark conf is in " + spark.ClientDefaultsFile + " (spark-submit --properties-file),\n" +
		"# the driver's bind address on spark-submit's command line, and its environment\n" +
		"# on the driver container, where each holds whatever SPARK_CONF_DIR is.\n"
}
