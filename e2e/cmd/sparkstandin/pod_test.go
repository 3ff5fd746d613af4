package main

import (
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/sparkconf"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// golden reads the driver pod, its conf and its executor pod template
// from one of sparkplug's golden files
// (plugin/objects/testdata/<name>.golden.yaml): what the stand-in's
// driver finds in a real pod.
func golden(t *testing.T, name string) (*corev1.Pod, map[string]string, *corev1.Pod) {
	t.Helper()
	b, err := os.ReadFile("../../../plugin/objects/testdata/" + name + ".golden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var driver corev1.Pod
	var cm corev1.ConfigMap
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "Pod":
			err = yaml.Unmarshal([]byte(doc), &driver)
		case "ConfigMap":
			err = yaml.Unmarshal([]byte(doc), &cm)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	conf, err := sparkconf.Load(cm.Data[spark.PropertiesFile])
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := readTemplate([]byte(cm.Data[spark.ExecutorPodTemplateKey]))
	if err != nil {
		t.Fatal(err)
	}
	driver.UID = "driver-uid"
	return &driver, conf, tmpl
}

func env(c corev1.Container) map[string]corev1.EnvVar {
	out := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		out[e.Name] = e
	}
	return out
}

// The executor the stand-in creates for sparkplug's golden SparkPi is the
// one Spark's allocator would, and its SPARK_DRIVER_URL leads to the
// driver Service that sparkplug creates.
func TestExecutorPodOfGoldenSparkPi(t *testing.T) {
	driver, conf, tmpl := golden(t, "spark-pi")
	pod, err := executorPod(conf, driver, tmpl, 2, "spark")
	if err != nil {
		t.Fatal(err)
	}
	if want := conf[spark.ConfExecutorPodNamePrefix] + "-exec-2"; pod.Name != want || pod.Spec.Hostname != want {
		t.Errorf("name %q hostname %q, want %q", pod.Name, pod.Spec.Hostname, want)
	}
	for k, v := range map[string]string{
		spark.LabelAppSelector: conf[spark.ConfAppID],
		spark.LabelRole:        spark.RoleExecutor,
		spark.LabelExecID:      "2",
		labelResourceProfileID: "0",
		spark.LabelAppName:     driver.Labels[spark.LabelAppName],
		spark.LabelManagedBy:   "sparkplug",
		spark.LabelNode:        conf[spark.ConfExecutorLabelPrefix+spark.LabelNode],
		spark.LabelWorkflowUID: driver.Labels[spark.LabelWorkflowUID],
		// the Spark operator's, from the conf as sparkplug's
		spark.LabelOperatorAppName:      driver.Labels[spark.LabelAppName],
		spark.LabelOperatorSubmissionID: conf[spark.ConfAppID],
	} {
		if pod.Labels[k] != v || v == "" {
			t.Errorf("label %s=%q, want %q", k, pod.Labels[k], v)
		}
	}
	ref := pod.OwnerReferences
	if len(ref) != 1 || ref[0].Kind != "Pod" || ref[0].APIVersion != "v1" || ref[0].Name != driver.Name || ref[0].UID != driver.UID || ref[0].Controller == nil || !*ref[0].Controller {
		t.Errorf("owner %+v, want the driver pod as controller", ref)
	}
	s := pod.Spec
	if s.RestartPolicy != corev1.RestartPolicyNever || s.ServiceAccountName != driver.Spec.ServiceAccountName || s.ServiceAccountName == "" {
		t.Errorf("restart policy %q, service account %q (driver's %q)", s.RestartPolicy, s.ServiceAccountName, driver.Spec.ServiceAccountName)
	}
	if len(s.Containers) != 1 {
		t.Fatalf("containers %+v", s.Containers)
	}
	c := s.Containers[0]
	if c.Name != spark.ExecutorContainerName || c.Image != conf[spark.ConfExecutorContainerImage] || len(c.Args) != 1 || c.Args[0] != "executor" || len(c.Command) != 0 {
		t.Errorf("container %q image %q command %q args %q", c.Name, c.Image, c.Command, c.Args)
	}
	mem := resource.MustParse("896Mi") // 512m + the 384 MiB minimum overhead
	if r := c.Resources; !r.Requests.Memory().Equal(mem) || !r.Limits.Memory().Equal(mem) || !r.Requests.Cpu().Equal(resource.MustParse("1")) {
		t.Errorf("resources %+v, want memory %s requested and limited, 1 cpu requested", r, mem.String())
	}
	e := env(c)
	for k, v := range map[string]string{
		"SPARK_EXECUTOR_ID": "2", "SPARK_APPLICATION_ID": conf[spark.ConfAppID], "SPARK_EXECUTOR_CORES": "1",
		"SPARK_EXECUTOR_MEMORY": "512m", "SPARK_CONF_DIR": spark.ConfDir, "SPARK_USER": "spark",
		"SPARK_DRIVER_URL": "spark://CoarseGrainedScheduler@" + conf[spark.ConfDriverHost] + ":7078",
		"SPARK_LOCAL_DIRS": spark.LocalDirPath,
	} {
		if e[k].Value != v {
			t.Errorf("env %s=%q, want %q", k, e[k].Value, v)
		}
	}
	if f := e["SPARK_EXECUTOR_POD_NAME"].ValueFrom; f == nil || f.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("SPARK_EXECUTOR_POD_NAME %+v", e["SPARK_EXECUTOR_POD_NAME"])
	}
	addr, err := driverAddress(e["SPARK_DRIVER_URL"].Value)
	if want := driver.Name + "-svc." + driver.Namespace + ".svc:7078"; err != nil || addr != want {
		t.Errorf("the executor dials %q (%v), want the driver Service %q", addr, err, want)
	}
}

