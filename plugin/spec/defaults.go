package spec

import (
	"strconv"

	"github.com/sparkplug-io/sparkplug/plugin/confvalue"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Spark configuration keys that only defaulting and validation read.
const (
	// confDynamicAllocationEnabled is Spark's key.
	confDynamicAllocationEnabled = "spark.dynamicAllocation.enabled"
	// confDynamicAllocationEnabledKSO is the key the Spark operator's
	// defaulter (api/v1beta2/defaults.go, v2.4 and later) reads instead.
	confDynamicAllocationEnabledKSO = "spark.dynamicallocation.enabled"
)

// Defaults the Spark operator sets.
const (
	defaultCores             = 1
	defaultMemory            = "1g"
	defaultExecutorInstances = 1
	defaultRetryIntervalSecs = 5
	defaultType              = TypeScala
	defaultMode              = ModeCluster
	defaultRestartPolicyType = RestartNever
	defaultShuffleTracking   = true
)

// SetDefaults fills in what the Spark operator's defaulter fills in
// (SetSparkApplicationDefaults in api/v1beta2/defaults.go, which its mutating
// webhook runs since v2.4), so that a pasted spec means what it meant there:
//
//   - type Scala and mode cluster when unset;
//   - restartPolicy.type Never; when it is not Never, both retry intervals 5
//     seconds (the retry counts are left unset, which means no retries);
//   - driver and executor cores 1 and memory 1g, unless set here or in
//     sparkConf (spark.driver.cores, spark.executor.memory, ...);
//   - executor instances 1, unless set in sparkConf or dynamic allocation is
//     on;
//   - dynamicAllocation.shuffleTrackingEnabled true when dynamic allocation
//     is on through the dynamicAllocation field.
func SetDefaults(s *SparkApplicationSpec) {
	if s == nil {
		return
	}
	if s.Type == "" {
		s.Type = defaultType
	}
	if s.Mode == "" {
		s.Mode = defaultMode
	}
	if s.RestartPolicy.Type == "" {
		s.RestartPolicy.Type = defaultRestartPolicyType
	}
	if s.RestartPolicy.Type != RestartNever {
		if s.RestartPolicy.OnFailureRetryInterval == nil {
			s.RestartPolicy.OnFailureRetryInterval = ptr[int64](defaultRetryIntervalSecs)
		}
		if s.RestartPolicy.OnSubmissionFailureRetryInterval == nil {
			s.RestartPolicy.OnSubmissionFailureRetryInterval = ptr[int64](defaultRetryIntervalSecs)
		}
	}

	// The operator tests whether the key is present for cores and memory,
	// but whether it is non-empty for instances.
	if _, ok := s.SparkConf[spark.ConfDriverCores]; !ok && s.Driver.Cores == nil {
		s.Driver.Cores = ptr[int32](defaultCores)
	}
	if _, ok := s.SparkConf[spark.ConfDriverMemory]; !ok && s.Driver.Memory == nil {
		s.Driver.Memory = ptr(defaultMemory)
	}
	if _, ok := s.SparkConf[spark.ConfExecutorCores]; !ok && s.Executor.Cores == nil {
		s.Executor.Cores = ptr[int32](defaultCores)
	}
	if _, ok := s.SparkConf[spark.ConfExecutorMemory]; !ok && s.Executor.Memory == nil {
		s.Executor.Memory = ptr(defaultMemory)
	}
	dynamic := s.DynamicAllocationEnabled()
	if s.Executor.Instances == nil && s.SparkConf[spark.ConfExecutorInstances] == "" && !dynamic {
		s.Executor.Instances = ptr[int32](defaultExecutorInstances)
	}
	if dynamic && s.DynamicAllocation != nil && s.DynamicAllocation.ShuffleTrackingEnabled == nil {
		s.DynamicAllocation.ShuffleTrackingEnabled = ptr(defaultShuffleTracking)
	}
}

// DynamicAllocationEnabled says whether Spark's dynamic executor allocation
// is on, as the Spark operator decides it: the dynamicAllocation field when
// it is present, otherwise sparkConf: Spark's key as Spark reads it
// (confvalue.Bool: "tRuE" is on), or the lower-case key the operator's
// defaulter reads, as it reads it (Go's strconv.ParseBool).
func (s *SparkApplicationSpec) DynamicAllocationEnabled() bool {
	if s.DynamicAllocation != nil {
		return s.DynamicAllocation.Enabled
	}
	if on, err := confvalue.Bool(confDynamicAllocationEnabled, s.SparkConf[confDynamicAllocationEnabled]); err == nil && on {
		return true
	}
	on, _ := strconv.ParseBool(s.SparkConf[confDynamicAllocationEnabledKSO])
	return on
}

func ptr[T any](v T) *T { return &v }
