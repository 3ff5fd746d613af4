package spec

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sparkplug-io/sparkplug/plugin/confvalue"
)

const mib = 1 << 20

// Errors of ParseMemory and ParseMemoryLimit; the first one's text is what
// validation prints after the value.
var (
	ErrNotMemory        = errors.New("is not a Kubernetes quantity or Spark size like 512m")
	ErrMemoryFraction   = fmt.Errorf("%w: Spark sizes take no fractions; write 1536m, not 1.5g, or a Kubernetes quantity such as 1.5Gi", ErrNotMemory)
	ErrMemoryNegative   = errors.New("must not be negative")
	ErrMemoryOutOfRange = errors.New("is too large")
)

// ParseMemory returns the bytes a `memory` or `memoryOverhead` field asks
// for. It reads a Spark size first, as Spark would (spark.driver.memory and
// spark.*.memoryOverhead are bytesConf(ByteUnit.MiB)): case-insensitive
// digits with an optional binary suffix b, k|kb, m|mb, g|gb, t|tb, p|pb, and
// a plain number in MiB; so "1G" and "512M" are GiB and MiB as Spark reads
// them. Anything else is read as a Kubernetes quantity ("1Gi", "1.5Gi",
// "1e9"). A fraction with a Spark suffix ("1.5g") is an error, as in Spark.
func ParseMemory(s string) (int64, error) {
	return parseMemory(s, mib)
}

// ParseMemoryLimit is ParseMemory for `memoryLimit`, where a plain number is
// bytes: the Spark operator turns a Spark suffix into its binary Kubernetes
// unit (g -> Gi) and reads the rest as a Kubernetes quantity.
func ParseMemoryLimit(s string) (int64, error) {
	return parseMemory(s, 1)
}

func parseMemory(s string, plainUnit int64) (int64, error) {
	t := strings.TrimSpace(s)
	n, err := SparkBytes(t, plainUnit)
	switch {
	case err == nil || errors.Is(err, ErrMemoryOutOfRange):
		return n, err
	case errors.Is(err, ErrSparkFraction):
		if _, fraction := confvalue.IsSizeForm(strings.ToLower(t)); fraction {
			return 0, ErrMemoryFraction
		}
	}
	q, err := ParseQuantity(t)
	switch {
	case refusedQuantity(err):
		return 0, fmt.Errorf("%w; write it like 512m or 2Gi", err)
	case err != nil:
		return 0, ErrNotMemory
	}
	if q.Sign() < 0 {
		return 0, ErrMemoryNegative
	}
	// ParseQuantity clamps what it cannot hold to the largest int64.
	if q.Cmp(*resource.NewQuantity(math.MaxInt64, resource.BinarySI)) >= 0 {
		return 0, ErrMemoryOutOfRange
	}
	return q.Value(), nil
}

// Errors of SparkBytes: those of confvalue.ByteString.
var (
	ErrNotSparkSize  = confvalue.ErrNotSize
	ErrSparkFraction = confvalue.ErrFraction
	ErrSparkUnit     = confvalue.ErrUnit
)

// SparkBytes reads s in Spark's size syntax alone (JavaUtils.byteStringAs),
// never as a Kubernetes quantity: confvalue.ByteString, the one reader of
// that syntax (Java's trim, lower case, a whole number in digits 0-9 and
// an optional binary suffix; a plain number counts plainUnit bytes), with
// ErrMemoryOutOfRange for a size beyond 2^63-1 bytes. ParseMemory uses it,
// and so does the builder for the conf values Spark reads.
func SparkBytes(s string, plainUnit int64) (int64, error) {
	n, err := confvalue.ByteString(s, plainUnit)
	if errors.Is(err, confvalue.ErrTooLarge) {
		return 0, ErrMemoryOutOfRange
	}
	return n, err
}

// SparkSize returns a `memory` or `memoryOverhead` value as Spark reads it:
// a Spark size unchanged (trimmed, lower-cased), a Kubernetes quantity in
// whole MiB rounded up ("1Gi" -> "1024m").
func SparkSize(s string) (string, error) {
	lower := strings.ToLower(strings.TrimSpace(s))
	if size, _ := confvalue.IsSizeForm(lower); size {
		if _, err := ParseMemory(s); err != nil {
			return "", err
		}
		return lower, nil
	}
	n, err := ParseMemory(s)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(n/mib+min(n%mib, 1), 10) + "m", nil
}
