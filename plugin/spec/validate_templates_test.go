package spec

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestValidateTemplatesAndSchedulers: driver.template and executor.template,
// monitoring, sparkUIOptions and the batch scheduler.
func TestValidateTemplatesAndSchedulers(t *testing.T) {
	type spec = SparkApplicationSpec
	runValidateCases(t, []validateCase{
		// driver.template, executor.template
		{"empty template is valid", func(s *spec) { s.Executor.Template = &corev1.PodTemplateSpec{} }, nil},
		{"template with a sidecar and a volume is valid", func(s *spec) {
			s.Driver.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "spark-kubernetes-driver", Env: []corev1.EnvVar{{Name: "A", Value: "b"}}}, {Name: "proxy", Image: "envoy:1"}},
				Volumes:    []corev1.Volume{{Name: "certs"}},
			}}
		}, nil},
		{"template identity", func(s *spec) {
			s.Driver.Template = &corev1.PodTemplateSpec{}
			s.Driver.Template.Name, s.Driver.Template.Namespace = "x", "y"
			s.Driver.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		}, []wantErr{
			{"spark.driver.template.metadata.name", "Forbidden: sparkplug names Spark's pods"},
			{"spark.driver.template.metadata.namespace", "Forbidden: Spark's pods run in the workflow's namespace"},
			{"spark.driver.template.spec.restartPolicy", "Spark's pods never restart"},
		}},
		{"template reserved label", func(s *spec) {
			s.Executor.Template = &corev1.PodTemplateSpec{}
			s.Executor.Template.Labels = map[string]string{"spark-role": "x"}
		}, []wantErr{{"spark.executor.template.metadata.labels[spark-role]", "Forbidden"}}},
		{"template launched-by-spark-operator label", func(s *spec) {
			s.Driver.Template = &corev1.PodTemplateSpec{}
			s.Driver.Template.Labels = map[string]string{"sparkoperator.k8s.io/launched-by-spark-operator": "true"}
		}, []wantErr{{"spark.driver.template.metadata.labels[sparkoperator.k8s.io/launched-by-spark-operator]", "Forbidden: the Spark operator would take the pods for its own"}}},
		{"template Spark container: what Spark sets", func(s *spec) {
			s.Executor.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "main", Image: "x:1", Args: []string{"a"},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi"), "ephemeral-storage": resource.MustParse("1Gi")}},
			}}}}
		}, []wantErr{
			{"spark.executor.template.spec.containers[0].image", "Spark sets the Spark container's image from spark.image or spark.executor.image"},
			{"spark.executor.template.spec.containers[0].args", "give the application's in spark.arguments"},
			{"spark.executor.template.spec.containers[0].resources.limits[memory]", "Spark sets the Spark container's cpu and memory"},
		}},
		{"template clashes with the body", func(s *spec) {
			s.Driver.Sidecars = []corev1.Container{{Name: "proxy", Image: "envoy:1"}}
			s.Driver.Template = &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "spark-kubernetes-driver"}, {Name: "proxy"}},
				Volumes:    []corev1.Volume{{Name: "data"}, {Name: "spark-conf-volume-driver"}},
			}}
		}, []wantErr{
			{"spark.driver.template.spec.containers[1].image", "Required value: give the container image"},
			{"spark.driver.sidecars[0].name", "is also a container of spark.driver.template; rename one"},
			{"spark.driver.template.spec.volumes[0].name", "is also a volume in spark.volumes"},
			{"spark.driver.template.spec.volumes[1].name", "Forbidden: is the name of a volume sparkplug adds"},
		}},

		// monitoring
		{"monitoring with prometheus is valid", func(s *spec) {
			s.Monitoring = &MonitoringSpec{ExposeDriverMetrics: true, ExposeExecutorMetrics: true, Prometheus: &PrometheusSpec{JmxExporterJar: "/prometheus/jmx.jar"}}
		}, nil},
		{"metricsProperties alone is valid", func(s *spec) { s.Monitoring = &MonitoringSpec{MetricsProperties: ptr("*.sink.console.class=x")} }, nil},
		{"exposing metrics without prometheus", func(s *spec) { s.Monitoring = &MonitoringSpec{ExposeDriverMetrics: true} },
			[]wantErr{{"spark.monitoring.prometheus", "Required value: exposeDriverMetrics needs prometheus"}}},
		{"prometheus problems", func(s *spec) {
			s.Driver.Ports = []Port{{Name: "metrics", ContainerPort: 9000}}
			s.Monitoring = &MonitoringSpec{ExposeDriverMetrics: true, MetricsProperties: ptr("a"), MetricsPropertiesFile: ptr("rel/m.properties"),
				Prometheus: &PrometheusSpec{Port: ptr[int32](9000), PortName: ptr("a_b"), ConfigFile: ptr("/p.yaml"), Configuration: ptr("rules: []")}}
		}, []wantErr{
			{"spark.monitoring.metricsPropertiesFile", "not both"},
			{"spark.monitoring.metricsPropertiesFile", "must be an absolute path"},
			{"spark.monitoring.prometheus.jmxExporterJar", "Required value: give the path of the JMX exporter"},
			{"spark.monitoring.prometheus.portName", `Invalid value: "a_b"`},
			{"spark.driver.ports[0]", "clashes with the JMX exporter's port a_b 9000"},
			{"spark.monitoring.prometheus.configFile", "not both"},
		}},
		{"a file in the image under the mounted metrics files", func(s *spec) {
			s.Monitoring = &MonitoringSpec{MetricsPropertiesFile: ptr("/etc/metrics/conf/metrics.properties"), Prometheus: &PrometheusSpec{JmxExporterJar: "/j.jar"}}
		}, []wantErr{{"spark.monitoring.metricsPropertiesFile", "is hidden by the run's metrics files, which are mounted at /etc/metrics/conf"}}},
		{"both files in the image: nothing is mounted", func(s *spec) {
			s.Monitoring = &MonitoringSpec{MetricsPropertiesFile: ptr("/etc/metrics/conf/metrics.properties"),
				Prometheus: &PrometheusSpec{JmxExporterJar: "/j.jar", ConfigFile: ptr("/etc/metrics/conf/prometheus.yaml")}}
		}, nil},
		{"prometheus on Spark's port", func(s *spec) {
			s.Monitoring = &MonitoringSpec{Prometheus: &PrometheusSpec{JmxExporterJar: "/j.jar", Port: ptr[int32](4040)}}
		}, []wantErr{{"spark.monitoring.prometheus.port", "is one of Spark's own ports"}}},

		// sparkUIOptions
		{"UI service is valid", func(s *spec) {
			s.SparkUIOptions = &SparkUIConfiguration{ServicePort: ptr[int32](80), ServicePortName: ptr("http"), ServiceType: ptr(corev1.ServiceTypeNodePort)}
		}, nil},
		{"UI service problems", func(s *spec) {
			s.SparkUIOptions = &SparkUIConfiguration{ServicePort: ptr[int32](0), ServicePortName: ptr("Http"), ServiceType: ptr(corev1.ServiceTypeExternalName),
				ServiceLabels: map[string]string{"spark-app-selector": "x"}}
		}, []wantErr{
			{"spark.sparkUIOptions.servicePort", "Invalid value: 0"},
			{"spark.sparkUIOptions.servicePortName", "is not a Service port name"},
			{"spark.sparkUIOptions.serviceType", `Unsupported value: "ExternalName"`},
			{"spark.sparkUIOptions.serviceLabels[spark-app-selector]", "Forbidden"},
		}},

		// batchScheduler
		{"volcano with a queue is valid", func(s *spec) {
			s.BatchScheduler = ptr("volcano")
			s.BatchSchedulerOptions = &BatchSchedulerConfiguration{Queue: ptr("root.etl"), PriorityClassName: ptr("high")}
		}, nil},
		{"volcano with resources is valid", func(s *spec) {
			s.BatchScheduler = ptr("volcano")
			s.BatchSchedulerOptions = &BatchSchedulerConfiguration{Resources: corev1.ResourceList{"cpu": resource.MustParse("4"), "nvidia.com/gpu": resource.MustParse("2")}}
		}, nil},
		{"volcano queue is an object name", func(s *spec) {
			s.BatchScheduler = ptr("volcano")
			s.BatchSchedulerOptions = &BatchSchedulerConfiguration{Queue: ptr("Root_ETL")}
		}, []wantErr{{"spark.batchSchedulerOptions.queue", "is not a Volcano queue name"}}},
		{"resources with bad names and negative quantities", func(s *spec) {
			s.BatchScheduler = ptr("volcano")
			s.BatchSchedulerOptions = &BatchSchedulerConfiguration{Resources: corev1.ResourceList{"cpu": resource.MustParse("-1"), "gpu!": resource.MustParse("1")}}
		}, []wantErr{
			{"spark.batchSchedulerOptions.resources[cpu]", `Invalid value: "-1": must not be negative`},
			{"spark.batchSchedulerOptions.resources[gpu!]", "is not a resource name such as cpu, memory or nvidia.com/gpu"},
		}},
		{"yunikorn has no PodGroup to size", func(s *spec) {
			s.BatchScheduler = ptr("yunikorn")
			s.BatchSchedulerOptions = &BatchSchedulerConfiguration{Resources: corev1.ResourceList{"cpu": resource.MustParse("4")}}
		}, []wantErr{{"spark.batchSchedulerOptions.resources", "Forbidden: YuniKorn has no PodGroup to size"}}},
		{"a driver in a PodGroup of its own", func(s *spec) {
			s.BatchScheduler = ptr("volcano")
			s.Driver.Annotations = map[string]string{"scheduling.k8s.io/group-name": "mine"}
			s.BatchSchedulerOptions = &BatchSchedulerConfiguration{Queue: ptr("etl"), Resources: corev1.ResourceList{"cpu": resource.MustParse("4")}}
		}, []wantErr{
			{"spark.batchSchedulerOptions.queue", "Forbidden: spark.driver.annotations names a PodGroup of its own (scheduling.k8s.io/group-name), so sparkplug creates none"},
			{"spark.batchSchedulerOptions.resources", "Forbidden: spark.driver.annotations names a PodGroup of its own"},
		}},
		{"kube-scheduler with resources and a scheduler of another name is valid", func(s *spec) {
			s.BatchScheduler = ptr("kube-scheduler")
			s.Driver.SchedulerName = ptr("scheduler-plugins-scheduler")
			s.Executor.SchedulerName = ptr("scheduler-plugins-scheduler")
			s.BatchSchedulerOptions = &BatchSchedulerConfiguration{PriorityClassName: ptr("high"), Resources: corev1.ResourceList{"cpu": resource.MustParse("4")}}
		}, nil},
		{"kube-scheduler: one scheduler for the group, no queue", func(s *spec) {
			s.BatchScheduler = ptr("kube-scheduler")
			s.Driver.SchedulerName = ptr("scheduler-plugins-scheduler")
			s.BatchSchedulerOptions = &BatchSchedulerConfiguration{Queue: ptr("etl")}
		}, []wantErr{
			{"spark.batchSchedulerOptions.queue", "Forbidden: scheduler-plugins' PodGroup has no queue"},
			{"spark.executor.schedulerName", `Invalid value: "kube-scheduler": the driver goes to scheduler scheduler-plugins-scheduler: with batchScheduler kube-scheduler the driver and the executors must go to the same scheduler`},
		}},
		{"unknown batch scheduler", func(s *spec) { s.BatchScheduler = ptr("slurm") },
			[]wantErr{{"spark.batchScheduler", `Unsupported value: "slurm": supported values: "kube-scheduler", "volcano", "yunikorn"`}}},
		{"batch scheduler and another schedulerName", func(s *spec) {
			s.BatchScheduler = ptr("yunikorn")
			s.Executor.SchedulerName = ptr("default-scheduler")
			s.BatchSchedulerOptions = &BatchSchedulerConfiguration{Queue: ptr("root queue")}
		}, []wantErr{
			{"spark.batchSchedulerOptions.queue", "is not a valid label value, which YuniKorn reads the queue from"},
			{"spark.executor.schedulerName", "batchScheduler yunikorn schedules the Spark pods; remove schedulerName"},
		}},
		{"options without a batch scheduler", func(s *spec) { s.BatchSchedulerOptions = &BatchSchedulerConfiguration{Queue: ptr("q")} },
			[]wantErr{{"spark.batchScheduler", "Required value: batchSchedulerOptions needs a batchScheduler"}}},
		{"empty unsupported list is not set", func(s *spec) { s.Driver.Ports = []Port{} }, nil},
	})
}
