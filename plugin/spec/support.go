package spec

import (
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// UnsupportedField is a field, or one value of a field, of the Spark
// operator's SparkApplication spec that sparkplug does not honour yet.
type UnsupportedField struct {
	// Path is the field's path in the plugin body, rooted at "spark".
	Path string
	// Value, when set, makes only this value of the field unsupported;
	// otherwise any non-empty value is.
	Value string
	// Why says what sparkplug does instead, or what the user can do.
	Why string
}

// Unsupported lists everything a user may write, because the Spark operator
// accepts it, that this release of sparkplug does not honour. Validate rejects
// each of them with field.Forbidden and the Why, and Decode does so for the
// operator's fields that the Go types do not even have (suspend,
// driverPodDisruptionBudget), instead of calling them unknown.
//
// This table is the single source: the pod builder and the README read it.
// A field of the types that is neither here nor honoured fails
// TestEveryFieldIsHonouredOrUnsupported.
var Unsupported = []UnsupportedField{
	{Path: "spark.suspend", Why: "Argo suspends workflows, not one step's application; use `argo suspend` or a suspend template before this step"},
	{Path: "spark.failureRetries", Why: "deprecated by the Spark operator; use spark.restartPolicy (type: OnFailure, onFailureRetries)"},
	{Path: "spark.retryInterval", Why: "deprecated by the Spark operator; use spark.restartPolicy.onFailureRetryInterval and onSubmissionFailureRetryInterval"},
	{Path: "spark.driverPodDisruptionBudget", Why: "sparkplug creates no PodDisruptionBudget for the driver"},
	{Path: "spark.driver.podName", Why: "sparkplug names the driver pod after the workflow node so that it finds the pod again after a restart; remove podName"},
	{Path: "spark.executor.memoryLimit", Why: "Spark sets each executor's memory limit to its memory plus overhead, overriding the executor pod template; raise spark.executor.memoryOverhead instead"},
}

// unsupportedMessage is the detail of the Forbidden error for u.
func unsupportedMessage(u UnsupportedField) string {
	return "not supported yet by sparkplug: " + u.Why
}

// unsupportedAt returns the row for a field the Go types do not have, so
// that Decode can say "not supported yet" instead of "unknown field".
func unsupportedAt(path string) (UnsupportedField, bool) {
	for _, u := range Unsupported {
		if u.Path == path && u.Value == "" {
			return u, true
		}
	}
	return UnsupportedField{}, false
}

// validateUnsupported rejects every row of Unsupported that s sets.
func validateUnsupported(s *SparkApplicationSpec) field.ErrorList {
	var errs field.ErrorList
	for _, u := range Unsupported {
		v, ok := lookup(reflect.ValueOf(s).Elem(), strings.TrimPrefix(u.Path, "spark."))
		if !ok || !isSet(v) {
			continue
		}
		if u.Value != "" {
			for v.Kind() == reflect.Pointer {
				v = v.Elem()
			}
			if !(v.Kind() == reflect.String && v.String() == u.Value) {
				continue
			}
		}
		p := field.NewPath("spark", strings.Split(strings.TrimPrefix(u.Path, "spark."), ".")...)
		errs = append(errs, field.Forbidden(p, unsupportedMessage(u)))
	}
	return errs
}

// lookup follows a dotted path of JSON field names from v, a struct.
func lookup(v reflect.Value, dotted string) (reflect.Value, bool) {
	for _, name := range strings.Split(dotted, ".") {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		f, ok := jsonFields(v.Type()).byName[name]
		if !ok {
			return reflect.Value{}, false
		}
		fv, err := v.FieldByIndexErr(f.index)
		if err != nil {
			return reflect.Value{}, false
		}
		v = fv
	}
	return v, true
}

// isSet says whether a user wrote a value: non-nil pointers, non-empty
// strings, lists and maps.
func isSet(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return !v.IsNil()
	case reflect.Slice, reflect.Map, reflect.String:
		return v.Len() > 0
	default:
		return !v.IsZero()
	}
}
