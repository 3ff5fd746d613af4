package spec

import (
	"errors"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Bounds of a quantity's text, checked before apimachinery parses it. Its
// parser's cost grows with the exponent and with the number of digits,
// not with anything the value can hold: "1e-99999999" (12 bytes) takes
// some 47 s of CPU and 300 MB, a megabyte of digits 2 s. A Quantity holds
// 1n to 2^63-1 (about 9.2e18), so no real quantity needs more than a few
// dozen characters or an exponent of more than two digits.
const (
	// MaxQuantityBytes is the longest quantity text read, after trimming.
	MaxQuantityBytes = 64
	// MaxQuantityExponent bounds the exponent of 1e3 or 5E-1 either way.
	MaxQuantityExponent = 99
)

// Errors of ParseQuantity for text it refuses before parsing. Their text is
// the rule; callers add an example of the field's own unit.
var (
	ErrQuantityTooLong  = errors.New("is too long for a quantity (at most 64 characters)")
	ErrQuantityExponent = errors.New("exponent out of range (at most 99 either way; a quantity holds 1n to about 9.2e18)")
)

// ParseQuantity is resource.ParseQuantity for text a body wrote: it refuses
// text longer than MaxQuantityBytes and an exponent beyond
// MaxQuantityExponent before apimachinery spends time on them. Every
// quantity a body or its sparkConf gives is read through it; Decode also
// checks the body's resource.Quantity fields by checkQuantity before they
// are decoded.
func ParseQuantity(s string) (resource.Quantity, error) {
	if err := checkQuantity(s); err != nil {
		return resource.Quantity{}, err
	}
	return resource.ParseQuantity(s)
}

// checkQuantity applies the bounds of ParseQuantity to s, which is read as
// Kubernetes' grammar has it (quantity.go): <signedNumber><suffix>, where
// a suffix of e or E and a signed number is a decimal exponent. Anything
// else within the length bound is left to apimachinery: it is cheap.
func checkQuantity(s string) error {
	if len(s) > MaxQuantityBytes {
		return ErrQuantityTooLong
	}
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	suffix := s[i:]
	if len(suffix) < 2 || suffix[0] != 'e' && suffix[0] != 'E' {
		return nil
	}
	exp, err := strconv.ParseInt(suffix[1:], 10, 64)
	if errors.Is(err, strconv.ErrRange) || err == nil && (exp > MaxQuantityExponent || exp < -MaxQuantityExponent) {
		return ErrQuantityExponent
	}
	return nil
}

// refusedQuantity says whether err is ParseQuantity's refusal of text it
// does not parse, whose message is the rule broken.
func refusedQuantity(err error) bool {
	return errors.Is(err, ErrQuantityTooLong) || errors.Is(err, ErrQuantityExponent)
}
