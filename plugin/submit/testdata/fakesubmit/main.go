// Command fakesubmit stands in for $SPARK_HOME/bin/spark-submit in
// sparkplug's tests, where no Spark distribution (nor Java) is installed.
//
// It reads what to do from $SPARK_HOME/fake.json (all fields optional):
//
//	{"record": "/path/calls.jsonl",  // append {"args": [...], "env": [...]} per call
//	 "sleep": "3s",                  // sleep first
//	 "exitCode": 1, "stderr": "...", // print stderr and exit with the code
//	 "create": true}                 // create the driver pod, as spark-submit would
//
// With create, it reads the --conf arguments as spark-submit does and
// creates, through the kubeconfig in $KUBECONFIG, the driver pod
// (spark.kubernetes.driver.pod.name in spark.kubernetes.namespace, the
// spec of spark.kubernetes.driver.podTemplateFile, labels and annotations
// from spark.kubernetes.driver.label.* and .annotation.*, Spark's own
// labels with an application id of its own, the image, the driver's
// arguments, and the ConfigMap mounted at /opt/spark/conf as volume
// spark-conf-volume-driver), then that ConfigMap, whose spark.properties
// holds the --conf entries and the application id as Spark's does (the e2e
// Spark simulator reads it to create the executors), and the headless
// driver Service, both owned by the pod and applied server-side as Spark
// 4's spark-submit applies them (a PATCH that creates, so the plugin's
// Role must allow patch and create on both), deleting the pod when they
// fail. Like spark-submit, it sets no owner on the pod, whatever the
// template says, and fails with a fabric8-like exception when the pod
// exists.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// Spark's driver conf directory and the volume that carries it
// (SPARK_CONF_DIR_INTERNAL, SPARK_CONF_VOLUME_DRIVER).
const (
	confDir        = "/opt/spark/conf"
	confVolume     = "spark-conf-volume-driver"
	propertiesFile = "spark.properties"
)

