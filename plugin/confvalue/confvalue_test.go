package confvalue

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// Each case is what Spark reads the value as (Integer.parseInt,
// toBoolean, Double.parseDouble of Java's trim), or a refusal whose text
// holds refusedFor.
func TestInt(t *testing.T) {
	for _, tc := range []struct {
		in         string
		want       int32
		refusedFor string
	}{
		{in: "100", want: 100},
		{in: "+7", want: 7},
		{in: "-3", want: -3},
		{in: "007", want: 7},
		{in: " 42\t", want: 42},
		{in: "\n\r42\x00", want: 42}, // Java's trim strips every char up to U+0020
		{in: "2147483647", want: math.MaxInt32},
		{in: "-2147483648", want: math.MinInt32},
		{in: "2147483648", refusedFor: "beyond a Java int"},
		{in: "-2147483649", refusedFor: "beyond a Java int"},
		{in: "99999999999999999999999", refusedFor: "beyond a Java int"},
		{in: "١٠٠", refusedFor: "digits 0-9 (100)"}, // Arabic-Indic: Java reads 100
		{in: "１２", refusedFor: "digits 0-9 (12)"},   // fullwidth
		{in: "-४२", refusedFor: "digits 0-9 (-42)"}, // Devanagari
		{in: "𝟗", refusedFor: "digits 0-9 (9)"},     // mathematical bold nine, in a run of runs
		{in: "100\u00a0", refusedFor: "U+00A0"},     // Java's trim keeps no-break space
		{in: "\u2003100", refusedFor: "U+2003"},     // and em space
		{in: "", refusedFor: "whole number"},
		{in: " ", refusedFor: "whole number"},
		{in: "+", refusedFor: "whole number"},
		{in: "+-1", refusedFor: "whole number"},
		{in: "1_000", refusedFor: "whole number"},
		{in: "1.0", refusedFor: "whole number"},
		{in: "0x10", refusedFor: "whole number"},
		{in: "1e3", refusedFor: "whole number"},
		{in: "5-", refusedFor: "whole number"},
	} {
		got, err := Int("spark.executor.instances", tc.in)
		if tc.refusedFor == "" {
			if err != nil || got != tc.want {
				t.Errorf("Int(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Key != "spark.executor.instances" || !strings.Contains(err.Error(), tc.refusedFor) || !strings.HasPrefix(err.Error(), "spark.executor.instances ") {
			t.Errorf("Int(%q) = %d, %v; want it refused naming the key, for %q", tc.in, got, err, tc.refusedFor)
		}
	}
}

func TestBool(t *testing.T) {
	for _, tc := range []struct {
		in         string
		want       bool
		refusedFor string
	}{
		{in: "true", want: true},
		{in: "tRuE", want: true}, // Scala's toBoolean ignores case
		{in: "TRUE", want: true},
		{in: "False", want: false},
		{in: " true\n", want: true},
		{in: "\x01false\x1f", want: false},
		{in: "falſe", want: false}, // U+017F: Java's equalsIgnoreCase upper-cases it to S
		{in: "1", refusedFor: "true or false"},
		{in: "0", refusedFor: "true or false"},
		{in: "yes", refusedFor: "true or false"},
		{in: "t", refusedFor: "true or false"},
		{in: "", refusedFor: "true or false"},
		{in: "true\u00a0", refusedFor: "U+00A0"},
		{in: "\u3000true", refusedFor: "U+3000"},
	} {
		got, err := Bool("spark.dynamicAllocation.enabled", tc.in)
		if tc.refusedFor == "" {
			if err != nil || got != tc.want {
				t.Errorf("Bool(%q) = %t, %v; want %t", tc.in, got, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.refusedFor) || !strings.HasPrefix(err.Error(), "spark.dynamicAllocation.enabled ") {
			t.Errorf("Bool(%q) = %t, %v; want it refused naming the key, for %q", tc.in, got, err, tc.refusedFor)
		}
	}
}

func TestBytes(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		in        string
		plainUnit int64
		want      int64
		wantErr   error
	}{
		{in: "512m", plainUnit: mib, want: 512 * mib},
		{in: "2G", plainUnit: mib, want: 2 << 30},
		{in: "1024", plainUnit: mib, want: 1024 * mib},
		{in: "1024", plainUnit: 1, want: 1024},
		{in: " 4Gb\t", plainUnit: mib, want: 4 << 30},
		{in: "1\u212Ab", plainUnit: 1, want: 1 << 10}, // Kelvin sign: Java lower-cases it to k too
		{in: "8p", plainUnit: 1, want: 8 << 50},
		{in: "1.5g", plainUnit: mib, wantErr: ErrFraction},
		{in: "1gi", plainUnit: mib, wantErr: ErrUnit},
		{in: "-1g", plainUnit: mib, wantErr: ErrNotSize},
		{in: "+1g", plainUnit: mib, wantErr: ErrNotSize},
		{in: "", plainUnit: mib, wantErr: ErrNotSize},
		{in: "1 g", plainUnit: mib, wantErr: ErrNotSize},
		{in: "512m\u00a0", plainUnit: mib, wantErr: ErrNotSize},
		{in: "١٠٠m", plainUnit: mib, wantErr: ErrOtherDigits}, // Java's regex [0-9] is ASCII
		{in: "9223372036854775807", plainUnit: 1, want: math.MaxInt64},
		{in: "9223372036854775808", plainUnit: 1, wantErr: ErrTooLarge},
		{in: "8192p", plainUnit: 1, wantErr: ErrTooLarge},
	} {
		got, err := ByteString(tc.in, tc.plainUnit)
		if !errors.Is(err, tc.wantErr) || err == nil && got != tc.want {
			t.Errorf("ByteString(%q, %d) = %d, %v; want %d, %v", tc.in, tc.plainUnit, got, err, tc.want, tc.wantErr)
		}
		_, keyed := Bytes("spark.executor.memory", tc.in, tc.plainUnit)
		if (keyed != nil) != (tc.wantErr != nil) || keyed != nil && !strings.HasPrefix(keyed.Error(), "spark.executor.memory ") {
			t.Errorf("Bytes(%q) = %v; want the same verdict, naming the key", tc.in, keyed)
		}
	}
	if _, err := Bytes("spark.executor.memory", "512m\u00a0", mib); err == nil || !strings.Contains(err.Error(), "U+00A0") {
		t.Errorf("Bytes with U+00A0: %v, want the space named", err)
	}
}

func TestDouble(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    float64
		refused bool
	}{
		{in: "0.1", want: 0.1},
		{in: " .4 ", want: 0.4},
		{in: "1.", want: 1},
		{in: "+1e-1", want: 0.1},
		{in: "-0.5", want: -0.5},
		{in: "1e400", want: math.Inf(1)}, // Java reads it as Infinity too
		{in: "0.1d", refused: true},      // Java reads it, Go does not
		{in: "0x1p-3", refused: true},    // both read it, but only by their own rules
		{in: "NaN", refused: true},
		{in: "Infinity", refused: true},
		{in: "inf", refused: true}, // Go reads it, Java does not
		{in: "1_0", refused: true},
		{in: "0.1\u00a0", refused: true},
		{in: "٠.٤", refused: true},
		{in: "", refused: true},
	} {
		got, err := Double("spark.kubernetes.memoryOverheadFactor", tc.in)
		if tc.refused != (err != nil) || !tc.refused && got != tc.want {
			t.Errorf("Double(%q) = %v, %v; want %v (refused %t)", tc.in, got, err, tc.want, tc.refused)
		}
	}
}

func TestTrim(t *testing.T) {
	for in, want := range map[string]string{
		" \t\n\r\x00\x1fa b\x20": "a b",
		"\u00a0a\u00a0":          "\u00a0a\u00a0",
		"\u0085a":                "\u0085a", // NEL is above U+0020
		"":                       "",
	} {
		if got := Trim(in); got != want {
			t.Errorf("Trim(%q) = %q, want %q", in, got, want)
		}
	}
}
