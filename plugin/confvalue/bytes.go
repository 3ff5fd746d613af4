package confvalue

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Errors of ByteString; their text is the rule, without the value.
var (
	ErrNotSize     = errors.New("want a whole number and an optional unit (k, m, g, t, p), such as 512m or 4g")
	ErrFraction    = errors.New("fractional values are not supported by Spark; use a smaller unit (1536m, not 1.5g)")
	ErrUnit        = errors.New("unknown unit; use k, m, g, t or p")
	ErrTooLarge    = errors.New("is too large")
	ErrOtherDigits = errors.New("Spark reads sizes in digits 0-9 only and refuses other scripts' digits; write the number in digits 0-9")
)

// Spark's size syntax, from JavaUtils.byteStringAs: the value is
// lower-cased and trimmed, then digits 0-9 (Java's [0-9] is ASCII) and an
// optional suffix, all binary units.
var (
	sizePattern     = regexp.MustCompile(`^([0-9]+)([a-z]+)?$`)
	fractionPattern = regexp.MustCompile(`^[0-9]+\.[0-9]+([a-z]+)?$`)
	sizeSuffixes    = map[string]int64{
		"b": 1,
		"k": 1 << 10, "kb": 1 << 10,
		"m": 1 << 20, "mb": 1 << 20,
		"g": 1 << 30, "gb": 1 << 30,
		"t": 1 << 40, "tb": 1 << 40,
		"p": 1 << 50, "pb": 1 << 50,
	}
)

// IsSizeUnit says whether u (lower-case) is a unit of Spark's sizes, ""
// (the conf entry's own unit) included.
func IsSizeUnit(u string) bool {
	_, ok := sizeSuffixes[u]
	return ok || u == ""
}

// IsSizeForm says whether v (trimmed, lower-case) has the form of a Spark
// size, a whole number in digits 0-9 with a unit of IsSizeUnit, and
// fraction whether it is one but for a fraction ("1.5g"), which Spark
// refuses: a value of neither form is something else (a Kubernetes
// quantity, for a memory field).
func IsSizeForm(v string) (size, fraction bool) {
	if m := sizePattern.FindStringSubmatch(v); m != nil {
		return IsSizeUnit(m[2]), false
	}
	if m := fractionPattern.FindStringSubmatch(v); m != nil {
		return false, IsSizeUnit(m[1])
	}
	return false, false
}

// ByteString reads s in Spark's size syntax (JavaUtils.byteStringAs) and
// returns bytes: lower-cased as Java's toLowerCase(Locale.ROOT) does (so
// the Kelvin sign U+212A is a k, as in Java), trimmed as Java's trim does
// (never U+00A0), a whole number in digits 0-9 and an optional binary
// suffix b, k|kb, m|mb, g|gb, t|tb, p|pb; a plain number counts plainUnit
// bytes. A negative size, which Spark's bytesConf would read as negative
// and then fail on, is no size. More than 2^63-1 bytes is ErrTooLarge.
func ByteString(s string, plainUnit int64) (int64, error) {
	v := Trim(strings.ToLower(s))
	if fractionPattern.MatchString(v) {
		return 0, ErrFraction
	}
	m := sizePattern.FindStringSubmatch(v)
	if m == nil {
		if strings.ContainsFunc(v, func(r rune) bool { return r > '9' && unicode.IsDigit(r) }) {
			return 0, ErrOtherDigits
		}
		return 0, ErrNotSize
	}
	unit := plainUnit
	if m[2] != "" {
		var ok bool
		if unit, ok = sizeSuffixes[m[2]]; !ok {
			return 0, ErrUnit
		}
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || n > math.MaxInt64/unit {
		return 0, ErrTooLarge
	}
	return n * unit, nil
}

// Bytes is ByteString for a conf entry: its errors are an *Error naming
// the key.
func Bytes(key, value string, plainUnit int64) (int64, error) {
	n, err := ByteString(value, plainUnit)
	if err != nil {
		why := err.Error()
		if errors.Is(err, ErrTooLarge) {
			why = "is too large (at most 2^63-1 bytes)"
		}
		return 0, refuse(key, value, why+unicodeSpace(Trim(value)))
	}
	return n, nil
}
