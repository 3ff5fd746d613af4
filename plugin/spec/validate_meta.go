package spec

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

func validateLabels(p *field.Path, labels map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(labels) {
		kp := p.Key(k)
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			errs = append(errs, field.Invalid(kp, k, "is not a valid label key: "+strings.Join(msgs, "; ")))
			continue
		}
		if r, ok := spark.ReservedLabels[k]; ok {
			errs = append(errs, field.Forbidden(kp, r.Why+"; remove it"))
			continue
		}
		if why := spark.ReservedKey(k); why != "" {
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
		if why := spark.ReservedKey(k); why != "" {
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
