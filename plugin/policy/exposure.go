package policy

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
)

// exposer is the body's part a Service and its Ingress come from:
// sparkUIOptions, or one driverIngressOptions entry.
type exposer struct {
	// field is the part's path: spark.sparkUIOptions,
	// spark.driverIngressOptions[i].
	field string
	// urlFormat is the path of the Ingress's URL format.
	urlFormat string
	// annotations are the Ingress annotations the body gives.
	annotations map[string]string
}

// exposerOf is the part of the body a Service of the run was made from;
// ok is false for Spark's own driver Service.
func (c *checker) exposerOf(svc *corev1.Service) (exposer, bool) {
	if svc.Name == objects.UIServiceName(c.objs.Driver.Name) {
		e := exposer{field: "spark.sparkUIOptions", urlFormat: "spark.sparkplug.uiIngress.urlFormat"}
		if o := c.s.SparkUIOptions; o != nil {
			e.annotations = o.IngressAnnotations
		}
		return e, true
	}
	if len(svc.Spec.Ports) == 0 {
		return exposer{}, false
	}
	for i, o := range c.s.DriverIngressOptions {
		if o.ServicePort != nil && *o.ServicePort == svc.Spec.Ports[0].Port {
			f := "spark.driverIngressOptions[" + strconv.Itoa(i) + "]"
			return exposer{field: f, urlFormat: f + ".ingressURLFormat", annotations: o.IngressAnnotations}, true
		}
	}
	return exposer{}, false
}

// exposure: the Services' types (allowed-service-types), the Ingresses'
// hosts (allowed-ingress-host-suffixes) and the annotations the body
// gives them (snippets unless allow-ingress-snippets;
// allowed-ingress-annotation-prefixes).
func (c *checker) exposure() {
	services := map[string]*corev1.Service{}
	for _, o := range c.objs.Extra {
		svc, ok := o.(*corev1.Service)
		if !ok {
			continue
		}
		services[svc.Name] = svc
		e, ok := c.exposerOf(svc)
		if !ok {
			continue
		}
		typ := string(svc.Spec.Type)
		if typ == "" {
			typ = string(corev1.ServiceTypeClusterIP)
		}
		if len(c.p.ServiceTypes) > 0 && !slices.Contains(c.p.ServiceTypes, typ) {
			c.refuse(e.field+".serviceType", "allowed-service-types", "a Service of type %s is not one the plugin allows (%s)", typ, allowedList(c.p.ServiceTypes))
		}
	}
	for _, o := range c.objs.Extra {
		ing, ok := o.(*networkingv1.Ingress)
		if !ok {
			continue
		}
		svc := services[backendOf(ing)]
		if svc == nil {
			continue
		}
		e, ok := c.exposerOf(svc)
		if !ok {
			continue
		}
		c.ingressHosts(ing, e)
		c.ingressAnnotations(ing, e)
	}
}

// backendOf is the name of the Service an Ingress built by sparkplug
// routes to.
func backendOf(ing *networkingv1.Ingress) string {
	for _, r := range ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for _, p := range r.HTTP.Paths {
			if p.Backend.Service != nil {
				return p.Backend.Service.Name
			}
		}
	}
	return ""
}

func (c *checker) ingressHosts(ing *networkingv1.Ingress, e exposer) {
	if len(c.p.IngressHostSuffixes) == 0 {
		return
	}
	for _, r := range ing.Spec.Rules {
		switch {
		case r.Host == "":
			c.refuse(e.urlFormat, "allowed-ingress-host-suffixes", "an Ingress without a host routes every host to the driver; give a host in %s", allowedList(c.p.IngressHostSuffixes))
		case !c.hostAllowed(r.Host):
			c.refuse(e.urlFormat, "allowed-ingress-host-suffixes", "host %s is not in a domain the plugin allows (%s)", shown(r.Host), allowedList(c.p.IngressHostSuffixes))
		}
	}
	for i, t := range ing.Spec.TLS {
		for _, h := range t.Hosts {
			if !c.hostAllowed(h) {
				c.refuse(e.field+".ingressTLS["+strconv.Itoa(i)+"].hosts", "allowed-ingress-host-suffixes", "host %s is not in a domain the plugin allows (%s)", shown(h), allowedList(c.p.IngressHostSuffixes))
			}
		}
	}
}

// hostAllowed: host is one of the suffixes or a subdomain of one. A
// wildcard host is checked as the domain it covers.
func (c *checker) hostAllowed(host string) bool {
	host = strings.ToLower(strings.TrimPrefix(host, "*."))
	for _, s := range c.p.IngressHostSuffixes {
		s = strings.ToLower(strings.TrimPrefix(s, "."))
		if host == s || strings.HasSuffix(host, "."+s) {
			return true
		}
	}
	return false
}

// ingressAnnotations checks the annotations the body gives an Ingress;
// sparkplug's own (its bookkeeping, the rewrite of a sub path) are not the
// author's.
func (c *checker) ingressAnnotations(ing *networkingv1.Ingress, e exposer) {
	for _, k := range slices.Sorted(maps.Keys(e.annotations)) {
		if _, ok := ing.Annotations[k]; !ok {
			continue
		}
		at := e.field + ".ingressAnnotations[" + shown(k) + "]"
		if !c.p.AllowIngressSnippets && isSnippet(k) {
			c.refuse(at, "allow-ingress-snippets", "a snippet annotation puts raw configuration into the ingress controller, which serves every namespace; the plugin refuses them")
			continue
		}
		if len(c.p.IngressAnnotationPrefixes) > 0 && !slices.ContainsFunc(c.p.IngressAnnotationPrefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			c.refuse(at, "allowed-ingress-annotation-prefixes", "the annotation's key has none of the prefixes the plugin allows (%s)", allowedList(c.p.IngressAnnotationPrefixes))
		}
	}
}

// isSnippet: an annotation of raw controller configuration:
// ingress-nginx's configuration-snippet, server-snippet, auth-snippet,
// stream-snippet, modsecurity-snippet; NGINX Inc's nginx.org/
// server-snippets and location-snippets; HAProxy's backend-config-snippet.
func isSnippet(key string) bool {
	_, name, ok := strings.Cut(key, "/")
	if !ok {
		name = key
	}
	return strings.Contains(strings.ToLower(name), "snippet")
}
