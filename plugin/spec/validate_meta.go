package spec

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// reservedLabels are the label keys sparkplug or Spark set on Spark pods.
var reservedLabels = map[string]string{
	spark.LabelRole:        "sparkplug sets it to driver or executor, and Spark finds its executors by it",
	spark.LabelAppSelector: "sparkplug sets it to the application id, and Spark finds its executors by it",
	spark.LabelAppName:     "sparkplug sets it to the application name",
	spark.LabelExecID:      "Spark sets it to each executor's id and finds the executors by it",
	spark.LabelVersion:     "Spark sets it to the Spark version",
	spark.LabelManagedBy:   "sparkplug sets it to " + spark.ManagedByValue + " on what it creates",
}

// reservedDomain says why a label or annotation key is not the user's, by
// its prefix domain (or a subdomain of it).
func reservedDomain(key string) string {
	prefix, _, found := strings.Cut(key, "/")
	if !found {
		return ""
	}
	in := func(domain string) bool { return prefix == domain || strings.HasSuffix(prefix, "."+domain) }
	switch {
	case in(spark.Domain):
		return "the " + spark.Domain + "/ keys are sparkplug's bookkeeping; choose another prefix"
	case in("workflows.argoproj.io"):
		return "the workflows.argoproj.io/ keys are Argo's, and its controller would take the Spark pods for workflow pods; choose another prefix"
	}
	return ""
}

func validateLabels(p *field.Path, labels map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(labels) {
		kp := p.Key(k)
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			errs = append(errs, field.Invalid(kp, k, "is not a valid label key: "+strings.Join(msgs, "; ")))
			continue
		}
		if why, ok := reservedLabels[k]; ok {
			errs = append(errs, field.Forbidden(kp, why+"; remove it"))
			continue
		}
		if why := reservedDomain(k); why != "" {
			errs = append(errs, field.Forbidden(kp, why))
			continue
		}
		if msgs := validation.IsValidLabelValue(labels[k]); len(msgs) > 0 {
			errs = append(errs, field.Invalid(kp, labels[k], "is not a valid label value: "+strings.Join(msgs, "; ")))
		}
	}
	return errs
}

// totalAnnotationSize is Kubernetes' limit on the size of all annotations
// of an object.
const totalAnnotationSize = 256 << 10

func validateAnnotations(p *field.Path, annotations map[string]string) field.ErrorList {
	var errs field.ErrorList
	size := 0
	for _, k := range sortedKeys(annotations) {
		size += len(k) + len(annotations[k])
		kp := p.Key(k)
		if msgs := validation.IsQualifiedName(strings.ToLower(k)); len(msgs) > 0 {
			errs = append(errs, field.Invalid(kp, k, "is not a valid annotation key: "+strings.Join(msgs, "; ")))
			continue
		}
		if why := reservedDomain(k); why != "" {
			errs = append(errs, field.Forbidden(kp, why))
		}
	}
	if size > totalAnnotationSize {
		errs = append(errs, field.TooLong(p, field.OmitValueType{}, totalAnnotationSize))
	}
	return errs
}

func validateSelector(p *field.Path, sel map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(sel) {
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Key(k), k, "is not a valid label key: "+strings.Join(msgs, "; ")))
			continue
		}
		if msgs := validation.IsValidLabelValue(sel[k]); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Key(k), sel[k], "is not a valid label value: "+strings.Join(msgs, "; ")))
		}
	}
	return errs
}

// validateName checks a Kubernetes object name with one of the
// k8s.io/apimachinery validators.
func validateName(p *field.Path, name string, is func(string) []string, what string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "give "+what)}
	}
	if msgs := is(name); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(p, name, "is not "+what+": "+strings.Join(msgs, "; "))}
	}
	return nil
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }
