package spec

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// UIIngressURLFormat is the URL format of the Spark UI's Ingress, "" for
// none: sparkplug.uiIngress.urlFormat, which ParseWith fills from the
// plugin's --ingress-url-format when the body sets none.
func (s *SparkApplicationSpec) UIIngressURLFormat() string {
	if s.Sparkplug == nil || s.Sparkplug.UIIngress == nil || s.Sparkplug.UIIngress.URLFormat == nil {
		return ""
	}
	return *s.Sparkplug.UIIngress.URLFormat
}

// IngressClassName is the class of the step's Ingresses, "" for the
// cluster's default: sparkplug.uiIngress.ingressClassName, which ParseWith
// fills from the plugin's --ingress-class-name when the body sets none.
func (s *SparkApplicationSpec) IngressClassName() string {
	if s.Sparkplug == nil || s.Sparkplug.UIIngress == nil || s.Sparkplug.UIIngress.IngressClassName == nil {
		return ""
	}
	return *s.Sparkplug.UIIngress.IngressClassName
}

// HasUIService says whether a run has a Spark UI Service: sparkUIOptions
// asks for one, and client mode always has one.
func (s *SparkApplicationSpec) HasUIService() bool {
	return s.SparkUIOptions != nil || s.Mode == ModeClient
}

// HasUIIngress says whether a run has an Ingress to its UI Service: it
// has the Service and a URL format, as the Spark operator makes one when
// its UI Service is on and it has an --ingress-url-format.
func (s *SparkApplicationSpec) HasUIIngress() bool {
	return s.HasUIService() && s.UIIngressURLFormat() != ""
}

// The placeholders of an Ingress URL format, as the Spark operator
// substitutes them (getDriverIngressURL in its
// internal/controller/sparkapplication/driveringress.go), spaces inside
// the braces allowed.
var (
	placeholderAppName      = regexp.MustCompile(`{{\s*[$]appName\s*}}`)
	placeholderAppNamespace = regexp.MustCompile(`{{\s*[$]appNamespace\s*}}`)
	placeholderAppID        = regexp.MustCompile(`{{\s*[$]appId\s*}}`)
	leftoverPlaceholder     = regexp.MustCompile(`{{[^{}]*}}`)
)

const placeholderNames = "{{$appName}}, {{$appNamespace}} and {{$appId}}"

// ingressPathChars are the characters of an Ingress URL's path: ingress-nginx
// reads the operator's paths as regular expressions, and these mean
// themselves there (a "." any character, which still matches itself).
var ingressPathChars = regexp.MustCompile(`^[A-Za-z0-9._~/-]*$`)

// appIDWithSparkSubmit is why {{$appId}} and the spark-submit launcher
// do not go together.
const appIDWithSparkSubmit = "uses {{$appId}}, which the spark-submit launcher cannot honour: spark-submit chooses the application id itself, after the Ingress and spark.ui.proxyBase are fixed; use {{$appName}}, which names the run, or the native launcher"

// URLValues are what the placeholders of an Ingress URL format stand for
// in one run.
type URLValues struct {
	// AppName is {{$appName}}: the run's name, <workflow>-<hash>[-a<N>],
	// which names its driver pod and every object around it, as a
	// SparkApplication's name names the operator's.
	AppName string
	// AppNamespace is {{$appNamespace}}: the workflow's namespace.
	AppNamespace string
	// AppID is {{$appId}}: the run's Spark application id.
	AppID string
}

// standIns are the values validation checks a URL format with; a run's
// own values are checked when its objects are built.
var standIns = URLValues{AppName: "spark-pi-0123abcd", AppNamespace: "default", AppID: "spark-0123456789abcdef0123456789abcdef"}