// A template's other containers stay, before Spark's; its own
// spark-local-dir volume is used; its metadata is kept.
func TestExecutorPodFromTemplate(t *testing.T) {
	driver, conf, tmpl := golden(t, "pod-templates")
	pod, err := executorPod(conf, driver, tmpl, 1, "spark")
	if err != nil {
		t.Fatal(err)
	}
	if pod.Annotations["example.com/sidecar-injection"] != "disabled" || pod.Spec.Affinity == nil || len(pod.Spec.InitContainers) != 1 {
		t.Errorf("the template's annotations, affinity or init containers are lost: %+v", pod)
	}
	c := pod.Spec.Containers[len(pod.Spec.Containers)-1]
	if c.Name != spark.ExecutorContainerName || c.SecurityContext == nil || c.Image == "" {
		t.Errorf("last container %+v, want Spark's, with the template's security context", c)
	}
	if got := env(c)["SPARK_LOCAL_DIRS"].Value; got != "/scratch" {
		t.Errorf("SPARK_LOCAL_DIRS=%q, want the template's /scratch", got)
	}
	for _, v := range pod.Spec.Volumes {
		if v.Name == spark.LocalDirVolumeName && v.EmptyDir != nil {
			t.Errorf("an emptyDir %s beside the template's", v.Name)
		}
	}
}

func TestExecutorPodConf(t *testing.T) {
	base := map[string]string{
		spark.ConfAppID: "spark-1", spark.ConfContainerImage: "img", spark.ConfExecutorPodNamePrefix: "app",
		spark.ConfDriverHost: "app-driver-svc.ns.svc", spark.ConfDriverPort: "7078",
	}
	with := func(kv ...string) map[string]string {
		c := map[string]string{}
		for k, v := range base {
			c[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			c[kv[i]] = kv[i+1]
		}
		return c
	}
	t.Run("labels and annotations substitute the ids", func(t *testing.T) {
		pod, err := executorPod(with(spark.ConfExecutorLabelPrefix+"a", "{{APP_ID}}-{{EXECUTOR_ID}}", spark.ConfExecutorAnnotationPrefix+"b", "x{{EXECUTOR_ID}}"), nil, nil, 3, "u")
		if err != nil {
			t.Fatal(err)
		}
		if pod.Labels["a"] != "spark-1-3" || pod.Annotations["b"] != "x3" || len(pod.OwnerReferences) != 0 {
			t.Errorf("labels %v annotations %v owners %v", pod.Labels, pod.Annotations, pod.OwnerReferences)
		}
	})
	t.Run("a reserved label is refused", func(t *testing.T) {
		if _, err := executorPod(with(spark.ConfExecutorLabelPrefix+spark.LabelExecID, "9"), nil, nil, 1, "u"); err == nil {
			t.Error("no error")
		}
	})
	t.Run("no image", func(t *testing.T) {
		if _, err := executorPod(with(spark.ConfContainerImage, ""), nil, nil, 1, "u"); err == nil {
			t.Error("no error")
		}
	})
	t.Run("executor image, cores, limits, env, selectors, account", func(t *testing.T) {
		pod, err := executorPod(with(
			spark.ConfExecutorContainerImage, "exec-img", spark.ConfExecutorCores, "2", spark.ConfExecutorRequestCores, "500m",
			spark.ConfExecutorLimitCores, "3", spark.ConfExecutorMemory, "1g", spark.ConfExecutorMemoryOverhead, "100m",
			spark.ConfExecutorEnvPrefix+"FOO", "bar", spark.ConfNodeSelectorPrefix+"disk", "ssd",
			spark.ConfExecutorServiceAccount, "exec-sa", spark.ConfContainerImagePullSecrets, "s1, s2",
		), nil, nil, 1, "u")
		if err != nil {
			t.Fatal(err)
		}
		c := pod.Spec.Containers[0]
		r := c.Resources
		if c.Image != "exec-img" || !r.Requests.Cpu().Equal(resource.MustParse("500m")) || !r.Limits.Cpu().Equal(resource.MustParse("3")) ||
			!r.Limits.Memory().Equal(resource.MustParse("1124Mi")) || env(c)["FOO"].Value != "bar" || env(c)["SPARK_EXECUTOR_CORES"].Value != "2" {
			t.Errorf("container %+v", c)
		}
		if pod.Spec.NodeSelector["disk"] != "ssd" || pod.Spec.ServiceAccountName != "exec-sa" || len(pod.Spec.ImagePullSecrets) != 2 {
			t.Errorf("spec %+v", pod.Spec)
		}
	})
}

func TestHostname(t *testing.T) {
	long := strings.Repeat("a", 70) + "-exec-1"
	for name, want := range map[string]string{
		"app-exec-1": "app-exec-1",
		long:         long[len(long)-63:],
		"-" + strings.Repeat("b", 62) + ".x-exec-1": strings.Repeat("b", 54) + "_x-exec-1",
	} {
		if got := hostname(name); got != want {
			t.Errorf("hostname(%q) = %q, want %q", name, got, want)
		}
	}
}
