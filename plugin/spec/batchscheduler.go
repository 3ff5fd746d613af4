package spec

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
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

var supportedUIServiceTypes = []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer}

// validateSparkUIOptions checks the UI Service's shape and the UI
// Ingress's annotations and TLS; whether there is an Ingress for them
// depends on the plugin's defaults too (validateWithDefaults).
func validateSparkUIOptions(p *field.Path, o *SparkUIConfiguration) field.ErrorList {
	if o == nil {
		return nil
	}
	var errs field.ErrorList
	if o.ServicePort != nil {
		for _, msg := range validation.IsValidPortNum(int(*o.ServicePort)) {
			errs = append(errs, field.Invalid(p.Child("servicePort"), *o.ServicePort, msg))
		}
	}
	if o.ServicePortName != nil {
		errs = append(errs, validateName(p.Child("servicePortName"), *o.ServicePortName, validation.IsDNS1123Label, "a Service port name")...)
	}
	if o.ServiceType != nil && !slices.Contains(supportedUIServiceTypes, *o.ServiceType) {
		errs = append(errs, field.NotSupported(p.Child("serviceType"), *o.ServiceType, supportedUIServiceTypes))
	}
	errs = append(errs, validateLabels(p.Child("serviceLabels"), o.ServiceLabels)...)
	errs = append(errs, validateAnnotations(p.Child("serviceAnnotations"), o.ServiceAnnotations)...)
	errs = append(errs, validateAnnotations(p.Child("ingressAnnotations"), o.IngressAnnotations)...)
	errs = append(errs, validateIngressTLS(p.Child("ingressTLS"), o.IngressTLS)...)
	return errs
}

var supportedBatchSchedulers = []string{spark.SchedulerKubeScheduler, spark.SchedulerVolcano, spark.SchedulerYuniKorn}

