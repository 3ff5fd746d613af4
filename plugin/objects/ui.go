package objects

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// uiService is the Spark UI Service of sparkUIOptions, as the Spark
// operator creates it (web_ui.go, driveringress.go): named
// <prefix>-ui-svc (the operator's <app>-ui-svc), selecting the driver,
// port servicePort (default 4040) named servicePortName (default
// spark-driver-ui-port) forwarding to spark.ui.port, of serviceType
// (default ClusterIP), with the body's service labels and annotations.
// Unlike the operator's, which lives as long as the SparkApplication, it
// is owned by the driver pod (OwnedBy), so it goes with the driver.
func uiService(o *spec.SparkUIConfiguration, r Run, n Names, c map[string]string) *corev1.Service {
	return exposingService(n.UIService, ptr.Deref(o.ServicePortName, spark.UIServicePortName),
		ptr.Deref(o.ServicePort, int32(spark.UIPort)), int32(uiPort(c)),
		ptr.Deref(o.ServiceType, corev1.ServiceTypeClusterIP), o.ServiceLabels, o.ServiceAnnotations, r, n)
}

// exposingService is a Service to one port of the driver, as the Spark
// operator makes them (createDriverIngressService) for the UI and for
// driverIngressOptions: it selects the driver, its one port forwards to
// target, and it carries the body's labels and annotations under
// sparkplug's own.
func exposingService(name, portName string, port, target int32, typ corev1.ServiceType, bodyLabels, bodyAnnotations map[string]string, r Run, n Names) *corev1.Service {
	labels := maps.Clone(bodyLabels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, sparkplugLabels(r))
	labels[spark.LabelAppSelector] = n.AppID
	annotations := maps.Clone(bodyAnnotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	maps.Copy(annotations, sparkplugAnnotations(r))
	return &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   r.Workflow.Namespace,
			Labels:      labels,
			Annotations: annotations,
		},
		Spec: corev1.ServiceSpec{
			Type: typ,
			Selector: map[string]string{
				spark.LabelAppSelector: n.AppID,
				spark.LabelRole:        spark.RoleDriver,
			},
			Ports: []corev1.ServicePort{{
				Name:       portName,
				Port:       port,
				TargetPort: intstr.FromInt32(target),
			}},
		},
	}
}
