package objects

import (
	"fmt"
	"maps"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/confvalue"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// exposed are the objects that expose the driver, in creation order: the
// UI Service when ui is not nil (sparkUIOptions; client mode always has
// one), the Ingress to it when the body has a URL format for the UI, and
// per driverIngressOptions entry a Service and, with an ingressURLFormat,
// an Ingress to it. This is what the Spark operator creates once the
// driver runs (its Submitted state: createWebUIService,
// createWebUIIngress, createDriverIngressServiceFromConfiguration,
// createDriverIngress); sparkplug creates them with the driver, owned by
// it (OwnedBy), so they go with it instead of with a SparkApplication.
func exposed(s *spec.SparkApplicationSpec, ui *spec.SparkUIConfiguration, r Run, n Names, c map[string]string) ([]Object, error) {
	var out []Object
	if ui != nil {
		svc := uiService(ui, r, n, c)
		out = append(out, svc)
		if s.UIIngressURLFormat() != "" {
			u, err := spec.IngressURL(s.UIIngressURLFormat(), urlValues(r, n))
			if err != nil {
				return nil, fmt.Errorf("UI ingress URL %q: %w", s.UIIngressURLFormat(), err)
			}
			out = append(out, ingress(n.UIIngress, u, svc, ui.IngressAnnotations, ui.IngressTLS, s.IngressClassName(), r, n))
		}
	}
	for _, o := range s.DriverIngressOptions {
		port := ptr.Deref(o.ServicePort, 0)
		svc := exposingService(n.DriverIngressService(port), ptr.Deref(o.ServicePortName, spark.DriverIngressPortNamePrefix+strconv.Itoa(int(port))),
			port, port, ptr.Deref(o.ServiceType, corev1.ServiceTypeClusterIP), o.ServiceLabels, o.ServiceAnnotations, r, n)
		out = append(out, svc)
		if o.IngressURLFormat == "" {
			continue
		}
		u, err := spec.IngressURL(o.IngressURLFormat, urlValues(r, n))
		if err != nil {
			return nil, fmt.Errorf("driver ingress of port %d: URL %q: %w", port, o.IngressURLFormat, err)
		}
		out = append(out, ingress(n.DriverIngress(port), u, svc, o.IngressAnnotations, o.IngressTLS, s.IngressClassName(), r, n))
	}
	return out, nil
}

// urlValues are what the placeholders of a run's Ingress URL formats stand
// for: {{$appName}} the run's name, which names all its objects as a
// SparkApplication's name names the operator's (<app>-ui-svc,
// <app>-ui-ingress), so every run and attempt has a URL of its own.
func urlValues(r Run, n Names) spec.URLValues {
	return spec.URLValues{AppName: n.Prefix, AppNamespace: r.Workflow.Namespace, AppID: n.AppID}
}

// ingress is one Ingress to a Service of the driver, as the Spark
// operator builds it (createDriverIngressV1): one rule for the URL's host,
// one path of type ImplementationSpecific to the Service's port, the
// body's annotations and TLS, the class the plugin or the body names.
// Under a path other than the root it follows ingress-nginx's convention,
// as the operator does: the path is followed by (/|$)(.*) and rewritten to
// /$2, so the driver sees its own paths (validation rejects a
// rewrite-target of the body's there). Its labels and annotations are
// sparkplug's, as on the run's other objects, so the workflow's cache
// sees it; the operator labels it with the application's name instead.
func ingress(name string, u *url.URL, svc *corev1.Service, annotations map[string]string, tls []networkingv1.IngressTLS, class string, r Run, n Names) *networkingv1.Ingress {
	ann := maps.Clone(annotations)
	if ann == nil {
		ann = map[string]string{}
	}
	path := u.Path
	if spec.HasSubPath(u) {
		path += spark.IngressSubPathPattern
		ann[spark.AnnotationNginxRewriteTarget] = spark.NginxRewriteTarget
	}
	maps.Copy(ann, sparkplugAnnotations(r))
	labels := sparkplugLabels(r)
	labels[spark.LabelAppSelector] = n.AppID
	var tlsCopy []networkingv1.IngressTLS
	for _, t := range tls {
		tlsCopy = append(tlsCopy, *t.DeepCopy())
	}
	ing := &networkingv1.Ingress{
		TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   r.Workflow.Namespace,
			Labels:      labels,
			Annotations: ann,
		},
		Spec: networkingv1.IngressSpec{
			TLS: tlsCopy,
			Rules: []networkingv1.IngressRule{{
				Host: u.Host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path:     path,
						PathType: ptr.To(networkingv1.PathTypeImplementationSpecific),
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: svc.Name,
							Port: networkingv1.ServiceBackendPort{Number: svc.Spec.Ports[0].Port},
						}},
					}},
				}},
			}},
		},
	}
	if class != "" {
		ing.Spec.IngressClassName = ptr.To(class)
	}
	return ing
}