// validateBatchScheduler accepts the Spark operator's batch schedulers and
// rejects what one of them cannot honour. The operator ignores some of
// these silently (queue and resources with kube-scheduler, resources with
// yunikorn); sparkplug says so instead.
//
//   - volcano and yunikorn name the pods' scheduler, so a different driver
//     or executor schedulerName is a contradiction.
//   - kube-scheduler names the scheduler kube-scheduler unless
//     driver.schedulerName and executor.schedulerName name another; the
//     driver and the executors of one PodGroup must go to the same one.
//   - queue: Volcano's PodGroup takes a DNS-1123 subdomain (its CRD's
//     pattern), YuniKorn a label value; scheduler-plugins' PodGroup has
//     none.
//   - resources size a PodGroup: kube-scheduler's and Volcano's, not
//     YuniKorn's task groups, which are sized from the pods.
//   - A driver that names a PodGroup of its own gets none from sparkplug,
//     so queue and resources would size nothing.
func validateBatchScheduler(s *SparkApplicationSpec) field.ErrorList {
	var errs field.ErrorList
	p := rootPath.Child("batchScheduler")
	name := ""
	if s.BatchScheduler != nil {
		name = *s.BatchScheduler
		switch name {
		case spark.SchedulerVolcano, spark.SchedulerYuniKorn:
			for role, sched := range map[string]*string{spark.RoleDriver: s.Driver.SchedulerName, spark.RoleExecutor: s.Executor.SchedulerName} {
				if sched != nil && *sched != "" && *sched != name {
					errs = append(errs, field.Invalid(rootPath.Child(role, "schedulerName"), *sched, fmt.Sprintf("batchScheduler %s schedules the Spark pods; remove schedulerName", name)))
				}
			}
		case spark.SchedulerKubeScheduler:
			scheduler := func(n *string) string {
				if n == nil || *n == "" {
					return spark.SchedulerKubeScheduler
				}
				return *n
			}
			if d, e := scheduler(s.Driver.SchedulerName), scheduler(s.Executor.SchedulerName); d != e {
				errs = append(errs, field.Invalid(rootPath.Child(spark.RoleExecutor, "schedulerName"), e, fmt.Sprintf(
					"the driver goes to scheduler %s: with batchScheduler kube-scheduler the driver and the executors must go to the same scheduler, the one running scheduler-plugins' Coscheduling plugin; set the same schedulerName on both (unset is kube-scheduler)", d)))
			}
		default:
			errs = append(errs, field.NotSupported(p, name, supportedBatchSchedulers))
		}
	}
	o := s.BatchSchedulerOptions
	if o == nil {
		return sortErrs(errs)
	}
	op := rootPath.Child("batchSchedulerOptions")
	if s.BatchScheduler == nil {
		errs = append(errs, field.Required(p, "batchSchedulerOptions needs a batchScheduler: kube-scheduler, volcano or yunikorn"))
	}
	ownGroup := ""
	switch name {
	case spark.SchedulerVolcano:
		if _, ok := s.Driver.Annotations[spark.AnnotationVolcanoGroup]; ok {
			ownGroup = "spark.driver.annotations names a PodGroup of its own (" + spark.AnnotationVolcanoGroup + ")"
		}
	case spark.SchedulerKubeScheduler:
		if _, ok := s.Driver.Labels[spark.LabelPodGroup]; ok {
			ownGroup = "spark.driver.labels names a PodGroup of its own (" + spark.LabelPodGroup + ")"
		}
	}
	if o.Queue != nil {
		q := *o.Queue
		qp := op.Child("queue")
		switch {
		case strings.TrimSpace(q) == "":
			errs = append(errs, field.Invalid(qp, q, "must name a queue; remove queue for the scheduler's default"))
		case name == spark.SchedulerYuniKorn:
			// YuniKorn reads the queue from a label.
			for _, msg := range validation.IsValidLabelValue(q) {
				errs = append(errs, field.Invalid(qp, q, "is not a valid label value, which YuniKorn reads the queue from: "+msg))
			}
		case name == spark.SchedulerKubeScheduler:
			errs = append(errs, field.Forbidden(qp, "scheduler-plugins' PodGroup has no queue; remove queue (the Spark operator ignores it)"))
		case ownGroup != "":
			errs = append(errs, field.Forbidden(qp, ownGroup+", so sparkplug creates none to put in a queue; set the queue on that PodGroup"))
		case name == spark.SchedulerVolcano:
			errs = append(errs, validateName(qp, q, validation.IsDNS1123Subdomain, "a Volcano queue name")...)
		}
	}
	if o.PriorityClassName != nil {
		errs = append(errs, validateName(op.Child("priorityClassName"), *o.PriorityClassName, validation.IsDNS1123Subdomain, "a PriorityClass name")...)
	}
	if len(o.Resources) > 0 {
		rp := op.Child("resources")
		switch {
		case name == spark.SchedulerYuniKorn:
			errs = append(errs, field.Forbidden(rp, "YuniKorn has no PodGroup to size: its task groups take the pods' requests; remove resources (the Spark operator ignores it)"))
		case ownGroup != "":
			errs = append(errs, field.Forbidden(rp, ownGroup+", so sparkplug creates none to size; set minResources on that PodGroup"))
		}
		for _, r := range slices.Sorted(maps.Keys(o.Resources)) {
			for _, msg := range validation.IsQualifiedName(string(r)) {
				errs = append(errs, field.Invalid(rp.Key(string(r)), string(r), "is not a resource name such as cpu, memory or nvidia.com/gpu: "+msg))
			}
			if q := o.Resources[r]; q.Sign() < 0 {
				errs = append(errs, field.Invalid(rp.Key(string(r)), q.String(), "must not be negative"))
			}
		}
	}
	return sortErrs(errs)
}

// sortErrs orders errors by field, so a map's iteration order never shows.
func sortErrs(errs field.ErrorList) field.ErrorList {
	slices.SortStableFunc(errs, func(a, b *field.Error) int { return strings.Compare(a.Field, b.Field) })
	return errs
}
