package spec

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

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
