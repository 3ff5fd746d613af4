package spec

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// InvalidError is a spark body that cannot run, with every problem found.
type InvalidError struct {
	Errs field.ErrorList
}

// Error is one line a person can act on: every problem, with its path,
// in a stable order.
func (e *InvalidError) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msgs[i] = err.Error()
	}
	return "invalid spark body: " + strings.Join(msgs, "; ")
}

// Parse decodes, defaults and validates the JSON `spark` body of a plugin
// step, as ParseWith does for a plugin with no defaults of its own (no
// --ingress-url-format, ...): what the body means by itself.
func Parse(raw []byte) (*SparkApplicationSpec, error) {
	return ParseWith(raw, PluginDefaults{})
}

// ParseWith decodes, defaults and validates the JSON `spark` body of a
// plugin step run by a plugin whose flags set d. It returns either a spec
// the rest of sparkplug can run, or an *InvalidError listing every
// problem: decoding problems first, then validation problems, leaving out
// those about a field that could not be decoded (a value of the wrong type
// is not also reported as missing). The spec returned has what the body's
// sparkplug block leaves unset filled from d (sparkplug.uiIngress), so it
// says everything a run is built from.
func ParseWith(raw []byte, d PluginDefaults) (*SparkApplicationSpec, error) {
	s, errs := Decode(raw)
	if s == nil {
		return nil, &InvalidError{Errs: errs}
	}
	SetDefaults(s)
	for _, err := range append(Validate(s), validateWithDefaults(s, d)...) {
		if !under(err.Field, errs) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, &InvalidError{Errs: errs}
	}
	d.apply(s)
	return s, nil
}

// under says whether path is the path of one of errs, or inside it.
func under(path string, errs field.ErrorList) bool {
	for _, e := range errs {
		if path == e.Field || strings.HasPrefix(path, e.Field+".") || strings.HasPrefix(path, e.Field+"[") {
			return true
		}
	}
	return false
}
