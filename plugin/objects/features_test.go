package objects

import (
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// The Spark container of a template is chosen as Spark chooses it, named
// as sparkplug needs it, and placed after the template's other
// containers, where Spark adds it back.
func TestPodBaseChoosesTheSparkContainerAsSparkDoes(t *testing.T) {
	skeleton := newBuilder(t).driver
	tests := []struct {
		name       string
		containers []corev1.Container
		want       []string // container names, in order
		wantEnv    string   // an env var of the chosen container, kept
	}{
		{"no template container: a new one", nil, []string{spark.DriverContainerName}, ""},
		{"the one named as Spark's", []corev1.Container{{Name: "proxy"}, {Name: spark.DriverContainerName, Env: []corev1.EnvVar{{Name: "MINE", Value: "1"}}}},
			[]string{"proxy", spark.DriverContainerName}, "MINE"},
		{"else the first, renamed", []corev1.Container{{Name: "main", Env: []corev1.EnvVar{{Name: "MINE", Value: "1"}}}, {Name: "proxy"}},
			[]string{"proxy", spark.DriverContainerName}, "MINE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: tt.containers}}
			pod, err := podBase(skeleton, tmpl, spark.DriverContainerName)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range pod.Spec.Containers {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("containers %v, want %v", names, tt.want)
			}
			ctr := pod.Spec.Containers[containerIndex(pod, spark.DriverContainerName)]
			if tt.wantEnv != "" && env(ctr, tt.wantEnv) != "1" {
				t.Errorf("the template's env %s is lost: %+v", tt.wantEnv, ctr.Env)
			}
			// The skeleton's settings are laid over the template's.
			if ctr.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError || !hasEnv(&ctr, spark.EnvDriverBindAddress) {
				t.Errorf("the skeleton's container settings are missing: %+v", ctr)
			}
			if pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
				t.Errorf("restartPolicy %q, want the skeleton's Never", pod.Spec.RestartPolicy)
			}
		})
	}
	if pod, err := podBase(skeleton, nil, spark.DriverContainerName); err != nil || !reflect.DeepEqual(pod, skeleton) {
		t.Errorf("without a template the base is not the skeleton: %v", err)
	}
}

// An item the skeleton sets replaces the template's of the same name
// whole; tolerations of both are kept.
func TestPodBaseLaysTheSkeletonOverTheTemplate(t *testing.T) {
	skeleton := newBuilder(t).driver.DeepCopy()
	skeleton.Spec.Tolerations = []corev1.Toleration{{Key: "operator-wide", Operator: corev1.TolerationOpExists}}
	skeleton.Spec.Volumes = []corev1.Volume{{Name: "shared", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers:  []corev1.Container{{Name: spark.DriverContainerName, Env: []corev1.EnvVar{{Name: spark.EnvDriverBindAddress, Value: "0.0.0.0"}}}},
		Volumes:     []corev1.Volume{{Name: "shared", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}}},
		Tolerations: []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}},
	}}
	pod, err := podBase(skeleton, tmpl, spark.DriverContainerName)
	if err != nil {
		t.Fatal(err)
	}
	e := pod.Spec.Containers[0].Env[0]
	if e.Name != spark.EnvDriverBindAddress || e.Value != "" || e.ValueFrom == nil {
		t.Errorf("bind address %+v, want the skeleton's fieldRef alone", e)
	}
	if v := pod.Spec.Volumes[0]; v.HostPath != nil || v.EmptyDir == nil {
		t.Errorf("volume %+v, want the skeleton's emptyDir alone", v)
	}
	var keys []string
	for _, tol := range pod.Spec.Tolerations {
		keys = append(keys, tol.Key)
	}
	if !slices.Equal(keys, []string{"spot", "operator-wide"}) {
		t.Errorf("tolerations %v, want the template's then the skeleton's", keys)
	}
	if tmpl.Spec.Containers[0].Env[0].Value != "0.0.0.0" || len(tmpl.Spec.Volumes) != 1 {
		t.Error("podBase changed the body's template")
	}
}