// IngressURL is format with v in place of its placeholders, parsed as the
// Spark operator parses it (a URL, http assumed when it writes no scheme)
// and checked for what one Ingress rule can hold. Its Scheme is the one
// format writes, "" when it writes none; its Host is the rule's host ("":
// every host), never with a port; its Path the rule's path ("" or "/": the
// root).
func IngressURL(format string, v URLValues) (*url.URL, error) {
	s := placeholderAppName.ReplaceAllLiteralString(format, v.AppName)
	s = placeholderAppNamespace.ReplaceAllLiteralString(s, v.AppNamespace)
	s = placeholderAppID.ReplaceAllLiteralString(s, v.AppID)
	if m := leftoverPlaceholder.FindString(s); m != "" {
		return nil, fmt.Errorf("unknown placeholder %s: the placeholders are %s", m, placeholderNames)
	}
	switch {
	case strings.Contains(s, "{{") || strings.Contains(s, "}}"):
		return nil, fmt.Errorf("has an unclosed {{ or a stray }}: the placeholders are %s", placeholderNames)
	case strings.TrimSpace(s) == "":
		return nil, errors.New("is empty: give a host, a path or both, e.g. {{$appName}}.spark.example.com")
	case strings.ContainsAny(s, " \t\r\n"):
		return nil, errors.New("must not contain spaces")
	}
	scheme, rest := "", s
	if i := strings.Index(s, "://"); i >= 0 {
		scheme, rest = s[:i], s[i+len("://"):]
		if scheme != "http" && scheme != "https" {
			return nil, fmt.Errorf("scheme %q: write http://, https:// or no scheme", scheme)
		}
	}
	u, err := url.Parse("http://" + rest)
	if err != nil {
		return nil, fmt.Errorf("is not a URL: %w", errors.Unwrap(err))
	}
	switch {
	case u.User != nil:
		return nil, errors.New("must not hold a user or password")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(rest, "#"):
		return nil, errors.New("must not hold a query or a fragment: an Ingress rule matches a host and a path")
	case u.Port() != "":
		return nil, fmt.Errorf("host %q has a port: an Ingress rule's host has none (the ingress controller's own ports serve it)", u.Host)
	case u.Host == "" && (u.Path == "" || u.Path == "/"):
		return nil, errors.New("names neither a host nor a path: give a host, a path or both, e.g. {{$appName}}.spark.example.com")
	}
	if err := checkIngressHost(u.Host); err != nil {
		return nil, err
	}
	if err := checkIngressPath(u); err != nil {
		return nil, err
	}
	u.Scheme = scheme
	return u, nil
}

// checkIngressHost checks an Ingress rule's host as the API server does
// (a DNS subdomain, not an IP address) and as DNS does (labels of at most
// 63 characters); a wildcard would name no one run's UI.
func checkIngressHost(host string) error {
	switch {
	case host == "":
		return nil
	case net.ParseIP(strings.Trim(host, "[]")) != nil:
		return fmt.Errorf("host %q is an IP address: an Ingress rule's host must be a DNS name", host)
	case strings.Contains(host, "*"):
		return fmt.Errorf("host %q is a wildcard: the URL must name one run's UI; put {{$appName}} in the host instead", host)
	}
	if msgs := validation.IsDNS1123Subdomain(host); len(msgs) > 0 {
		return fmt.Errorf("host %q: %s", host, strings.Join(msgs, "; "))
	}
	for _, label := range strings.Split(host, ".") {
		if len(label) > validation.DNS1123LabelMaxLength {
			return fmt.Errorf("host %q: %q is longer than %d characters, the most a DNS label may have", host, label, validation.DNS1123LabelMaxLength)
		}
	}
	return nil
}

// checkIngressPath checks the path of an Ingress URL, which becomes the
// Ingress rule's path (followed by the operator's capture groups) and
// spark.ui.proxyBase.
func checkIngressPath(u *url.URL) error {
	p := u.Path
	switch {
	case p == "" || p == "/":
		return nil
	case u.RawPath != "" || !ingressPathChars.MatchString(p):
		return fmt.Errorf("path %q: a path may hold letters, digits, '-', '.', '_', '~' and '/' only (ingress-nginx reads it as a regular expression)", p)
	case strings.HasSuffix(p, "/"):
		return fmt.Errorf("path %q ends in '/': remove it (the Ingress matches the path with and without it, and Spark's links would have //)", p)
	case strings.Contains(p, "//"):
		return fmt.Errorf("path %q has an empty segment (//)", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("path %q has a %q segment", p, seg)
		}
	}
	return nil
}

// HasSubPath says whether an Ingress URL has a path other than the root,
// which the Ingress strips (ingress-nginx's rewrite-target) and the UI
// writes its links under (spark.ui.proxyBase).
func HasSubPath(u *url.URL) bool { return u.Path != "" && u.Path != "/" }

// validateURLFormat checks a URL format with stand-in values.
func validateURLFormat(p *field.Path, format string) field.ErrorList {
	if _, err := IngressURL(format, standIns); err != nil {
		return field.ErrorList{field.Invalid(p, format, err.Error())}
	}
	return nil
}

// subPathFormat says whether a valid URL format has a path other than the
// root.
func subPathFormat(format string) bool {
	u, err := IngressURL(format, standIns)
	return err == nil && HasSubPath(u)
}

