package spec

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
)

// rootPath is the path of the body in a plugin template: `plugin: {spark: ...}`.
var rootPath = field.NewPath("spark")

// emptyBodyDetail is what an empty or null body is told.
const emptyBodyDetail = "the spark body is empty; give at least mainApplicationFile and image"

// decode strictly decodes the JSON `spark` body of a plugin step into
// probs: unknown fields (with a suggestion when a known field is within
// edit distance 2), duplicate fields, and values of the wrong JSON type
// (with the type expected), each with its path rooted at "spark". Fields the
// Spark operator has but sparkplug's types do not (see Unsupported) are
// reported as not supported yet; a resource.Quantity that ParseQuantity
// would refuse is reported, and left out of the typed decode so that
// apimachinery never parses it.
//
// The spec is nil only when the body is empty or not a JSON object;
// otherwise it holds everything that could be decoded, so that Parse can
// also validate the rest of the body.
func decode(raw []byte, probs *problems) *SparkApplicationSpec {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		probs.decoding(field.Required(rootPath, emptyBodyDetail))
		return nil
	}

	// A generic tree first: it gives the duplicate fields (a typed decode
	// stops reporting them at the first type error) and lets checkValue find
	// every unknown field and type error, not only the first.
	var tree any
	dups, err := sigsjson.UnmarshalStrict(raw, &tree, sigsjson.DisallowDuplicateFields)
	if err != nil {
		probs.decoding(field.Invalid(rootPath, field.OmitValueType{}, "is not valid JSON: "+strings.TrimPrefix(err.Error(), "json: ")))
		return nil
	}
	obj, ok := tree.(map[string]any)
	if !ok {
		probs.decoding(field.TypeInvalid(rootPath, shown(tree), "must be an object of SparkApplication spec fields, not "+jsonKind(tree)))
		return nil
	}
	if len(obj) == 0 {
		probs.decoding(field.Required(rootPath, emptyBodyDetail))
		return nil
	}

	// Argo substitutes parameters into the template's JSON text, so
	// `instances: "{{inputs.parameters.n}}"` arrives as the string "3":
	// accept a string that holds an integer or a boolean where the field
	// wants one, as Argo can deliver nothing else. The typed decode reads
	// this tree, never raw, so that a refused quantity is not parsed, and
	// without the unknown fields checkValue takes out.
	tree = coerce(tree, reflect.TypeFor[SparkApplicationSpec]())
	for _, d := range dups {
		probs.decoding(strictError(d))
	}
	before := probs.count()
	checkValue(rootPath, tree, reflect.TypeFor[SparkApplicationSpec](), probs)
	shapeOK := probs.count() == before
	raw, err = json.Marshal(tree)
	if err != nil {
		probs.decoding(field.Invalid(rootPath, field.OmitValueType{}, err.Error()))
		return nil
	}

	// The typed decode, with sigs.k8s.io/json's own strict checks as a
	// safety net: they can only find something checkValue missed, so they
	// run only when it found nothing (they would list every unknown field
	// again).
	s := &SparkApplicationSpec{}
	if !shapeOK {
		_ = sigsjson.UnmarshalCaseSensitivePreserveInts(raw, s)
		return s
	}
	strict, err := sigsjson.UnmarshalStrict(raw, s)
	for _, e := range strict {
		if !strings.HasPrefix(e.Error(), "duplicate field") {
			probs.decoding(strictError(e))
		}
	}
	if err != nil {
		probs.decoding(field.Invalid(rootPath, field.OmitValueType{}, strings.TrimPrefix(err.Error(), "json: ")))
	}
	return s
}

// strictError turns an error of sigs.k8s.io/json's strict checks into a field
// error at the path it names.
func strictError(err error) *field.Error {
	msg := err.Error()
	fe, ok := err.(sigsjson.FieldError)
	if !ok {
		return field.Invalid(rootPath, field.OmitValueType{}, msg)
	}
	p := rootPath.Child(fe.FieldPath())
	if strings.HasPrefix(msg, "duplicate field") {
		return field.Invalid(p, field.OmitValueType{}, "duplicate field; give it once")
	}
	return field.Invalid(p, field.OmitValueType{}, "unknown field")
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	quantityType        = reflect.TypeFor[resource.Quantity]()

	podSecurityContextType       = reflect.TypeFor[corev1.PodSecurityContext]()
	containerSecurityContextType = reflect.TypeFor[corev1.SecurityContext]()
)