type config struct {
	Record   string `json:"record"`
	Sleep    string `json:"sleep"`
	ExitCode int    `json:"exitCode"`
	Stderr   string `json:"stderr"`
	Create   bool   `json:"create"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "Exception in thread \"main\" org.apache.spark.SparkException: %v\n\tat org.apache.spark.deploy.SparkSubmit.main(SparkSubmit.scala)\n", err)
		os.Exit(1)
	}
}

func run() error {
	var c config
	if raw, err := os.ReadFile(filepath.Join(os.Getenv("SPARK_HOME"), "fake.json")); err == nil {
		if err := json.Unmarshal(raw, &c); err != nil {
			return fmt.Errorf("fake.json: %w", err)
		}
	}
	if c.Record != "" {
		line, _ := json.Marshal(map[string]any{"args": os.Args[1:], "env": os.Environ()})
		f, err := os.OpenFile(c.Record, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		_, _ = f.Write(append(line, '\n'))
		f.Close()
	}
	if c.Sleep != "" {
		d, err := time.ParseDuration(c.Sleep)
		if err != nil {
			return err
		}
		time.Sleep(d)
	}
	if c.Stderr != "" {
		fmt.Fprint(os.Stderr, c.Stderr)
	}
	if c.ExitCode != 0 {
		os.Exit(c.ExitCode)
	}
	if c.Create {
		return create(parse(os.Args[1:]))
	}
	return nil
}

type submission struct {
	conf     map[string]string
	class    string
	resource string
	args     []string
}

func parse(argv []string) submission {
	s := submission{conf: map[string]string{}}
	for i := 0; i < len(argv); i++ {
		switch a := argv[i]; a {
		case "--conf":
			i++
			k, v, _ := strings.Cut(argv[i], "=")
			s.conf[k] = v
		case "--class":
			i++
			s.class = argv[i]
		case "--master", "--deploy-mode", "--name", "--proxy-user":
			i++
		default:
			s.resource, s.args = a, argv[i+1:]
			return s
		}
	}
	return s
}

// servicePort is a TCP port of the driver Service (the protocol named: it
// is a key of the ports list under server-side apply).
func servicePort(name string, port int32) *corev1ac.ServicePortApplyConfiguration {
	return corev1ac.ServicePort().WithName(name).WithProtocol(corev1.ProtocolTCP).WithPort(port).WithTargetPort(intstr.FromInt32(port))
}

func prefixed(c map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range c {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			out[rest] = v
		}
	}
	return out
}

// Spark's names for the executor pod template in the driver
// (Constants.scala: POD_TEMPLATE_VOLUME, POD_TEMPLATE_KEY,
// EXECUTOR_POD_SPEC_TEMPLATE_MOUNTPATH, EXECUTOR_POD_SPEC_TEMPLATE_FILE_NAME).
const (
	podTemplateVolume = "pod-template-volume"
	podTemplateKey    = "podspec-configmap-key"
	podTemplateDir    = "/opt/spark/pod-template"
	podTemplateFile   = "pod-spec-template.yml"
)

func create(s submission) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns, name := s.conf["spark.kubernetes.namespace"], s.conf["spark.kubernetes.driver.pod.name"]
	pod := &corev1.Pod{}
	if f := s.conf["spark.kubernetes.driver.podTemplateFile"]; f != "" {
		raw, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("Could not load pod from template file: %w", err)
		}
		if err := yaml.UnmarshalStrict(raw, pod); err != nil {
			return fmt.Errorf("Could not load pod from template file: %w", err)
		}
	}
	if f := s.conf["spark.kubernetes.executor.podTemplateFile"]; f != "" {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("executor pod template: %w", err)
		}
	}
	pod.ObjectMeta = metav1.ObjectMeta{Name: name, Namespace: ns} // spark-submit sets no owner
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	appID := "spark-" + hex.EncodeToString(id)
	pod.Labels = prefixed(s.conf, "spark.kubernetes.driver.label.")
	pod.Labels["spark-app-selector"] = appID
	pod.Labels["spark-role"] = "driver"
	pod.Labels["spark-app-name"] = s.conf["spark.app.name"]
	pod.Labels["spark-version"] = "3.5.3"
	pod.Annotations = prefixed(s.conf, "spark.kubernetes.driver.annotation.")
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	pod.Spec.ServiceAccountName = s.conf["spark.kubernetes.authenticate.driver.serviceAccountName"]
	i := -1
	for j, c := range pod.Spec.Containers {
		if c.Name == s.conf["spark.kubernetes.driver.podTemplateContainerName"] {
			i = j
		}
	}
	if i < 0 {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: "spark-kubernetes-driver"})
		i = len(pod.Spec.Containers) - 1
	}
	ctr := &pod.Spec.Containers[i]
	ctr.Image = s.conf["spark.kubernetes.driver.container.image"]
	if ctr.Image == "" {
		ctr.Image = s.conf["spark.kubernetes.container.image"]
	}
	ctr.Args = append([]string{"driver", "--properties-file", "/opt/spark/conf/spark.properties", "--class", s.class, s.resource}, s.args...)
	ctr.Env = append(ctr.Env, corev1.EnvVar{Name: "SPARK_APPLICATION_ID", Value: appID}, corev1.EnvVar{Name: "SPARK_CONF_DIR", Value: confDir})
	// Spark's own conf volume, as its Client adds it to every driver.
	confMap := "spark-drv-" + hex.EncodeToString(id[:8]) + "-conf-map"
	ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: confVolume, MountPath: confDir})
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: confVolume, VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: confMap},
			Items:                []corev1.KeyToPath{{Key: propertiesFile, Path: propertiesFile, Mode: ptr.To[int32](0o644)}},
		},
	}})

	// Spark's DriverServiceFeatureStep: the driver Service, whose name the
	// driver's conf gives as spark.driver.host, where executors connect.
	svcName := "spark-" + hex.EncodeToString(id[8:]) + "-driver-svc"
	s.conf = maps.Clone(s.conf)
	s.conf["spark.driver.host"] = svcName + "." + ns + ".svc"
	// Spark's PodTemplateConfigMapStep: the executor pod template goes to
	// the driver in a ConfigMap of its own, mounted at
	// /opt/spark/pod-template, and the driver's conf names it there (the
	// path spark-submit read it from is on spark-submit's machine only).
	var podSpec *corev1ac.ConfigMapApplyConfiguration
	if f := s.conf["spark.kubernetes.executor.podTemplateFile"]; f != "" {
		raw, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("executor pod template: %w", err)
		}
		name := "spark-drv-" + hex.EncodeToString(id[:8]) + "-podspec-conf-map"
		podSpec = corev1ac.ConfigMap(name, ns).WithData(map[string]string{podTemplateKey: string(raw)})
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: podTemplateVolume, MountPath: podTemplateDir})
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: podTemplateVolume, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: name},
				Items:                []corev1.KeyToPath{{Key: podTemplateKey, Path: podTemplateFile}},
			},
		}})
		s.conf["spark.kubernetes.executor.podTemplateFile"] = podTemplateDir + "/" + podTemplateFile
	}

	ctx := context.Background()
	created, err := kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("io.fabric8.kubernetes.client.KubernetesClientException: Failure executing: POST at: %s/api/v1/namespaces/%s/pods. Message: pods %q already exists. Received status: Status(code=409, reason=AlreadyExists)", cfg.Host, ns, name)
	}
	if err != nil {
		return fmt.Errorf("io.fabric8.kubernetes.client.KubernetesClientException: %w", err)
	}
	// The ConfigMap and the driver Service, owned by the pod, applied
	// server-side as Spark 4 does (fabric8's forceConflicts().
	// serverSideApply(): a PATCH that creates); the pod is deleted when
	// they fail.
	owner := metav1ac.OwnerReference().WithAPIVersion("v1").WithKind("Pod").WithName(created.Name).WithUID(created.UID).WithController(true)
	apply := metav1.ApplyOptions{FieldManager: "fabric8", Force: true}
	cm := corev1ac.ConfigMap(confMap, ns).
		WithOwnerReferences(owner).
		WithData(map[string]string{propertiesFile: properties(s.conf, appID)})
	svc := corev1ac.Service(svcName, ns).
		WithOwnerReferences(owner).
		WithSpec(corev1ac.ServiceSpec().
			WithClusterIP(corev1.ClusterIPNone).
			WithSelector(map[string]string{"spark-app-selector": appID, "spark-role": "driver"}).
			WithPorts(
				servicePort("driver-rpc-port", 7078),
				servicePort("blockmanager", 7079),
				servicePort("spark-ui", 4040),
			))
	if _, err := kube.CoreV1().ConfigMaps(ns).Apply(ctx, cm, apply); err != nil {
		_ = kube.CoreV1().Pods(ns).Delete(ctx, created.Name, metav1.DeleteOptions{})
		return fmt.Errorf("io.fabric8.kubernetes.client.KubernetesClientException: %w", err)
	}
	if podSpec != nil {
		if _, err := kube.CoreV1().ConfigMaps(ns).Apply(ctx, podSpec.WithOwnerReferences(owner), apply); err != nil {
			_ = kube.CoreV1().Pods(ns).Delete(ctx, created.Name, metav1.DeleteOptions{})
			return fmt.Errorf("io.fabric8.kubernetes.client.KubernetesClientException: %w", err)
		}
	}
	if _, err := kube.CoreV1().Services(ns).Apply(ctx, svc, apply); err != nil {
		_ = kube.CoreV1().Pods(ns).Delete(ctx, created.Name, metav1.DeleteOptions{})
		return fmt.Errorf("io.fabric8.kubernetes.client.KubernetesClientException: %w", err)
	}
	fmt.Printf("Deployed Spark application %s with application ID %s into Kubernetes\n", s.conf["spark.app.name"], appID)
	return nil
}

// properties renders the driver's spark.properties: the --conf entries
// and the application id, sorted, escaped as java.util.Properties.store
// escapes them.
func properties(conf map[string]string, appID string) string {
	all := maps.Clone(conf)
	all["spark.app.id"] = appID
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(all)) {
		b.WriteString(escapeProperty(k, true) + "=" + escapeProperty(all[k], false) + "\n")
	}
	return b.String()
}

// escapeProperty escapes s as a key or value of a properties file. Non-ASCII
// characters stay as they are: Spark reads the file as UTF-8.
func escapeProperty(s string, key bool) string {
	var b strings.Builder
	for i, r := range s {
		switch r {
		case '\\', '=', ':', '#', '!':
			b.WriteString("\\" + string(r))
		case ' ':
			if i == 0 || key {
				b.WriteString("\\ ")
			} else {
				b.WriteByte(' ')
			}
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\f':
			b.WriteString(`\f`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
