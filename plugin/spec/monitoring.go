package spec

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// PrometheusPort is the JMX exporter's port: monitoring.prometheus.port,
// or the Spark operator's default 8090.
func (m *MonitoringSpec) PrometheusPort() int32 {
	if m == nil || m.Prometheus == nil || m.Prometheus.Port == nil {
		return spark.PrometheusPort
	}
	return *m.Prometheus.Port
}

// PrometheusPortName is the JMX exporter's container port name:
// monitoring.prometheus.portName, or the Spark operator's default.
func (m *MonitoringSpec) PrometheusPortName() string {
	if m == nil || m.Prometheus == nil || m.Prometheus.PortName == nil || *m.Prometheus.PortName == "" {
		return spark.PrometheusPortName
	}
	return *m.Prometheus.PortName
}

// validateMonitoring follows the Spark operator's monitoring, which does
// anything only with prometheus set. sparkplug also honours
// metricsProperties and metricsPropertiesFile alone (Spark's own sinks,
// such as its PrometheusServlet, need no exporter), and rejects what the
// operator would silently ignore: exposing metrics without the exporter
// that serves them, or two sources for one file.
func validateMonitoring(p *field.Path, s *SparkApplicationSpec) field.ErrorList {
	m := s.Monitoring
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	if m.MetricsProperties != nil && m.MetricsPropertiesFile != nil {
		errs = append(errs, field.Invalid(p.Child("metricsPropertiesFile"), *m.MetricsPropertiesFile, "give metricsProperties (the file's content) or metricsPropertiesFile (a file in the image), not both"))
	}
	if m.MetricsPropertiesFile != nil {
		errs = append(errs, validateFilePath(p.Child("metricsPropertiesFile"), *m.MetricsPropertiesFile)...)
	}
	// The run's own metrics files are mounted over the directory.
	mounted := m.MetricsPropertiesFile == nil && (m.Prometheus != nil || m.MetricsProperties != nil) ||
		m.Prometheus != nil && m.Prometheus.ConfigFile == nil
	for _, f := range []struct {
		path *field.Path
		file *string
	}{{p.Child("metricsPropertiesFile"), m.MetricsPropertiesFile}, {p.Child("prometheus", "configFile"), promConfigFile(m)}} {
		if mounted && f.file != nil && strings.HasPrefix(*f.file, spark.MetricsConfDir+"/") {
			errs = append(errs, field.Invalid(f.path, *f.file, "is hidden by the run's metrics files, which are mounted at "+spark.MetricsConfDir+"; keep the file elsewhere in the image"))
		}
	}
	if m.Prometheus == nil {
		for _, f := range []struct {
			name string
			on   bool
		}{{"exposeDriverMetrics", m.ExposeDriverMetrics}, {"exposeExecutorMetrics", m.ExposeExecutorMetrics}} {
			if f.on {
				errs = append(errs, field.Required(p.Child("prometheus"), f.name+" needs prometheus: the JMX exporter java agent serves the metrics; give prometheus.jmxExporterJar"))
			}
		}
		return errs
	}

	pp := p.Child("prometheus")
	prom := m.Prometheus
	switch jar := strings.TrimSpace(prom.JmxExporterJar); {
	case jar == "":
		errs = append(errs, field.Required(pp.Child("jmxExporterJar"), "give the path of the JMX exporter java agent jar in the image, e.g. /prometheus/jmx_prometheus_javaagent-0.20.0.jar"))
	case strings.ContainsAny(prom.JmxExporterJar, " \t\r\n="):
		errs = append(errs, field.Invalid(pp.Child("jmxExporterJar"), prom.JmxExporterJar, "must be a path without spaces or '=': it goes into -javaagent:<jar>=<port>:<config>"))
	}
	port := m.PrometheusPort()
	if prom.Port != nil {
		for _, msg := range validation.IsValidPortNum(int(port)) {
			errs = append(errs, field.Invalid(pp.Child("port"), port, msg))
		}
		if port == spark.DriverPort || port == spark.BlockManagerPort || port == spark.UIPort {
			errs = append(errs, field.Invalid(pp.Child("port"), port, "is one of Spark's own ports (7078, 7079, 4040); choose another"))
		}
	}
	name := m.PrometheusPortName()
	if prom.PortName != nil {
		for _, msg := range validation.IsValidPortName(name) {
			errs = append(errs, field.Invalid(pp.Child("portName"), name, msg))
		}
	}
	for _, r := range []struct {
		role   string
		expose bool
		ports  []Port
	}{{spark.RoleDriver, m.ExposeDriverMetrics, s.Driver.Ports}, {spark.RoleExecutor, m.ExposeExecutorMetrics, s.Executor.Ports}} {
		if !r.expose {
			continue
		}
		for i, port := range r.ports {
			if port.ContainerPort == m.PrometheusPort() || port.Name == name {
				errs = append(errs, field.Invalid(rootPath.Child(r.role, "ports").Index(i), port.Name,
					fmt.Sprintf("clashes with the JMX exporter's port %s %d (monitoring.prometheus.portName and port); choose another", name, m.PrometheusPort())))
			}
		}
	}
	if prom.ConfigFile != nil {
		errs = append(errs, validateFilePath(pp.Child("configFile"), *prom.ConfigFile)...)
		if prom.Configuration != nil {
			errs = append(errs, field.Invalid(pp.Child("configFile"), *prom.ConfigFile, "give configuration (the exporter's YAML) or configFile (a file in the image), not both"))
		}
	}
	return errs
}

func promConfigFile(m *MonitoringSpec) *string {
	if m.Prometheus == nil {
		return nil
	}
	return m.Prometheus.ConfigFile
}

func validateFilePath(p *field.Path, v string) field.ErrorList {
	switch {
	case strings.TrimSpace(v) == "":
		return field.ErrorList{field.Required(p, "give the absolute path of the file in the image")}
	case !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \t\r\n"):
		return field.ErrorList{field.Invalid(p, v, "must be an absolute path without spaces, e.g. /etc/metrics/conf/metrics.properties")}
	}
	return nil
}