// checkValue reports to probs every place where v, a value decoded into a
// generic tree, does not fit the Go type t: unknown struct fields, JSON
// values of the wrong type and refused quantities. null fits every type, as
// it does for encoding/json. It deletes the unknown fields from the tree:
// the typed decode has nothing to do with them.
func checkValue(p *field.Path, v any, t reflect.Type, probs *problems) {
	if v == nil {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem() // *Quantity has Quantity's decoding
	}
	if t == quantityType {
		switch q := v.(type) {
		case refusedQuantityValue:
			probs.decoding(field.Invalid(p, q.text, q.err.Error()+"; write it like 500m or 1Gi"))
		case string:
			// What Quantity.UnmarshalJSON does with a string, without
			// the JSON around it.
			if _, err := ParseQuantity(strings.TrimSpace(q)); err != nil {
				probs.decoding(field.Invalid(p, q, "is not a Kubernetes quantity like 500m or 1Gi"))
			}
		default:
			if errs := checkUnmarshal(p, v, t); len(errs) > 0 {
				probs.decoding(field.Invalid(p, shown(v), "is not a Kubernetes quantity like 500m or 1Gi"))
			}
		}
		return
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) ||
		t.Implements(textUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		probs.decoding(checkUnmarshal(p, v, t)...)
		return
	}
	switch t.Kind() {
	case reflect.Interface:
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			probs.decoding(typeError(p, v, "an object"))
			return
		}
		fields := jsonFields(t)
		for _, k := range sortedKeys(obj) {
			f, ok := fields.byName[k]
			switch {
			case ok:
				checkValue(p.Child(k), obj[k], f.typ, probs)
				continue
			case probs.full():
				// Only counted: looking for a suggestion is what costs,
				// and no validation problem can lie under a field the
				// types do not have.
				probs.more++
			default:
				probs.decoding(unknownField(p.Child(k), k, obj[k], t, fields))
			}
			delete(obj, k)
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			probs.decoding(typeError(p, v, "an object"))
			return
		}
		if t.Key().Kind() != reflect.String {
			probs.decoding(checkUnmarshal(p, v, t)...)
			return
		}
		for _, k := range sortedKeys(obj) {
			checkValue(p.Key(k), obj[k], t.Elem(), probs)
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			probs.decoding(checkUnmarshal(p, v, t)...)
			return
		}
		list, ok := v.([]any)
		if !ok {
			probs.decoding(typeError(p, v, "a list"))
			return
		}
		for i, e := range list {
			checkValue(p.Index(i), e, t.Elem(), probs)
		}
	default:
		probs.decoding(checkScalar(p, v, t)...)
	}
}

