package spec

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// A quantity whose exponent or length only serves to make apimachinery's
// parser work (1e-99999999 costs it some 47 s and 300 MB) is refused
// before it is parsed; a quantity a person writes is not.
func TestParseQuantityRefusesWhatOnlyCosts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want error
	}{
		{"1e-99999999", ErrQuantityExponent},
		{"1e-9999999999999999999999", ErrQuantityExponent}, // beyond int64
		{"1E+100", ErrQuantityExponent},
		{"1e-100", ErrQuantityExponent},
		{"-1.5e4294967297", ErrQuantityExponent}, // apimachinery would read 1.5e1
		{strings.Repeat("9", MaxQuantityBytes+1), ErrQuantityTooLong},
		{"0." + strings.Repeat("0", MaxQuantityBytes) + "1", ErrQuantityTooLong},
		{"1e99", nil},
		{"1E-99", nil},
		{"+2.5e-3", nil},
		{"500m", nil},
		{"1.5Gi", nil},
		{"2", nil},
		{"1Ei", nil},
		{strings.Repeat("1", MaxQuantityBytes), nil},
	} {
		_, err := ParseQuantity(tc.in)
		if !errors.Is(err, tc.want) || tc.want == nil && err != nil {
			t.Errorf("ParseQuantity(%q): %v, want %v", Truncate(tc.in, 30), err, tc.want)
		}
	}
	// Left to apimachinery: cheap, and its own error.
	if _, err := ParseQuantity("1e5x"); err == nil || refusedQuantity(err) {
		t.Errorf("ParseQuantity(1e5x): %v, want apimachinery's error", err)
	}
}

// Every quantity field of a body refuses such a quantity with its path
// and the rule, whether sparkplug reads it as a string (coreLimit, memory)
// or it is a Kubernetes quantity (a sidecar's limits, an emptyDir's size).
// The values here are cheap for apimachinery, so that the test also runs
// on code that parses them: it accepted them all (1e4294967297 as 10).
func TestBodyQuantitiesBeyondTheBoundsAreRefused(t *testing.T) {
	long := "0." + strings.Repeat("0", 70) + "1"
	raw := `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar",
		"driver":{"coreLimit":"1e4294967297","coreRequest":"1e-100","memory":"1e100","memoryOverhead":"1` + strings.Repeat("0", 70) + `Ki","memoryLimit":"1E+100",
			"sidecars":[{"name":"s","image":"i","resources":{"limits":{"cpu":"1e-100","memory":"` + long + `"}}}]},
		"executor":{"coreRequest":"` + long + `"},
		"volumes":[{"name":"v","emptyDir":{"sizeLimit":"1e-999"}}]}`
	_, err := Parse([]byte(raw))
	var invalid *InvalidError
	if !errors.As(err, &invalid) {
		t.Fatalf("Parse: %v, want the quantities refused", err)
	}
	exponent, tooLong := "exponent out of range (at most 99 either way", "is too long for a quantity (at most 64 characters)"
	checkErrs(t, invalid.Errs, []wantErr{
		{"spark.driver.sidecars[0].resources.limits[cpu]", exponent + "; a quantity holds 1n to about 9.2e18); write it like 500m or 1Gi"},
		{"spark.driver.sidecars[0].resources.limits[memory]", tooLong + "; write it like 500m or 1Gi"},
		{"spark.volumes[0].emptyDir.sizeLimit", exponent},
		{"spark.driver.coreLimit", exponent + "; a quantity holds 1n to about 9.2e18); write it like 500m or 2"},
		{"spark.driver.memory", exponent + "; a quantity holds 1n to about 9.2e18); write it like 512m or 2Gi"},
		{"spark.driver.memoryOverhead", tooLong + "; write it like 512m or 2Gi"},
		{"spark.driver.memoryLimit", exponent},
		{"spark.driver.coreRequest", exponent},
		{"spark.executor.coreRequest", tooLong},
	})
}

// The quantity of the report, 12 bytes, in every kind of field: refused
// at once (this test would take minutes where it is parsed).
func TestTheReportedQuantityIsRefusedUnparsed(t *testing.T) {
	const q = "1e-99999999"
	raw := `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar",
		"driver":{"coreLimit":"` + q + `","memory":"` + q + `","sidecars":[{"name":"s","image":"i","resources":{"requests":{"cpu":"` + q + `"}}}]}}`
	_, err := Parse([]byte(raw))
	for _, path := range []string{"spark.driver.coreLimit", "spark.driver.memory", "spark.driver.sidecars[0].resources.requests[cpu]"} {
		if err == nil || !strings.Contains(err.Error(), path+`: Invalid value: "`+q+`": exponent out of range`) {
			t.Errorf("%s: %v, want it refused for its exponent", path, err)
		}
	}
}

// FuzzParseQuantity checks that ParseQuantity never panics, refuses only
// text beyond its bounds, and otherwise answers exactly as apimachinery.
func FuzzParseQuantity(f *testing.F) {
	for _, seed := range []string{"1", "500m", "1.5Gi", "1e-99999999", "1E+99", "-1e-100", "+.5e3", "1e4294967297", "0.000001e-99", "1Ei", "e5", "1e", "1e+", "1e-+5", strings.Repeat("9", 65)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseQuantity(in)
		if refusedQuantity(err) {
			if len(in) <= MaxQuantityBytes && !strings.ContainsAny(in, "eE") {
				t.Fatalf("ParseQuantity(%q) refused: %v", in, err)
			}
			return
		}
		if len(in) > MaxQuantityBytes {
			t.Fatalf("ParseQuantity(%q) parsed %d bytes", in, len(in))
		}
		want, wantErr := resource.ParseQuantity(in)
		if (err == nil) != (wantErr == nil) || err == nil && got.Cmp(want) != 0 {
			t.Fatalf("ParseQuantity(%q) = %v, %v; apimachinery %v, %v", in, got.String(), err, want.String(), wantErr)
		}
	})
}
