package confvalue

import (
	"strings"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		refusedFor string // "": accepted
	}{
		{spark.ConfExecutorInstances, "100", ""},
		{spark.ConfExecutorInstances, "١٠٠", "digits 0-9 (100)"},
		{spark.ConfExecutorInstances, " 100", "spark-submit checks this key without trimming"},
		{spark.ConfDynamicAllocationMaxExecutors, " 100", ""}, // only the conf reads it: trimmed
		{spark.ConfDynamicAllocationEnabled, "tRuE", ""},
		{spark.ConfDynamicAllocationEnabled, "true ", "spark-submit checks this key without trimming"},
		{spark.ConfDynamicAllocationEnabled, "yes", "true or false"},
		{spark.ConfMemoryOffHeapEnabled, "\ttrue", ""},
		{spark.ConfDriverCores, "2", ""},
		{spark.ConfDriverCores, "0", "1 or more cores"},
		{spark.ConfExecutorCores, "0.5", "whole number"},
		{spark.ConfExecutorMemory, "4G", ""},
		{spark.ConfExecutorMemory, "4Gi", "unknown unit"},
		{spark.ConfMemoryOffHeapSize, "1073741824", ""},
		{spark.ConfMemoryOverheadFactor, "0", ""},
		{spark.ConfExecutorMemoryOverheadFactor, "0", "above 0"},
		{spark.ConfDriverMemoryOverheadFactor, "0.2f", "plain decimal"},
		{spark.ConfUIPort, "4040\u00a0", "U+00A0"},
		{"spark.some.other.key", "\u00a0anything", ""},
	} {
		err := Check(tc.key, tc.value)
		switch {
		case tc.refusedFor == "" && err != nil:
			t.Errorf("Check(%s, %q) = %v, want it accepted", tc.key, tc.value, err)
		case tc.refusedFor != "" && (err == nil || !strings.Contains(err.Error(), tc.refusedFor) || !strings.HasPrefix(err.Error(), tc.key+" ")):
			t.Errorf("Check(%s, %q) = %v, want it refused naming the key, for %q", tc.key, tc.value, err, tc.refusedFor)
		}
	}
}

// Spark requires an off-heap size above 0 MiB when off-heap memory is on,
// however the switch is spelled.
func TestProblemsOffHeap(t *testing.T) {
	for _, tc := range []struct {
		conf    map[string]string
		refused bool
	}{
		{map[string]string{spark.ConfMemoryOffHeapEnabled: "tRuE", spark.ConfMemoryOffHeapSize: "1g"}, false},
		{map[string]string{spark.ConfMemoryOffHeapEnabled: "tRuE"}, true},
		{map[string]string{spark.ConfMemoryOffHeapEnabled: "TRUE", spark.ConfMemoryOffHeapSize: "1048575"}, true},
		{map[string]string{spark.ConfMemoryOffHeapEnabled: "true", spark.ConfMemoryOffHeapSize: "1048576"}, false},
		{map[string]string{spark.ConfMemoryOffHeapEnabled: "false"}, false},
		{map[string]string{spark.ConfMemoryOffHeapSize: "0"}, false},
	} {
		got := Problems(tc.conf)
		if tc.refused != (len(got) == 1 && got[0].Key == spark.ConfMemoryOffHeapSize) || !tc.refused && len(got) > 0 {
			t.Errorf("Problems(%v) = %v, want refused %t", tc.conf, got, tc.refused)
		}
	}
}

func TestProblemsAreSortedByKey(t *testing.T) {
	got := Problems(map[string]string{spark.ExecutorContainerName: "x", spark.ConfUIPort: "x", spark.ConfDriverCores: "x", spark.ConfExecutorInstances: "x"})
	var keys []string
	for _, e := range got {
		keys = append(keys, e.Key)
	}
	if want := []string{spark.ConfDriverCores, spark.ConfExecutorInstances, spark.ConfUIPort}; strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Errorf("Problems keys = %v, want %v", keys, want)
	}
}
