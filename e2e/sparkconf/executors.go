package sparkconf

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// DefaultExecutorInstances is spark.executor.instances when unset.
const DefaultExecutorInstances = 2

// ExecutorCount is how many executors a driver starts with: under dynamic
// allocation max(initialExecutors, minExecutors, instances), else
// spark.executor.instances (default 2).
func ExecutorCount(conf map[string]string) (int, error) {
	get := func(key string, def int) (int, error) {
		v, ok := conf[key]
		if !ok || v == "" {
			return def, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > math.MaxInt16 {
			return 0, fmt.Errorf("%s=%q is not a count", key, v)
		}
		return n, nil
	}
	if conf[spark.ConfDynamicAllocationEnabled] == "true" {
		n := 0
		for _, k := range []string{spark.ConfDynamicAllocationInitialExecutors, spark.ConfDynamicAllocationMinExecutors, spark.ConfExecutorInstances} {
			v, err := get(k, 0)
			if err != nil {
				return 0, err
			}
			n = max(n, v)
		}
		return n, nil
	}
	return get(spark.ConfExecutorInstances, DefaultExecutorInstances)
}

// Keys Spark reads for an executor's memory that plugin/spark does not
// name.
const (
	confExecutorMemoryOverheadFactor = "spark.executor.memoryOverheadFactor"
	confExecutorMinMemoryOverhead    = "spark.executor.minMemoryOverhead"
	confExecutorPySparkMemory        = "spark.executor.pyspark.memory"
)

// ExecutorMemoryMiB is the memory request and limit of an executor
// container, as BasicExecutorFeatureStep computes it: spark.executor.memory
// (default 1g) plus spark.executor.memoryOverhead, or else the overhead
// factor (spark.executor.memoryOverheadFactor, then
// spark.kubernetes.memoryOverheadFactor; 0.1, or 0.4 for Python and R)
// times the memory, at least spark.executor.minMemoryOverhead (384 MiB);
// plus spark.executor.pyspark.memory for Python.
func ExecutorMemoryMiB(conf map[string]string) (int64, error) {
	mem, err := mebibytes(conf, spark.ConfExecutorMemory, "1g")
	if err != nil {
		return 0, err
	}
	nonJVM := conf[spark.ConfAppResourceType] == spark.ResourceTypePython || conf[spark.ConfAppResourceType] == spark.ResourceTypeR
	overhead, err := mebibytes(conf, spark.ConfExecutorMemoryOverhead, "")
	if err != nil {
		return 0, err
	}
	if _, set := conf[spark.ConfExecutorMemoryOverhead]; !set {
		factor := 0.1
		if nonJVM {
			factor = 0.4
		}
		for _, k := range []string{spark.ConfMemoryOverheadFactor, confExecutorMemoryOverheadFactor} {
			if v, ok := conf[k]; ok {
				if factor, err = strconv.ParseFloat(v, 64); err != nil || factor < 0 {
					return 0, fmt.Errorf("%s=%q is not a factor", k, v)
				}
			}
		}
		floor, err := mebibytes(conf, confExecutorMinMemoryOverhead, "384m")
		if err != nil {
			return 0, err
		}
		overhead = max(int64(factor*float64(mem)), floor)
	}
	total := mem + overhead
	if conf[spark.ConfAppResourceType] == spark.ResourceTypePython {
		py, err := mebibytes(conf, confExecutorPySparkMemory, "")
		if err != nil {
			return 0, err
		}
		total += py
	}
	return total, nil
}

// unitShifts are the size units Spark knows, as powers of two.
var unitShifts = map[string]int{"": 20, "b": 0, "k": 10, "kb": 10, "m": 20, "mb": 20, "g": 30, "gb": 30, "t": 40, "tb": 40, "p": 50, "pb": 50}

// mebibytes reads a size as Spark's byteStringAsMb does: a number with an
// optional unit (b, k, kb, m, mb, g, gb, t, tb, p, pb), MiB without one.
// An unset key reads as def ("" is 0).
func mebibytes(conf map[string]string, key, def string) (int64, error) {
	v, ok := conf[key]
	if !ok {
		v = def
	}
	if v == "" {
		return 0, nil
	}
	s := strings.ToLower(strings.TrimSpace(v))
	digits := strings.TrimRightFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	n, err := strconv.ParseInt(digits, 10, 64)
	shift, known := unitShifts[s[len(digits):]]
	if err != nil || !known || n < 0 {
		return 0, fmt.Errorf("%s=%q is not a size", key, v)
	}
	return (n << shift) >> 20, nil
}
