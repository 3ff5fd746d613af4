package confvalue

import (
	"maps"
	"slices"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// kind is how Spark reads a conf entry.
type kind int

const (
	kindInt      kind = iota + 1
	kindCount         // an int Spark's spark-submit also checks, untrimmed
	kindCores         // kindCount, and above 0
	kindBool          // a boolean
	kindBoolSub       // a boolean spark-submit also reads, untrimmed
	kindMiB           // bytesConf(ByteUnit.MiB): a plain number is MiB
	kindBytes         // bytesConf(ByteUnit.BYTE): a plain number is bytes
	kindDouble        // doubleConf
	kindPositive      // doubleConf, above 0
)

// kinds are the conf entries sparkplug reads to size requests, quota and
// executor counts or to decide what to build, each with Spark's type of
// it (core/src/main/scala/org/apache/spark/internal/config and the
// Kubernetes Config.scala). spark-submit's SparkSubmitArguments reads
// spark.executor.instances, spark.{driver,executor}.cores and
// spark.dynamicAllocation.enabled once more, untrimmed, to check them;
// those are kindCount, kindCores and kindBoolSub.
var kinds = map[string]kind{
	spark.ConfExecutorInstances:                 kindCount,
	spark.ConfDynamicAllocationMinExecutors:     kindInt,
	spark.ConfDynamicAllocationMaxExecutors:     kindInt,
	spark.ConfDynamicAllocationInitialExecutors: kindInt,
	spark.ConfDriverCores:                       kindCores,
	spark.ConfExecutorCores:                     kindCores,
	spark.ConfDriverPort:                        kindInt,
	spark.ConfBlockManagerPort:                  kindInt,
	spark.ConfBlockManagerPortAll:               kindInt,
	spark.ConfUIPort:                            kindInt,

	spark.ConfDynamicAllocationEnabled: kindBoolSub,
	spark.ConfMemoryOffHeapEnabled:     kindBool,
	spark.ConfLocalDirsTmpfs:           kindBool,

	spark.ConfDriverMemory:              kindMiB,
	spark.ConfExecutorMemory:            kindMiB,
	spark.ConfDriverMemoryOverhead:      kindMiB,
	spark.ConfExecutorMemoryOverhead:    kindMiB,
	spark.ConfDriverMinMemoryOverhead:   kindMiB,
	spark.ConfExecutorMinMemoryOverhead: kindMiB,
	spark.ConfExecutorPySparkMemory:     kindMiB,
	spark.ConfMemoryOffHeapSize:         kindBytes,

	spark.ConfMemoryOverheadFactor:         kindDouble,
	spark.ConfDriverMemoryOverheadFactor:   kindPositive,
	spark.ConfExecutorMemoryOverheadFactor: kindPositive,
}

// Keys are the conf keys Problems reads, sorted.
func Keys() []string { return slices.Sorted(maps.Keys(kinds)) }

// untrimmed is why spark-submit's second reading refuses whitespace.
const untrimmed = "spark-submit checks this key without trimming it, the conf reads it trimmed, so Spark reads it two ways; remove the spaces around the value"

// Check reads one conf entry as Spark does and says what is wrong with
// it: nil when Spark reads it as sparkplug does, or when sparkplug does
// not read the key.
func Check(key, value string) error {
	k, ok := kinds[key]
	if !ok {
		return nil
	}
	var err error
	switch k {
	case kindInt:
		_, err = Int(key, value)
	case kindCount, kindCores:
		var n int32
		if n, err = Int(key, value); err == nil && Trim(value) != value {
			return refuse(key, value, untrimmed)
		}
		if err == nil && k == kindCores && n < 1 {
			return refuse(key, value, "Spark refuses it: want 1 or more cores; for part of a CPU set spark.kubernetes.*.request.cores, such as 500m")
		}
	case kindBool, kindBoolSub:
		if _, err = Bool(key, value); err == nil && k == kindBoolSub && Trim(value) != value {
			return refuse(key, value, untrimmed)
		}
	case kindMiB:
		_, err = Bytes(key, value, 1<<20)
	case kindBytes:
		_, err = Bytes(key, value, 1)
	case kindDouble, kindPositive:
		var f float64
		if f, err = Double(key, value); err == nil && k == kindPositive && !(f > 0) {
			return refuse(key, value, "Spark refuses it: want a number above 0, such as 0.1")
		}
	}
	return err
}

// Problems are what Spark would refuse, or read otherwise than sparkplug,
// in a conf, by key: every entry of kinds (Check) and the off-heap size
// Spark requires, above 0 MiB, when off-heap memory is on
// (Utils.checkOffHeapEnabled, which fails the executors' start).
func Problems(conf map[string]string) []*Error {
	var out []*Error
	for _, k := range slices.Sorted(maps.Keys(conf)) {
		if e, ok := Check(k, conf[k]).(*Error); ok && e != nil {
			out = append(out, e)
		}
	}
	v, set := conf[spark.ConfMemoryOffHeapEnabled]
	if on, err := Bool(spark.ConfMemoryOffHeapEnabled, v); set && err == nil && on {
		size, err := Bytes(spark.ConfMemoryOffHeapSize, conf[spark.ConfMemoryOffHeapSize], 1)
		if _, given := conf[spark.ConfMemoryOffHeapSize]; !given || err == nil && size < 1<<20 {
			out = append(out, refuse(spark.ConfMemoryOffHeapSize, conf[spark.ConfMemoryOffHeapSize],
				"Spark requires an off-heap size of 1m or more when "+spark.ConfMemoryOffHeapEnabled+" is true; set it, such as 512m, or turn off-heap memory off"))
		}
	}
	return out
}