// validateUIIngressOptions checks the body's sparkplug.uiIngress by
// itself; validateWithDefaults checks it with the plugin's flags.
func validateUIIngressOptions(p *field.Path, o *UIIngressOptions) field.ErrorList {
	if o == nil {
		return nil
	}
	var errs field.ErrorList
	if o.URLFormat != nil && *o.URLFormat != "" {
		errs = append(errs, validateURLFormat(p.Child("urlFormat"), *o.URLFormat)...)
	}
	if o.IngressClassName != nil && *o.IngressClassName != "" {
		errs = append(errs, validateName(p.Child("ingressClassName"), *o.IngressClassName, validation.IsDNS1123Subdomain, "an IngressClass name")...)
	}
	return errs
}

// validateIngressTLS checks an Ingress's TLS entries as the API server
// does: hosts are DNS names, or wildcards of them.
func validateIngressTLS(p *field.Path, tls []networkingv1.IngressTLS) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tls {
		for j, h := range t.Hosts {
			is := validation.IsDNS1123Subdomain
			if strings.Contains(h, "*") {
				is = validation.IsWildcardDNS1123Subdomain
			}
			if msgs := is(h); len(msgs) > 0 {
				errs = append(errs, field.Invalid(p.Index(i).Child("hosts").Index(j), h, "is not a host name: "+strings.Join(msgs, "; ")))
			}
		}
		if t.SecretName != "" {
			errs = append(errs, validateName(p.Index(i).Child("secretName"), t.SecretName, validation.IsDNS1123Subdomain, "a Secret name")...)
		}
	}
	return errs
}

// rewriteTargetTaken rejects a rewrite-target annotation on an Ingress
// whose URL has a path: sparkplug sets it, as the operator does, to match
// the capture groups it puts after the path.
func rewriteTargetTaken(p *field.Path, annotations map[string]string) field.ErrorList {
	if _, ok := annotations[spark.AnnotationNginxRewriteTarget]; !ok {
		return nil
	}
	return field.ErrorList{field.Forbidden(p.Key(spark.AnnotationNginxRewriteTarget),
		"sparkplug sets it to "+spark.NginxRewriteTarget+", as the Spark operator does, to strip the URL's path, which it matches with "+spark.IngressSubPathPattern+" after it; remove it")}
}

// validateDriverIngressOptions checks each entry: a Service to the
// driver's servicePort, one per port, and an Ingress to it with an
// ingressURLFormat.
func validateDriverIngressOptions(p *field.Path, opts []DriverIngressConfiguration) field.ErrorList {
	var errs field.ErrorList
	seen := map[int32]int{}
	for i := range opts {
		o, ip := &opts[i], p.Index(i)
		if o.ServicePort == nil {
			errs = append(errs, field.Required(ip.Child("servicePort"), "give the driver's port to expose: the Service's port, which it forwards to the same port of the driver"))
		} else {
			port := *o.ServicePort
			for _, msg := range validation.IsValidPortNum(int(port)) {
				errs = append(errs, field.Invalid(ip.Child("servicePort"), port, msg))
			}
			if j, dup := seen[port]; dup {
				errs = append(errs, field.Invalid(ip.Child("servicePort"), port, fmt.Sprintf("entry %d exposes it already: each port gets one Service <run>-driver-<port>", j)))
			} else {
				seen[port] = i
			}
		}
		if o.ServicePortName != nil {
			errs = append(errs, validateName(ip.Child("servicePortName"), *o.ServicePortName, validation.IsDNS1123Label, "a Service port name")...)
		}
		if o.ServiceType != nil && !slices.Contains(supportedUIServiceTypes, *o.ServiceType) {
			errs = append(errs, field.NotSupported(ip.Child("serviceType"), *o.ServiceType, supportedUIServiceTypes))
		}
		errs = append(errs, validateLabels(ip.Child("serviceLabels"), o.ServiceLabels)...)
		errs = append(errs, validateAnnotations(ip.Child("serviceAnnotations"), o.ServiceAnnotations)...)
		if o.IngressURLFormat != "" {
			errs = append(errs, validateURLFormat(ip.Child("ingressURLFormat"), o.IngressURLFormat)...)
			if subPathFormat(o.IngressURLFormat) {
				errs = append(errs, rewriteTargetTaken(ip.Child("ingressAnnotations"), o.IngressAnnotations)...)
			}
		} else if len(o.IngressAnnotations) > 0 || len(o.IngressTLS) > 0 {
			errs = append(errs, field.Required(ip.Child("ingressURLFormat"), "ingressAnnotations and ingressTLS shape the entry's Ingress, which it gets only with an ingressURLFormat (e.g. {{$appName}}-4041.spark.example.com); give one, or remove them"))
		}
		errs = append(errs, validateAnnotations(ip.Child("ingressAnnotations"), o.IngressAnnotations)...)
		errs = append(errs, validateIngressTLS(ip.Child("ingressTLS"), o.IngressTLS)...)
	}
	return errs
}
