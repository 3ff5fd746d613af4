package objects

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// executorPodSet is the Workload's executor pod set: count, minCount (0:
// none) and the Spark container's memory request; ok false when there is
// none.
func executorPodSet(t *testing.T, w *unstructured.Unstructured) (count, minCount int64, memory resource.Quantity, ok bool) {
	t.Helper()
	sets, _, _ := unstructured.NestedSlice(w.Object, "spec", "podSets")
	for _, s := range sets {
		set := s.(map[string]any)
		if set["name"] != "executor" {
			continue
		}
		count, _, _ = unstructured.NestedInt64(set, "count")
		minCount, _, _ = unstructured.NestedInt64(set, "minCount")
		ctrs, _, _ := unstructured.NestedSlice(set, "template", "spec", "containers")
		for _, c := range ctrs {
			if c.(map[string]any)["name"] == spark.ExecutorContainerName {
				mem, _, _ := unstructured.NestedString(c.(map[string]any), "resources", "requests", "memory")
				memory = resource.MustParse(mem)
			}
		}
		return count, minCount, memory, true
	}
	return 0, 0, resource.Quantity{}, false
}

// A queued step's Workload reserves (the body's executors: 512m and the
// minimum overhead, 384Mi) what Spark will start, reading the
// conf as Spark does: "tRuE" turns dynamic allocation on (maxExecutors
// reserved, minExecutors admitted at least); "TRUE" off-heap memory is in
// every executor's request; and "١٠٠" executors, which Java reads as 100
// and sparkplug read as none, are refused naming the key rather than
// reserved as none.
func TestWorkloadReadsTheConfAsSpark(t *testing.T) {
	mem := func(s string) resource.Quantity { return resource.MustParse(s) }
	tests := []struct {
		name          string
		conf          map[string]string
		count, min    int64
		memory        resource.Quantity
		refusedForKey string
	}{
		{name: "instances in digits 0-9", conf: map[string]string{spark.ConfExecutorInstances: "100"}, count: 100, memory: mem("896Mi")},
		{name: "instances with a tab, which spark-submit reads untrimmed", conf: map[string]string{spark.ConfExecutorInstances: "\t100"}, refusedForKey: spark.ConfExecutorInstances},
		{name: "instances in Arabic-Indic digits", conf: map[string]string{spark.ConfExecutorInstances: "١٠٠"}, refusedForKey: spark.ConfExecutorInstances},
		{name: "instances with a no-break space", conf: map[string]string{spark.ConfExecutorInstances: "100\u00a0"}, refusedForKey: spark.ConfExecutorInstances},
		{name: "dynamic allocation in mixed case", conf: map[string]string{
			spark.ConfDynamicAllocationEnabled: "tRuE", spark.ConfDynamicAllocationMaxExecutors: "10", spark.ConfDynamicAllocationMinExecutors: "2",
		}, count: 10, min: 2, memory: mem("896Mi")},
		{name: "dynamic allocation in mixed case without a bound", conf: map[string]string{
			spark.ConfDynamicAllocationEnabled: "True",
		}, refusedForKey: spark.ConfDynamicAllocationMaxExecutors},
		{name: "dynamic allocation Spark refuses", conf: map[string]string{
			spark.ConfDynamicAllocationEnabled: "on", spark.ConfDynamicAllocationMaxExecutors: "10",
		}, refusedForKey: spark.ConfDynamicAllocationEnabled},
		{name: "off-heap in mixed case", conf: map[string]string{
			spark.ConfExecutorInstances: "3", spark.ConfMemoryOffHeapEnabled: "tRuE", spark.ConfMemoryOffHeapSize: "1g",
		}, count: 3, memory: mem("1920Mi")},
		{name: "off-heap size in bytes", conf: map[string]string{
			spark.ConfExecutorInstances: "3", spark.ConfMemoryOffHeapEnabled: "TRUE", spark.ConfMemoryOffHeapSize: " 536870912 ",
		}, count: 3, memory: mem("1408Mi")},
		{name: "off-heap on without a size", conf: map[string]string{
			spark.ConfExecutorInstances: "3", spark.ConfMemoryOffHeapEnabled: "True",
		}, refusedForKey: spark.ConfMemoryOffHeapSize},
		{name: "executor memory with a Kelvin sign", conf: map[string]string{
			spark.ConfExecutorInstances: "1", spark.ConfExecutorMemory: "2097152\u212A",
		}, count: 1, memory: mem("2432Mi")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := body(t)
			s.Executor.Instances = nil
			s.SparkConf = tt.conf
			objs, err := newBuilder(t).Cluster(s, goldenRuns["kueue"])
			if tt.refusedForKey != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refusedForKey+" ") {
					t.Fatalf("err %v, want the build refused naming %s", err, tt.refusedForKey)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			count, minCount, memory, ok := executorPodSet(t, objs.Workload)
			if !ok || count != tt.count || minCount != tt.min || memory.Cmp(tt.memory) != 0 {
				t.Errorf("executor pod set: present %t, count %d, minCount %d, memory %s; want count %d, minCount %d, memory %s",
					ok, count, minCount, memory.String(), tt.count, tt.min, tt.memory.String())
			}
		})
	}
}

// spark.*.cores is an int to Spark: the cpu request is that many cores,
// and what Spark would refuse is refused, naming the key.
func TestCoresReadAsSpark(t *testing.T) {
	for v, want := range map[string]string{"2": "2", "+3": "3", " 4": "", "0.5": "", "0": "", "٢": ""} {
		s := body(t)
		s.Driver.Cores = nil
		s.SparkConf = map[string]string{spark.ConfDriverCores: v}
		objs, err := newBuilder(t).Cluster(s, goldenRuns["default"])
		if want == "" {
			if err == nil || !strings.Contains(err.Error(), spark.ConfDriverCores+" ") {
				t.Errorf("spark.driver.cores %q: %v, want it refused naming the key", v, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("spark.driver.cores %q: %v", v, err)
			continue
		}
		got := objs.Driver.Spec.Containers[containerIndex(objs.Driver, spark.DriverContainerName)].Resources.Requests.Cpu()
		if got.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("spark.driver.cores %q: cpu request %s, want %s", v, got, want)
		}
	}
}

// A memory field is read by sparkplug (spec.ParseMemory, which trims any
// space) and passed on in the form Spark reads the same: trimmed, or whole
// MiB.
func TestMemoryFieldsPassedOnAsSparkReadsThem(t *testing.T) {
	for v, want := range map[string]string{"2g": "2g", "2g\u00a0": "2g", " 2G ": " 2G ", "1.5Gi": "1536m"} {
		s := body(t)
		s.Executor.Memory = &v
		objs, err := newBuilder(t).Cluster(s, goldenRuns["default"])
		if err != nil {
			t.Errorf("executor.memory %q: %v", v, err)
			continue
		}
		if got := objs.Conf[spark.ConfExecutorMemory]; got != want {
			t.Errorf("executor.memory %q: conf %q, want %q", v, got, want)
		}
	}
}
