package objects

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// Monitoring follows the Spark operator's Prometheus set-up
// (monitoring_config.go and the webhook's addPrometheusConfig), adapted so
// that a run still creates one ConfigMap: the two files the operator keeps
// in a ConfigMap of their own (<app>-prom-conf) are keys of the run's
// ConfigMap, mounted at /etc/metrics/conf, the operator's path.
//
//   - spark.metrics.conf is /etc/metrics/conf/metrics.properties (the
//     body's metricsProperties, or a default with Spark's JMX sink and JVM
//     source), or metricsPropertiesFile when the file is in the image;
//   - with prometheus: spark.metrics.namespace <namespace>.<run prefix>,
//     and on each role that exposes its metrics, the JMX exporter
//     (-javaagent:<jar>=<port>:<config>) added to its extraJavaOptions,
//     its port (jmx-exporter 8090 by default) on the Spark container, and
//     the prometheus.io/scrape, port and path annotations.
//
// Two differences, both so that nothing is silently lost: the metrics
// files are mounted in every Spark pod (Spark reads spark.metrics.conf in
// the driver and in each executor; the operator mounts them only where
// metrics are exposed, and the others log that the file is missing), and
// metricsProperties works without prometheus (the operator ignores the
// whole monitoring block then).

// defaultMetricsProperties is metrics.properties when the body gives none:
// Spark's JMX sink, which the exporter reads, and JVM metrics of the driver
// and the executors.
const defaultMetricsProperties = `*.sink.jmx.class=org.apache.spark.metrics.sink.JmxSink
driver.source.jvm.class=org.apache.spark.metrics.source.JvmSource
executor.source.jvm.class=org.apache.spark.metrics.source.JvmSource
`

// defaultPrometheusConfiguration is the JMX exporter's configuration when
// the body gives none. Spark's JMX sink names every metric
// <spark.metrics.namespace>.<driver or executor id>.<source>.<metric>
// (an MBean metrics:name=...,type=gauges or counters); sparkplug sets the
// namespace to <namespace>.<run>, so each rule reads the Kubernetes
// namespace, the run, the executor id and the metric from the name. The
// patterns are not anchored and accept the type property before or after
// the name. The exporter replaces the characters a Prometheus name cannot
// hold with "_", so the driver's BlockManager memory.memUsed_MB gauge is
// spark_driver_blockmanager_memory_memused_mb.
const defaultPrometheusConfiguration = `lowercaseOutputName: true
rules:
  # The driver: <namespace>.<run>.driver.<source>.<metric>
  - pattern: 'metrics<(?:type=[^,>]+, )?name=([^.,>]+)\.([^.,>]+)\.driver\.([^,>]+)(?:, type=[^>]+)?><>Value'
    name: spark_driver_$3
    type: GAUGE
    labels: {app_namespace: "$1", app_id: "$2"}
  - pattern: 'metrics<(?:type=[^,>]+, )?name=([^.,>]+)\.([^.,>]+)\.driver\.([^,>]+)(?:, type=[^>]+)?><>Count'
    name: spark_driver_$3_count
    type: COUNTER
    labels: {app_namespace: "$1", app_id: "$2"}
  # The executors: <namespace>.<run>.<executor id>.executor.<metric>
  - pattern: 'metrics<(?:type=[^,>]+, )?name=([^.,>]+)\.([^.,>]+)\.([0-9]+)\.executor\.([^,>]+)(?:, type=[^>]+)?><>Value'
    name: spark_executor_$4
    type: GAUGE
    labels: {app_namespace: "$1", app_id: "$2", executor_id: "$3"}
  - pattern: 'metrics<(?:type=[^,>]+, )?name=([^.,>]+)\.([^.,>]+)\.([0-9]+)\.executor\.([^,>]+)(?:, type=[^>]+)?><>Count'
    name: spark_executor_$4_count
    type: COUNTER
    labels: {app_namespace: "$1", app_id: "$2", executor_id: "$3"}
  # Their other sources (jvm, NettyBlockTransfer, ...):
  # <namespace>.<run>.<executor id>.<source>.<metric>
  - pattern: 'metrics<(?:type=[^,>]+, )?name=([^.,>]+)\.([^.,>]+)\.([0-9]+)\.([^,>]+)(?:, type=[^>]+)?><>Value'
    name: spark_executor_$4
    type: GAUGE
    labels: {app_namespace: "$1", app_id: "$2", executor_id: "$3"}
  - pattern: 'metrics<(?:type=[^,>]+, )?name=([^.,>]+)\.([^.,>]+)\.([0-9]+)\.([^,>]+)(?:, type=[^>]+)?><>Count'
    name: spark_executor_$4_count
    type: COUNTER
    labels: {app_namespace: "$1", app_id: "$2", executor_id: "$3"}
`

