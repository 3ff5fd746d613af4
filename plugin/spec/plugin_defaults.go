package spec

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkplug-io/sparkplug/plugin/setting"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// PluginDefaults are the settings sparkplug serve's flags give every
// step, which a body's sparkplug block overrides for its own step.
type PluginDefaults struct {
	// Launcher is the setting launcher, the launcher of bodies that name none
	// (spec.LauncherNative when empty). ParseWith only checks a body
	// against it; the core (package execute) picks the launcher.
	Launcher string
	// IngressURLFormat is the setting ingress-url-format, the Spark operator's flag
	// of that name: the URL of the Spark UI's Ingress
	// (sparkplug.uiIngress.urlFormat overrides it). Empty: none.
	IngressURLFormat string
	// IngressClassName is the setting ingress-class-name, the operator's flag of that
	// name: the class of every Ingress (sparkplug.uiIngress.ingressClassName
	// overrides it). Empty: the cluster's default IngressClass.
	IngressClassName string
	// HistoryServerURL is the setting history-server-url: the base URL of
	// the Spark History Server that reads the steps' event logs, for the
	// history-ui output (sparkplug.historyServerURL overrides it). Empty:
	// none.
	HistoryServerURL string
	// ArchiveLogs is the setting archive-logs: store every step's driver
	// log in the workflow's artifact repository (sparkplug.archiveLogs
	// overrides it).
	ArchiveLogs bool
}

// Validate checks the flags' values as the fields that override them are
// checked, naming the flags.
func (d PluginDefaults) Validate() error {
	var errs []error
	if d.IngressURLFormat != "" {
		if _, err := IngressURL(d.IngressURLFormat, standIns); err != nil {
			errs = append(errs, setting.Errorf("ingress-url-format", "%q: %s", d.IngressURLFormat, err))
		} else if d.Launcher == LauncherSparkSubmit && placeholderAppID.MatchString(d.IngressURLFormat) {
			errs = append(errs, setting.Errorf("ingress-url-format", "%q: %s", d.IngressURLFormat, appIDWithSparkSubmit))
		}
	}
	if d.IngressClassName != "" {
		if msgs := validation.IsDNS1123Subdomain(d.IngressClassName); len(msgs) > 0 {
			errs = append(errs, setting.Errorf("ingress-class-name", "%q: is not an IngressClass name: %s", d.IngressClassName, strings.Join(msgs, "; ")))
		}
	}
	if d.HistoryServerURL != "" {
		if err := CheckHistoryServerURL(d.HistoryServerURL); err != nil {
			errs = append(errs, setting.Errorf("history-server-url", "%q: %s", Truncate(d.HistoryServerURL, 4*maxShownBytes), err))
		}
	}
	return errors.Join(errs...)
}

// apply fills what the body's sparkplug block leaves unset (uiIngress,
// historyServerURL) with d's values, so the spec says everything a run is
// built from and answered with.
func (d PluginDefaults) apply(s *SparkApplicationSpec) {
	if d.ArchiveLogs && (s.Sparkplug == nil || s.Sparkplug.ArchiveLogs == nil) {
		if s.Sparkplug == nil {
			s.Sparkplug = &SparkplugOptions{}
		}
		s.Sparkplug.ArchiveLogs = ptr(true)
	}
	if d.HistoryServerURL != "" && (s.Sparkplug == nil || s.Sparkplug.HistoryServerURL == nil) {
		if s.Sparkplug == nil {
			s.Sparkplug = &SparkplugOptions{}
		}
		s.Sparkplug.HistoryServerURL = ptr(d.HistoryServerURL)
	}
	if d.IngressURLFormat == "" && d.IngressClassName == "" {
		return
	}
	if s.Sparkplug == nil {
		s.Sparkplug = &SparkplugOptions{}
	}
	if s.Sparkplug.UIIngress == nil {
		s.Sparkplug.UIIngress = &UIIngressOptions{}
	}
	o := s.Sparkplug.UIIngress
	if o.URLFormat == nil && d.IngressURLFormat != "" {
		o.URLFormat = ptr(d.IngressURLFormat)
	}
	if o.IngressClassName == nil && d.IngressClassName != "" {
		o.IngressClassName = ptr(d.IngressClassName)
	}
}

