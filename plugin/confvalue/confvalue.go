package confvalue

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Error is a conf value Spark refuses, or one sparkplug cannot be sure to
// read as Spark does. Why is the rule and the fix, without the key.
type Error struct {
	Key, Value, Why string
}

func (e *Error) Error() string { return fmt.Sprintf("%s %q: %s", e.Key, e.Value, e.Why) }

func refuse(key, value, why string) *Error { return &Error{Key: key, Value: value, Why: why} }

// Trim is Java's String.trim, which every typed reading of Spark applies
// first: it strips the characters up to U+0020 (space and the control
// characters) at both ends, and nothing else: not U+00A0, U+2003 or any
// other Unicode space, which strings.TrimSpace would strip.
func Trim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// Int reads an int conf entry as Spark does (ConfigBuilder.intConf:
// Integer.parseInt of the trimmed value): an optional + or - and digits,
// within -2147483648 to 2147483647. Java also reads the decimal digits of
// other scripts ("١٠٠" is 100), as many as its JVM's Unicode version
// knows; sparkplug cannot know that version, so it refuses them, saying
// the number to write.
func Int(key, value string) (int32, error) {
	t := Trim(value)
	digits := strings.TrimLeft(t, "+-")
	if len(t)-len(digits) > 1 || digits == "" {
		return 0, refuse(key, value, wantInt(t))
	}
	var n int64
	for _, r := range digits {
		switch {
		case r >= '0' && r <= '9':
			n = min(n*10+int64(r-'0'), math.MaxInt32+2) // past either bound
		case unicode.IsDigit(r):
			return 0, refuse(key, value, otherDigits(t))
		default:
			return 0, refuse(key, value, wantInt(t))
		}
	}
	if t[0] == '-' {
		n = -n
	}
	if n > math.MaxInt32 || n < math.MinInt32 {
		return 0, refuse(key, value, "Spark refuses it: beyond a Java int (-2147483648 to 2147483647)")
	}
	return int32(n), nil
}

// otherDigits says how to write a number given in another script's digits.
func otherDigits(t string) string {
	why := "Spark reads the digits of other scripts only as far as its JVM's Unicode version knows them, which sparkplug cannot tell; write the number in digits 0-9"
	var b strings.Builder
	for _, r := range t {
		if d, ok := javaDigit(r); ok {
			b.WriteByte(byte('0' + d))
		} else {
			b.WriteRune(r)
		}
	}
	if _, err := strconv.ParseInt(b.String(), 10, 64); err == nil {
		why += " (" + b.String() + ")"
	}
	return why
}

// javaDigit is a decimal digit's value, as Java's Character.digit(r, 10)
// reads it: Unicode's decimal digits come in runs of ten, 0 to 9.
func javaDigit(r rune) (int, bool) {
	if !unicode.IsDigit(r) {
		return 0, false
	}
	zero := r
	for unicode.IsDigit(zero - 1) {
		zero--
	}
	return int(r-zero) % 10, true
}

// wantInt is why t is no int, with a word on a space Java does not trim.
func wantInt(t string) string {
	return "Spark refuses it: want a whole number such as 4" + unicodeSpace(t)
}

// unicodeSpace names the first space in t that Java's trim leaves, if
// any, as the likely cause of a refusal.
func unicodeSpace(t string) string {
	i := strings.IndexFunc(t, func(r rune) bool { return r > ' ' && unicode.IsSpace(r) })
	if i < 0 {
		return ""
	}
	r, _ := utf8.DecodeRuneInString(t[i:])
	return fmt.Sprintf(" (it holds %U, a space Java's trim keeps; remove it)", r)
}

// Bool reads a boolean conf entry as Spark does (ConfigBuilder.booleanConf:
// Scala's toBoolean of the trimmed value): true or false in any case
// ("tRuE" is true); anything else ("1", "yes", "on") Spark refuses.
func Bool(key, value string) (bool, error) {
	// Go's EqualFold and Java's equalsIgnoreCase agree on these two words
	// (both match "falſe", with U+017F, to false).
	switch t := Trim(value); {
	case strings.EqualFold(t, "true"):
		return true, nil
	case strings.EqualFold(t, "false"):
		return false, nil
	default:
		return false, refuse(key, value, "Spark refuses it: want true or false"+unicodeSpace(t))
	}
}

// plainDecimal is what Go's ParseFloat and Java's Double.parseDouble read
// alike: an optional sign, decimal digits 0-9 with an optional point and
// an optional exponent. Java also reads "0.1d", "0x1p-3", "NaN" and
// "Infinity", Go "inf" and "0x1p-3" (each its own way).
var plainDecimal = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// Double reads a double conf entry as Spark does (ConfigBuilder.doubleConf:
// Double.parseDouble of the trimmed value), for plain decimals, which both
// languages round alike; a value beyond a double is infinite, as in Java.
// Other forms Java reads (type suffixes, hexadecimal, NaN, Infinity) are
// refused: write a plain decimal.
func Double(key, value string) (float64, error) {
	t := Trim(value)
	if !plainDecimal.MatchString(t) {
		return 0, refuse(key, value, "want a plain decimal number such as 0.1 (no suffix, hexadecimal, NaN or Infinity)"+unicodeSpace(t))
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, refuse(key, value, "want a plain decimal number such as 0.1")
	}
	return f, nil
}