// uiProxyConf puts the Spark UI under the path of its Ingress, as the
// Spark operator does (configWebUI): spark.ui.proxyBase is the path, which
// the UI writes its links under, and spark.ui.proxyRedirectUri "/" makes
// its redirects keep the Ingress's host. Properties sets them before the
// body's sparkConf, which wins, as the operator sets them only when unset.
// Unlike the operator, a URL whose path is the root ("/") sets neither:
// spark.ui.proxyBase "/" would start every link with //, which a browser
// reads as another host. A URL format that does not parse sets nothing;
// building the Ingress fails on it.
func uiProxyConf(c map[string]string, s *spec.SparkApplicationSpec, r Run, n Names) {
	if !s.HasUIIngress() {
		return
	}
	u, err := spec.IngressURL(s.UIIngressURLFormat(), urlValues(r, n))
	if err != nil || !spec.HasSubPath(u) {
		return
	}
	c[spark.ConfUIProxyBase] = u.Path
	c[spark.ConfUIProxyRedirectURI] = "/"
}

// SparkUIURL is where the UI of a driver of the body is reached, the
// spark-ui output: the URL of its UI Ingress when it has one, else the
// in-cluster URL of its UI Service (sparkUIOptions, or client mode), else
// that of the headless driver Service's UI port. An Ingress URL has the
// scheme its format writes, else https when the Ingress has TLS, else
// http (the operator's WebUIIngressAddress is always http unless written);
// a URL without a host is its path alone, on any host the ingress
// controller serves.
func SparkUIURL(s *spec.SparkApplicationSpec, driver *corev1.Pod) string {
	if s.HasUIIngress() {
		v := spec.URLValues{AppName: RunName(driver.Name), AppNamespace: driver.Namespace, AppID: driver.Labels[spark.LabelAppSelector]}
		if u, err := spec.IngressURL(s.UIIngressURLFormat(), v); err == nil {
			scheme := u.Scheme
			if scheme == "" {
				scheme = "http"
				if s.SparkUIOptions != nil && len(s.SparkUIOptions.IngressTLS) > 0 {
					scheme = "https"
				}
			}
			if u.Host == "" {
				return u.Path
			}
			return scheme + "://" + u.Host + u.Path
		}
	}
	return SparkUIClusterURL(s, driver)
}

// SparkUIClusterURL is the in-cluster URL of a driver's UI, whatever
// Ingress it has: its UI Service's (sparkUIOptions), else the headless
// driver Service's at spark.ui.port (headless: the name resolves to the
// pod, so the port is the driver's own).
func SparkUIClusterURL(s *spec.SparkApplicationSpec, driver *corev1.Pod) string {
	svc, port := ServiceName(driver.Name), int32(spark.UIPort)
	if s.HasUIService() {
		svc = UIServiceName(driver.Name)
		if o := s.SparkUIOptions; o != nil && o.ServicePort != nil {
			port = *o.ServicePort
		}
	} else if p, err := confvalue.Int(spark.ConfUIPort, s.SparkConf[spark.ConfUIPort]); err == nil && p > 0 && p < 65536 {
		port = p
	}
	return fmt.Sprintf("http://%s.%s.svc:%d", svc, driver.Namespace, port)
}