// The body's fields and Spark's settings win over the template; the
// template's other settings stay.
func TestTemplatesUnderTheBody(t *testing.T) {
	s := readBody(t, "testdata/pod-templates.input.yaml")
	before, _ := json.Marshal(s)
	objs, err := newBuilder(t).Cluster(s, goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := json.Marshal(s); string(after) != string(before) {
		t.Error("Cluster changed the body")
	}
	d := objs.Driver
	ctr := d.Spec.Containers[containerIndex(d, spark.DriverContainerName)]
	if ctr.Image != "spark:3.5.1" || ctr.Args[0] != "driver" {
		t.Errorf("Spark's image and args not set: %s %v", ctr.Image, ctr.Args)
	}
	if q := ctr.Resources.Limits["ephemeral-storage"]; q.Cmp(resource.MustParse("2Gi")) != 0 {
		t.Errorf("the template's ephemeral-storage limit is lost: %v", ctr.Resources)
	}
	if d.Labels["from-template"] != "yes" || d.Labels["team"] != "data" || d.Labels[spark.LabelRole] != spark.RoleDriver {
		t.Errorf("labels %v: want the template's, the body's and Spark's", d.Labels)
	}
	if mount(ctr, "certs") != "/etc/certs" || mount(ctr, "data") != "/data" || volume(d, "certs") == nil {
		t.Errorf("the template's and the body's mounts: %+v", ctr.VolumeMounts)
	}
	if d.Spec.ServiceAccountName != "spark" || d.Spec.PriorityClassName != "from-template" || d.Spec.SecurityContext == nil {
		t.Errorf("pod fields: %+v", d.Spec)
	}

	var exec corev1.Pod
	if err := yaml.UnmarshalStrict([]byte(objs.ConfigMap.Data[spark.ExecutorPodTemplateKey]), &exec); err != nil {
		t.Fatal(err)
	}
	if exec.Spec.Affinity == nil || len(exec.Spec.InitContainers) != 1 || exec.Annotations["example.com/sidecar-injection"] != "disabled" {
		t.Errorf("the executor template's settings are lost: %+v", exec)
	}
	if i := containerIndex(&exec, spark.ExecutorContainerName); i < 0 || exec.Spec.Containers[i].SecurityContext == nil {
		t.Errorf("the executor's Spark container is not the template's: %+v", exec.Spec.Containers)
	}
}

func TestMonitoring(t *testing.T) {
	s := readBody(t, "testdata/monitoring.input.yaml")
	c := Properties(s, goldenRuns["default"])
	agent := "-javaagent:/prometheus/jmx_prometheus_javaagent-0.20.0.jar=8090:/etc/metrics/conf/prometheus.yaml"
	if got := c[spark.ConfDriverExtraJavaOptions]; got != "-Dlog4j.configuration=file:/opt/spark/log4j.properties "+agent {
		t.Errorf("driver java options %q: want the body's sparkConf, then the agent", got)
	}
	if c[spark.ConfMetricsConf] != "/etc/metrics/conf/metrics.properties" || c[spark.ConfMetricsNamespace] != "data.nightly-etl-x7k2p-50afb368" {
		t.Errorf("metrics conf %q namespace %q", c[spark.ConfMetricsConf], c[spark.ConfMetricsNamespace])
	}

	// Only the roles that expose their metrics run the exporter; the files
	// are in every pod, since Spark reads spark.metrics.conf everywhere.
	s.Monitoring.ExposeExecutorMetrics = false
	objs, err := newBuilder(t).Cluster(s, goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	c = Properties(s, goldenRuns["default"])
	if strings.Contains(c[spark.ConfExecutorExtraJavaOptions], "javaagent") || c[spark.ConfExecutorAnnotationPrefix+spark.AnnotationPromScrape] != "" {
		t.Error("executors run the exporter though they do not expose metrics")
	}
	var exec corev1.Pod
	if err := yaml.UnmarshalStrict([]byte(objs.ConfigMap.Data[spark.ExecutorPodTemplateKey]), &exec); err != nil {
		t.Fatal(err)
	}
	if volume(&exec, spark.MetricsConfVolumeName) == nil || len(exec.Spec.Containers[0].Ports) != 0 {
		t.Errorf("executor template: want the metrics files and no exporter port: %+v", exec.Spec)
	}

	// Files kept in the image are not in the ConfigMap.
	s.Monitoring.MetricsPropertiesFile = ptrTo("/opt/spark/conf/metrics.properties")
	s.Monitoring.Prometheus.ConfigFile = ptrTo("/opt/jmx/config.yaml")
	objs, err = newBuilder(t).Cluster(s, goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := objs.ConfigMap.Data[spark.MetricsPropertiesKey]; ok || volume(objs.Driver, spark.MetricsConfVolumeName) != nil {
		t.Error("a metrics file in the image is also in the ConfigMap")
	}
	c = Properties(s, goldenRuns["default"])
	if c[spark.ConfMetricsConf] != "/opt/spark/conf/metrics.properties" || !strings.HasSuffix(c[spark.ConfDriverExtraJavaOptions], "=8090:/opt/jmx/config.yaml") {
		t.Errorf("files in the image not used: %q %q", c[spark.ConfMetricsConf], c[spark.ConfDriverExtraJavaOptions])
	}
}

// The default exporter rules read the names Spark's JMX sink gives, with
// the namespace sparkplug sets, and only those.
func TestDefaultPrometheusRules(t *testing.T) {
	var conf struct {
		Rules []struct {
			Pattern string            `json:"pattern"`
			Name    string            `json:"name"`
			Labels  map[string]string `json:"labels"`
		} `json:"rules"`
	}
	if err := yaml.Unmarshal([]byte(defaultPrometheusConfiguration), &conf); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ bean, want string }{
		{"metrics<name=data.etl-1a2b3c4d.driver.BlockManager.memory.memUsed_MB, type=gauges><>Value", "spark_driver_BlockManager.memory.memUsed_MB"},
		{"metrics<type=counters, name=data.etl-1a2b3c4d.driver.DAGScheduler.job.allJobs><>Count", "spark_driver_DAGScheduler.job.allJobs_count"},
		{"metrics<name=data.etl-1a2b3c4d.7.executor.threadpool.activeTasks, type=gauges><>Value", "spark_executor_threadpool.activeTasks"},
		{"metrics<name=data.etl-1a2b3c4d.7.jvm.heap.used, type=gauges><>Value", "spark_executor_jvm.heap.used"},
		{"java.lang<type=Memory><HeapMemoryUsage>used", ""},
	}
	for _, tt := range tests {
		got := ""
		for _, r := range conf.Rules {
			re := regexp.MustCompile(r.Pattern) // Java and Go agree on these
			if m := re.FindStringSubmatchIndex(tt.bean); m != nil {
				// Java reads $3_count as group 3 then _count; Go needs ${3}.
				name := regexp.MustCompile(`\$([0-9])`).ReplaceAllString(r.Name, "$${$1}")
				got = string(re.ExpandString(nil, name, tt.bean, m))
				if r.Labels["app_namespace"] != "$1" || r.Labels["app_id"] != "$2" {
					t.Errorf("rule %s: labels %v", r.Pattern, r.Labels)
				}
				break
			}
		}
		if got != tt.want {
			t.Errorf("%s: metric %q, want %q", tt.bean, got, tt.want)
		}
	}
}

func TestUIServiceIsOwnedByTheDriver(t *testing.T) {
	s := readBody(t, "testdata/monitoring.input.yaml")
	objs, err := newBuilder(t).Cluster(s, goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	if len(objs.Extra) != 1 {
		t.Fatalf("extra objects %d, want the UI Service", len(objs.Extra))
	}
	svc, ok := objs.Extra[0].(*corev1.Service)
	if !ok || svc.Name != UIServiceName(objs.Driver.Name) || svc.Spec.Ports[0].TargetPort.IntValue() != spark.UIPort {
		t.Fatalf("UI service %+v", objs.Extra[0])
	}
	created := objs.Driver.DeepCopy()
	created.UID = "driver-uid"
	OwnedBy(objs, created)
	if refs := svc.OwnerReferences; len(refs) != 1 || refs[0].UID != "driver-uid" || refs[0].Kind != "Pod" {
		t.Errorf("UI service owners %+v, want the driver", refs)
	}

	s.SparkUIOptions = nil
	if objs, err = newBuilder(t).Cluster(s, goldenRuns["default"]); err != nil || len(objs.Extra) != 0 {
		t.Errorf("a UI Service without sparkUIOptions: %v", err)
	}
}

func TestBatchSchedulerMetadata(t *testing.T) {
	s := readBody(t, "testdata/yunikorn.input.yaml")
	objs, err := newBuilder(t).Cluster(s, goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	var groups []taskGroup
	if err := json.Unmarshal([]byte(objs.Driver.Annotations[spark.AnnotationYuniKornTaskGroups]), &groups); err != nil {
		t.Fatal(err)
	}
	if len(groups) != 2 || groups[1].MinMember != 3 || groups[1].MinResource["memory"] != "3123Mi" {
		t.Errorf("task groups %+v: want the executors' 3 x 2g + 0.4 overhead + 256m PySpark memory", groups)
	}

	// No executors at the start: no executor task group (YuniKorn refuses
	// minMember 0).
	s.DynamicAllocation = &spec.DynamicAllocation{Enabled: true, MinExecutors: ptrTo[int32](0), MaxExecutors: ptrTo[int32](4)}
	s.Executor.Instances = ptrTo[int32](0)
	objs, err = newBuilder(t).Cluster(s, goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(objs.Driver.Annotations[spark.AnnotationYuniKornTaskGroups]), &groups); err != nil || len(groups) != 1 {
		t.Errorf("task groups %+v (%v), want the driver's only", groups, err)
	}
}

func TestExecutorMemory(t *testing.T) {
	tests := []struct {
		name   string
		conf   map[string]string
		python bool
		want   int64
	}{
		{"default", map[string]string{}, false, 1024 + 384},
		{"factor", map[string]string{spark.ConfExecutorMemory: "8g", spark.ConfMemoryOverheadFactor: "0.2"}, false, 8192 + 1638},
		{"executor factor wins", map[string]string{spark.ConfExecutorMemory: "8g", spark.ConfMemoryOverheadFactor: "0.2", spark.ConfExecutorMemoryOverheadFactor: "0.1"}, false, 8192 + 819},
		{"overhead", map[string]string{spark.ConfExecutorMemoryOverhead: "1g"}, false, 1024 + 1024},
		{"off-heap in bytes", map[string]string{spark.ConfMemoryOffHeapEnabled: "true", spark.ConfMemoryOffHeapSize: "536870912"}, false, 1024 + 384 + 512},
		{"pyspark memory only for Python", map[string]string{spark.ConfExecutorPySparkMemory: "300m"}, false, 1024 + 384},
		{"pyspark memory", map[string]string{spark.ConfExecutorPySparkMemory: "300m"}, true, 1024 + 384 + 300},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := executorMemory(tt.conf, tt.python)
			if err != nil || m.TotalMiB() != tt.want {
				t.Errorf("executorMemory = %d MiB (%v), want %d", m.TotalMiB(), err, tt.want)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