// checkScalar is checkValue for a string, boolean or number type.
func checkScalar(p *field.Path, v any, t reflect.Type) field.ErrorList {
	switch t.Kind() {
	case reflect.String:
		if _, ok := v.(string); !ok {
			return field.ErrorList{typeError(p, v, "a string")}
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return field.ErrorList{typeError(p, v, "true or false")}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(int64)
		if !ok {
			return field.ErrorList{typeError(p, v, "an integer")}
		}
		if reflect.New(t).Elem().OverflowInt(n) {
			return field.ErrorList{field.Invalid(p, n, fmt.Sprintf("must fit in a %d-bit integer", t.Bits()))}
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, ok := v.(int64)
		if !ok || n < 0 {
			return field.ErrorList{typeError(p, v, "a non-negative integer")}
		}
		if reflect.New(t).Elem().OverflowUint(uint64(n)) {
			return field.ErrorList{field.Invalid(p, n, fmt.Sprintf("must fit in a %d-bit integer", t.Bits()))}
		}
	case reflect.Float32, reflect.Float64:
		switch v.(type) {
		case int64, float64:
		default:
			return field.ErrorList{typeError(p, v, "a number")}
		}
	default:
		return checkUnmarshal(p, v, t)
	}
	return nil
}

// refusedQuantityValue stands, in the generic tree, for a quantity that
// ParseQuantity refuses: checkValue reports it, and it is written as null
// for the typed decode, so apimachinery never parses it.
type refusedQuantityValue struct {
	text string
	err  error
}

func (refusedQuantityValue) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// coerce replaces, in a generic tree, strings that hold an integer or a
// boolean where the Go type t wants one. Everything else is left for
// checkValue to judge.
func coerce(v any, t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem() // *Quantity has Quantity's decoding
	}
	if t == quantityType {
		// Quantity.UnmarshalJSON trims what it parses.
		if str, ok := v.(string); ok {
			if err := checkQuantity(strings.TrimSpace(str)); err != nil {
				return refusedQuantityValue{text: str, err: err}
			}
		}
		return v
	}
	if v == nil {
		return v
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) ||
		t.Implements(textUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return v
	}
	switch t.Kind() {
	case reflect.Struct:
		if obj, ok := v.(map[string]any); ok {
			fields := jsonFields(t)
			for k, e := range obj {
				if f, ok := fields.byName[k]; ok {
					obj[k] = coerce(e, f.typ)
				}
			}
		}
	case reflect.Map:
		if obj, ok := v.(map[string]any); ok && t.Key().Kind() == reflect.String {
			for k, e := range obj {
				obj[k] = coerce(e, t.Elem())
			}
		}
	case reflect.Slice, reflect.Array:
		if list, ok := v.([]any); ok && t.Elem().Kind() != reflect.Uint8 {
			for i, e := range list {
				list[i] = coerce(e, t.Elem())
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if str, ok := v.(string); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(str), 10, 64); err == nil {
				return n
			}
		}
	case reflect.Bool:
		if str, ok := v.(string); ok {
			if b, err := strconv.ParseBool(strings.TrimSpace(str)); err == nil {
				return b
			}
		}
	}
	return v
}

// checkUnmarshal lets a type with its own JSON decoding (resource.Quantity,
// intstr.IntOrString, ...) judge its value.
func checkUnmarshal(p *field.Path, v any, t reflect.Type) field.ErrorList {
	data, err := json.Marshal(v)
	if err != nil {
		return field.ErrorList{field.Invalid(p, field.OmitValueType{}, err.Error())}
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, reflect.New(t).Interface()); err != nil {
		return field.ErrorList{field.Invalid(p, shown(v), strings.TrimPrefix(err.Error(), "json: "))}
	}
	return nil
}

// typeError says what JSON type was expected at p and what was given, with
// the likely fix for the common YAML slips (a quoted number, an unquoted
// version or size).
func typeError(p *field.Path, v any, want string) *field.Error {
	kind := jsonKind(v)
	if f, ok := v.(float64); ok && want == "an integer" {
		kind = "a fraction"
		if f == math.Trunc(f) {
			kind = "a number with a decimal point or exponent, or out of range"
		}
	}
	detail := fmt.Sprintf("must be %s, not %s", want, kind)
	switch got := v.(type) {
	case string:
		if _, err := strconv.ParseFloat(got, 64); err == nil && (want == "an integer" || want == "a number") {
			detail += "; write it without quotes"
		}
		if _, err := strconv.ParseBool(got); err == nil && want == "true or false" {
			detail += "; write it without quotes"
		}
	case int64, float64, bool:
		if want == "a string" {
			detail += "; quote it"
		}
		if f, ok := got.(float64); ok && f != math.Trunc(f) && want == "an integer" && strings.HasSuffix(p.String(), ".cores") {
			detail += "; for part of a CPU set coreRequest, e.g. 500m"
		}
	}
	return field.TypeInvalid(p, shown(v), detail)
}

// shown is the value an error prints: scalars as they are, objects and
// lists omitted.
func shown(v any) any {
	switch v.(type) {
	case string, bool, int64, float64:
		return v
	case nil:
		return nil
	default:
		return field.OmitValueType{}
	}
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}
