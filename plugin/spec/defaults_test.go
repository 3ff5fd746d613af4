package spec

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The cases follow SetSparkApplicationDefaults in kubeflow/spark-operator's
// api/v1beta2/defaults.go (v2.5.2) and its defaults_test.go.
func TestSetDefaults(t *testing.T) {
	// defaulted is what the operator makes of an empty spec.
	defaulted := func() *SparkApplicationSpec {
		return &SparkApplicationSpec{
			Type:          TypeScala,
			Mode:          ModeCluster,
			RestartPolicy: RestartPolicy{Type: RestartNever},
			Driver:        DriverSpec{SparkPodSpec: SparkPodSpec{Cores: ptr[int32](1), Memory: ptr("1g")}},
			Executor:      ExecutorSpec{SparkPodSpec: SparkPodSpec{Cores: ptr[int32](1), Memory: ptr("1g")}, Instances: ptr[int32](1)},
		}
	}
	tests := []struct {
		name string
		in   *SparkApplicationSpec
		want func() *SparkApplicationSpec
	}{
		{
			name: "empty spec",
			in:   &SparkApplicationSpec{},
			want: defaulted,
		},
		{
			name: "set values are kept",
			in: &SparkApplicationSpec{
				Type:          TypePython,
				RestartPolicy: RestartPolicy{Type: RestartNever},
				Driver:        DriverSpec{SparkPodSpec: SparkPodSpec{Cores: ptr[int32](2), Memory: ptr("4g")}},
				Executor:      ExecutorSpec{SparkPodSpec: SparkPodSpec{Cores: ptr[int32](4), Memory: ptr("8g")}, Instances: ptr[int32](5)},
			},
			want: func() *SparkApplicationSpec {
				s := defaulted()
				s.Type = TypePython
				s.Driver.Cores, s.Driver.Memory = ptr[int32](2), ptr("4g")
				s.Executor.Cores, s.Executor.Memory, s.Executor.Instances = ptr[int32](4), ptr("8g"), ptr[int32](5)
				return s
			},
		},
		{
			name: "OnFailure gets 5 second intervals and no retry count",
			in:   &SparkApplicationSpec{RestartPolicy: RestartPolicy{Type: RestartOnFailure}},
			want: func() *SparkApplicationSpec {
				s := defaulted()
				s.RestartPolicy = RestartPolicy{Type: RestartOnFailure, OnFailureRetryInterval: ptr[int64](5), OnSubmissionFailureRetryInterval: ptr[int64](5)}
				return s
			},
		},
		{
			name: "Always keeps a given interval",
			in:   &SparkApplicationSpec{RestartPolicy: RestartPolicy{Type: RestartAlways, OnFailureRetryInterval: ptr[int64](30), OnFailureRetries: ptr[int32](3)}},
			want: func() *SparkApplicationSpec {
				s := defaulted()
				s.RestartPolicy = RestartPolicy{Type: RestartAlways, OnFailureRetries: ptr[int32](3), OnFailureRetryInterval: ptr[int64](30), OnSubmissionFailureRetryInterval: ptr[int64](5)}
				return s
			},
		},
		{
			name: "Never gets no intervals",
			in:   &SparkApplicationSpec{RestartPolicy: RestartPolicy{Type: RestartNever, OnFailureRetries: ptr[int32](2)}},
			want: func() *SparkApplicationSpec {
				s := defaulted()
				s.RestartPolicy.OnFailureRetries = ptr[int32](2)
				return s
			},
		},
		{
			name: "cores and memory in sparkConf are not overridden, even when empty",
			in: &SparkApplicationSpec{SparkConf: map[string]string{
				"spark.driver.cores": "2", "spark.driver.memory": "", "spark.executor.cores": "3", "spark.executor.memory": "2g",
			}},
			want: func() *SparkApplicationSpec {
				s := defaulted()
				s.SparkConf = map[string]string{"spark.driver.cores": "2", "spark.driver.memory": "", "spark.executor.cores": "3", "spark.executor.memory": "2g"}
				s.Driver.Cores, s.Driver.Memory, s.Executor.Cores, s.Executor.Memory = nil, nil, nil, nil
				return s
			},
		},
		{
			name: "executor instances in sparkConf are not overridden",
			in:   &SparkApplicationSpec{SparkConf: map[string]string{"spark.executor.instances": "4"}},
			want: func() *SparkApplicationSpec {
				s := defaulted()
				s.SparkConf = map[string]string{"spark.executor.instances": "4"}
				s.Executor.Instances = nil
				return s
			},
		},
		{
			name: "an empty executor instances in sparkConf is overridden",
			in:   &SparkApplicationSpec{SparkConf: map[string]string{"spark.executor.instances": ""}},
			want: func() *SparkApplicationSpec {
				s := defaulted()
				s.SparkConf = map[string]string{"spark.executor.instances": ""}
				return s
			},
		},
		{
			name: "dynamic allocation: no instances, shuffle tracking on",
			in:   &SparkApplicationSpec{DynamicAllocation: &DynamicAllocation{Enabled: true, MaxExecutors: ptr[int32](10)}},
			want: func() *SparkApplicationSpec {
				s := defaulted()
				s.Executor.Instances = nil
				s.DynamicAllocation = &DynamicAllocation{Enabled: true, MaxExecutors: ptr[int32](10), ShuffleTrackingEnabled: ptr(true)}
				return s
			},
		},
		{
			name: "dynamic allocation keeps shuffle tracking off",
			in:   &SparkApplicationSpec{DynamicAllocation: &DynamicAllocation{Enabled: true, ShuffleTrackingEnabled: ptr(false)}},
			want: func() *SparkApplicationSpec {
				s := defaulted()
				s.Executor.Instances = nil
				s.DynamicAllocation = &DynamicAllocation{Enabled: true, ShuffleTrackingEnabled: ptr(false)}
				return s
			},
		},
		{
			name: "dynamic allocation in sparkConf",
			in:   &SparkApplicationSpec{SparkConf: map[string]string{"spark.dynamicAllocation.enabled": "true"}},
			want: func() *SparkApplicationSpec {
				s := defaulted()
				s.SparkConf = map[string]string{"spark.dynamicAllocation.enabled": "true"}
				s.Executor.Instances = nil
				return s
			},
		},
		{
			name: "dynamic allocation under the operator's lower-case key",
			in:   &SparkApplicationSpec{SparkConf: map[string]string{"spark.dynamicallocation.enabled": "1"}},
			want: func() *SparkApplicationSpec {
				s := defaulted()
				s.SparkConf = map[string]string{"spark.dynamicallocation.enabled": "1"}
				s.Executor.Instances = nil
				return s
			},
		},
		{
			name: "the dynamicAllocation field wins over sparkConf",
			in: &SparkApplicationSpec{
				DynamicAllocation: &DynamicAllocation{Enabled: false},
				SparkConf:         map[string]string{"spark.dynamicAllocation.enabled": "true"},
			},
			want: func() *SparkApplicationSpec {
				s := defaulted()
				s.DynamicAllocation = &DynamicAllocation{}
				s.SparkConf = map[string]string{"spark.dynamicAllocation.enabled": "true"}
				return s
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			SetDefaults(tt.in)
			if diff := cmp.Diff(tt.want(), tt.in); diff != "" {
				t.Errorf("SetDefaults (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetDefaultsIsIdempotentAndNilSafe(t *testing.T) {
	SetDefaults(nil)
	s := &SparkApplicationSpec{RestartPolicy: RestartPolicy{Type: RestartOnFailure}}
	SetDefaults(s)
	once := *s
	SetDefaults(s)
	if diff := cmp.Diff(once, *s); diff != "" {
		t.Errorf("second SetDefaults changed the spec:\n%s", diff)
	}
}