// metricsFiles are the monitoring files the run's ConfigMap carries, by
// key: those the body asks for and does not keep in the image.
func metricsFiles(s *spec.SparkApplicationSpec) map[string]string {
	m := s.Monitoring
	if m == nil {
		return nil
	}
	out := map[string]string{}
	if m.MetricsPropertiesFile == nil && (m.Prometheus != nil || m.MetricsProperties != nil) {
		out[spark.MetricsPropertiesKey] = ptr.Deref(m.MetricsProperties, defaultMetricsProperties)
	}
	if p := m.Prometheus; p != nil && p.ConfigFile == nil {
		out[spark.PrometheusConfigKey] = ptr.Deref(p.Configuration, defaultPrometheusConfiguration)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// monitoringConf adds to the conf derived from the body (the first layer
// of Properties) the metrics keys and the scrape annotations.
func monitoringConf(c map[string]string, s *spec.SparkApplicationSpec, r Run, n Names) {
	m := s.Monitoring
	if m == nil {
		return
	}
	switch {
	case m.MetricsPropertiesFile != nil:
		c[spark.ConfMetricsConf] = *m.MetricsPropertiesFile
	case m.Prometheus != nil || m.MetricsProperties != nil:
		c[spark.ConfMetricsConf] = path.Join(spark.MetricsConfDir, spark.MetricsPropertiesKey)
	}
	if m.Prometheus == nil {
		return
	}
	c[spark.ConfMetricsNamespace] = r.Workflow.Namespace + "." + n.Prefix
	for _, role := range []struct {
		expose bool
		prefix string
	}{{m.ExposeDriverMetrics, spark.ConfDriverAnnotationPrefix}, {m.ExposeExecutorMetrics, spark.ConfExecutorAnnotationPrefix}} {
		if role.expose {
			c[role.prefix+spark.AnnotationPromScrape] = "true"
			c[role.prefix+spark.AnnotationPromPort] = strconv.Itoa(int(m.PrometheusPort()))
			c[role.prefix+spark.AnnotationPromPath] = spark.PrometheusMetricsPath
		}
	}
}

// addJavaAgent appends the JMX exporter agent to the extraJavaOptions of
// each role that exposes its metrics. It runs after the body's sparkConf
// is laid over the conf, so a sparkConf extraJavaOptions keeps the agent.
func addJavaAgent(c map[string]string, s *spec.SparkApplicationSpec) {
	m := s.Monitoring
	if m == nil || m.Prometheus == nil {
		return
	}
	config := path.Join(spark.MetricsConfDir, spark.PrometheusConfigKey)
	if m.Prometheus.ConfigFile != nil {
		config = *m.Prometheus.ConfigFile
	}
	agent := fmt.Sprintf("-javaagent:%s=%d:%s", m.Prometheus.JmxExporterJar, m.PrometheusPort(), config)
	for _, role := range []struct {
		expose bool
		key    string
	}{{m.ExposeDriverMetrics, spark.ConfDriverExtraJavaOptions}, {m.ExposeExecutorMetrics, spark.ConfExecutorExtraJavaOptions}} {
		if !role.expose || strings.Contains(c[role.key], agent) {
			continue
		}
		c[role.key] = strings.TrimSpace(c[role.key] + " " + agent)
	}
}

// prometheusPort is the JMX exporter's container port.
func prometheusPort(m *spec.MonitoringSpec) corev1.ContainerPort {
	return corev1.ContainerPort{Name: m.PrometheusPortName(), ContainerPort: m.PrometheusPort(), Protocol: corev1.ProtocolTCP}
}

// mountMetricsConf mounts the run's monitoring files, when it has any, at
// /etc/metrics/conf.
func mountMetricsConf(pod *corev1.Pod, ctr *corev1.Container, s *spec.SparkApplicationSpec, n Names) {
	files := metricsFiles(s)
	if len(files) == 0 {
		return
	}
	var items []corev1.KeyToPath
	for _, k := range []string{spark.MetricsPropertiesKey, spark.PrometheusConfigKey} {
		if _, ok := files[k]; ok {
			items = append(items, corev1.KeyToPath{Key: k, Path: k, Mode: ptr.To(confFileMode)})
		}
	}
	addVolume(pod, ctr, corev1.Volume{Name: spark.MetricsConfVolumeName, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: n.ConfigMap},
		Items:                items,
	}}}, corev1.VolumeMount{Name: spark.MetricsConfVolumeName, MountPath: spark.MetricsConfDir})
}