// validateWithDefaults checks what a body's Ingresses become with the
// plugin's defaults (d): the UI Ingress's fields need a URL format, the
// body's own format a UI Service, a class an Ingress to class, and
// {{$appId}} the native launcher; and, when the step's launcher is
// spark-submit, that nothing of the body steers it (validateSubmitInputs).
func validateWithDefaults(s *SparkApplicationSpec, d PluginDefaults) field.ErrorList {
	var errs field.ErrorList
	var o UIIngressOptions
	if s.Sparkplug != nil && s.Sparkplug.UIIngress != nil {
		o = *s.Sparkplug.UIIngress
	}
	op := rootPath.Child("sparkplug", "uiIngress")
	up := rootPath.Child("sparkUIOptions")
	format := d.IngressURLFormat
	if o.URLFormat != nil {
		format = *o.URLFormat
	}
	class, classFrom := d.IngressClassName, "the plugin's --ingress-class-name"
	if o.IngressClassName != nil {
		class, classFrom = *o.IngressClassName, op.Child("ingressClassName").String()
	}
	uiIngress := s.HasUIService() && format != ""

	if ui := s.SparkUIOptions; ui != nil && !uiIngress {
		why := "the plugin has no --ingress-url-format"
		if o.URLFormat != nil {
			why = op.Child("urlFormat").String() + " is empty"
		}
		detail := fmt.Sprintf("shapes the Spark UI's Ingress, which a step gets only with a URL format, and %s: set %s (e.g. {{$appName}}.spark.example.com), or remove it", why, op.Child("urlFormat"))
		if len(ui.IngressAnnotations) > 0 {
			errs = append(errs, field.Required(up.Child("ingressAnnotations"), detail))
		}
		if len(ui.IngressTLS) > 0 {
			errs = append(errs, field.Required(up.Child("ingressTLS"), detail))
		}
	}
	if o.URLFormat != nil && *o.URLFormat != "" && !s.HasUIService() {
		errs = append(errs, field.Required(up, op.Child("urlFormat").String()+" asks for an Ingress to the Spark UI's Service, which cluster mode makes only with sparkUIOptions: add sparkUIOptions ({} for its defaults)"))
	}
	if uiIngress && s.SparkUIOptions != nil && subPathFormat(format) {
		errs = append(errs, rewriteTargetTaken(up.Child("ingressAnnotations"), s.SparkUIOptions.IngressAnnotations)...)
	}

	driverIngress := slices.ContainsFunc(s.DriverIngressOptions, func(e DriverIngressConfiguration) bool { return e.IngressURLFormat != "" })
	if o.IngressClassName != nil && class != "" && !uiIngress && !driverIngress {
		errs = append(errs, field.Invalid(op.Child("ingressClassName"), class, "the step makes no Ingress: it needs a URL format and a UI Service (sparkUIOptions, or client mode), or a driverIngressOptions entry with an ingressURLFormat; remove it"))
	}
	if class != "" {
		conflict := func(p *field.Path, annotations map[string]string) {
			if v, ok := annotations[spark.AnnotationIngressClass]; ok && v != class {
				errs = append(errs, field.Invalid(p.Key(spark.AnnotationIngressClass), v,
					fmt.Sprintf("the API server refuses an Ingress whose class annotation differs from its spec.ingressClassName, which %s sets to %s: remove the annotation", classFrom, class)))
			}
		}
		if uiIngress && s.SparkUIOptions != nil {
			conflict(up.Child("ingressAnnotations"), s.SparkUIOptions.IngressAnnotations)
		}
		for i, e := range s.DriverIngressOptions {
			if e.IngressURLFormat != "" {
				conflict(rootPath.Child("driverIngressOptions").Index(i).Child("ingressAnnotations"), e.IngressAnnotations)
			}
		}
	}

	launcher := s.Launcher()
	if launcher == "" && s.Mode != ModeClient {
		launcher = d.Launcher
	}
	if launcher == LauncherSparkSubmit {
		errs = append(errs, validateSubmitInputs(s)...)
		if uiIngress && placeholderAppID.MatchString(format) {
			if o.URLFormat != nil {
				errs = append(errs, field.Invalid(op.Child("urlFormat"), format, appIDWithSparkSubmit))
			} else {
				errs = append(errs, field.Invalid(rootPath.Child("sparkplug", "launcher"), launcher, fmt.Sprintf("the plugin's --ingress-url-format %q %s; or set %s", format, appIDWithSparkSubmit, op.Child("urlFormat"))))
			}
		}
		for i, e := range s.DriverIngressOptions {
			if placeholderAppID.MatchString(e.IngressURLFormat) {
				errs = append(errs, field.Invalid(rootPath.Child("driverIngressOptions").Index(i).Child("ingressURLFormat"), e.IngressURLFormat, appIDWithSparkSubmit))
			}
		}
	}
	return errs
}
