package objects

import (
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

func TestByteStringAsMiB(t *testing.T) {
	for in, want := range map[string]int64{
		"1g":       1024,
		"1G":       1024,
		"512m":     512,
		"512mb":    512,
		"1024":     1024, // no unit: MiB, as spark.driver.memory reads it
		" 2g ":     2048,
		"1t":       1 << 20,
		"1500k":    1, // whole MiB kept, as Spark's ByteUnit conversion does
		"1048576b": 1,
		"0":        0,
	} {
		got, err := byteStringAsMiB(in)
		if err != nil || got != want {
			t.Errorf("byteStringAsMiB(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"1.5g", "", "g", "1 g", "1x", "-1g", "99999999999999999999g", "9999999999p"} {
		if got, err := byteStringAsMiB(in); err == nil {
			t.Errorf("byteStringAsMiB(%q) = %d, want an error", in, got)
		}
	}
}

func TestDriverMemory(t *testing.T) {
	for _, tc := range []struct {
		name      string
		typ       spec.ApplicationType
		memory    string
		overhead  string
		factor    string // spec.memoryOverheadFactor
		conf      map[string]string
		wantTotal int64
	}{
		{name: "jvm default minimum", typ: spec.TypeScala, memory: "1g", wantTotal: 1024 + 384},
		{name: "jvm 10%", typ: spec.TypeScala, memory: "8g", wantTotal: 8192 + 819},
		{name: "jvm truncates", typ: spec.TypeJava, memory: "5000m", wantTotal: 5000 + 500},
		{name: "python minimum", typ: spec.TypePython, memory: "512m", wantTotal: 512 + 384},
		{name: "python 40%", typ: spec.TypePython, memory: "2g", wantTotal: 2048 + 819},
		{name: "r 40%", typ: spec.TypeR, memory: "4g", wantTotal: 4096 + 1638},
		{name: "explicit overhead", typ: spec.TypePython, memory: "2g", overhead: "1g", wantTotal: 2048 + 1024},
		{name: "explicit overhead no unit", typ: spec.TypeScala, memory: "2g", overhead: "100", wantTotal: 2048 + 100},
		{name: "body factor", typ: spec.TypePython, memory: "4g", factor: "0.2", wantTotal: 4096 + 819},
		{name: "conf factor", typ: spec.TypeScala, memory: "4g", conf: map[string]string{spark.ConfMemoryOverheadFactor: "0.5"}, wantTotal: 4096 + 2048},
		{name: "driver factor beats the general one", typ: spec.TypeScala, memory: "4g", factor: "0.5", conf: map[string]string{spark.ConfDriverMemoryOverheadFactor: "0.25"}, wantTotal: 4096 + 1024},
		{name: "minimum overhead", typ: spec.TypeScala, memory: "1g", conf: map[string]string{spark.ConfDriverMinMemoryOverhead: "500m"}, wantTotal: 1024 + 500},
		{name: "sparkConf memory wins", typ: spec.TypeScala, memory: "1g", conf: map[string]string{spark.ConfDriverMemory: "3g"}, wantTotal: 3072 + 384},
		{name: "kubernetes quantity", typ: spec.TypeScala, memory: "1.5Gi", overhead: "512Mi", wantTotal: 1536 + 512},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := body(t)
			s.Type = tc.typ
			if tc.typ == spec.TypePython || tc.typ == spec.TypeR {
				s.MainApplicationFile = ptr.To("local:///app/main")
			}
			s.Driver.Memory = ptr.To(tc.memory)
			if tc.overhead != "" {
				s.Driver.MemoryOverhead = ptr.To(tc.overhead)
			}
			if tc.factor != "" {
				s.MemoryOverheadFactor = ptr.To(tc.factor)
			}
			s.SparkConf = tc.conf
			objs, err := newBuilder(t).Cluster(s, goldenRuns["default"])
			if err != nil {
				t.Fatal(err)
			}
			res := objs.Driver.Spec.Containers[0].Resources
			want := ptr.To(res.Requests.Memory().DeepCopy())
			want.Set(tc.wantTotal << 20)
			if res.Requests.Memory().Cmp(*want) != 0 || res.Limits.Memory().Cmp(*want) != 0 {
				t.Errorf("memory request %s limit %s, want %dMi for both", res.Requests.Memory(), res.Limits.Memory(), tc.wantTotal)
			}
		})
	}
}

func TestMemoryInSparksNotation(t *testing.T) {
	for in, want := range map[string]string{
		"1g":    "1g",
		"512M":  "512M", // Spark reads it: kept as written
		"1024":  "1024",
		"2Gi":   "2048m",
		"1.5Gi": "1536m",
		"1e9":   "954m", // rounded up to whole MiB
		"junk":  "junk", // left for Cluster to report
	} {
		if got := sparkSize(in); got != want {
			t.Errorf("sparkSize(%q) = %q, want %q", in, got, want)
		}
	}
	s := body(t)
	s.Executor.Memory = ptr.To("4Gi")
	if got := Properties(s, goldenRuns["default"])[spark.ConfExecutorMemory]; got != "4096m" {
		t.Errorf("executor memory 4Gi became %s=%q, want 4096m", spark.ConfExecutorMemory, got)
	}
}

func TestDefaultOverheadFactorReachesTheExecutors(t *testing.T) {
	r := goldenRuns["default"]
	s := body(t)
	if got := Properties(s, r)[spark.ConfMemoryOverheadFactor]; got != "0.1" {
		t.Errorf("scala: %s = %q, want 0.1", spark.ConfMemoryOverheadFactor, got)
	}
	s.Type, s.MainApplicationFile = spec.TypePython, ptr.To("local:///m.py")
	if got := Properties(s, r)[spark.ConfMemoryOverheadFactor]; got != "0.4" {
		t.Errorf("python: %s = %q, want 0.4", spark.ConfMemoryOverheadFactor, got)
	}
	s.MemoryOverheadFactor = ptr.To("0.3")
	if got := Properties(s, r)[spark.ConfMemoryOverheadFactor]; got != "0.3" {
		t.Errorf("python with a factor: %q, want the body's 0.3", got)
	}
	if got := javaDouble(1); got != "1.0" {
		t.Errorf("javaDouble(1) = %q", got)
	}
}

func TestDriverCPUAndLimits(t *testing.T) {
	s := body(t)
	s.Driver.Cores = ptr.To[int32](2)
	s.Driver.CoreRequest = nil
	s.Driver.CoreLimit = nil
	objs, err := newBuilder(t).Cluster(s, goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	res := objs.Driver.Spec.Containers[0].Resources
	if res.Requests.Cpu().String() != "2" {
		t.Errorf("cpu request %s, want the cores", res.Requests.Cpu())
	}
	if _, ok := res.Limits["cpu"]; ok {
		t.Errorf("cpu limit %s without coreLimit", res.Limits.Cpu())
	}
	s.Driver.CoreRequest, s.Driver.CoreLimit = ptr.To("500m"), ptr.To("3")
	s.Driver.GPU = &spec.GPUSpec{Name: "amd.com/gpu", Quantity: 2}
	s.Driver.MemoryLimit = ptr.To("2Gi")
	objs, err = newBuilder(t).Cluster(s, goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	res = objs.Driver.Spec.Containers[0].Resources
	if res.Requests.Cpu().String() != "500m" || res.Limits.Cpu().String() != "3" {
		t.Errorf("cpu request %s limit %s", res.Requests.Cpu(), res.Limits.Cpu())
	}
	if q := res.Limits["amd.com/gpu"]; q.String() != "2" {
		t.Errorf("gpu limit %v", res.Limits)
	}
	if res.Limits.Memory().String() != "2Gi" || res.Requests.Memory().String() != "896Mi" {
		t.Errorf("memoryLimit: request %s limit %s, want 896Mi and 2Gi", res.Requests.Memory(), res.Limits.Memory())
	}
	s.Driver.MemoryLimit = ptr.To("3g") // Spark's notation works too
	objs, err = newBuilder(t).Cluster(s, goldenRuns["default"])
	if err != nil || objs.Driver.Spec.Containers[0].Resources.Limits.Memory().String() != "3Gi" {
		t.Errorf("memoryLimit 3g: %v %v", err, objs)
	}
	s.Driver.CoreRequest = ptr.To("lots")
	if _, err := newBuilder(t).Cluster(s, goldenRuns["default"]); err == nil || !strings.Contains(err.Error(), "request.cores") {
		t.Errorf("bad coreRequest: err %v", err)
	}
}

// The quantities sparkConf gives (cpu requests and limits, custom resource
// amounts) are read through spec.ParseQuantity: one with an exponent that
// only costs apimachinery time is refused, naming the key. (spark.*.cores
// is an int to Spark, read by confvalue.)
func TestSparkConfQuantitiesBeyondTheBoundsAreRefused(t *testing.T) {
	for _, k := range []string{spark.ConfDriverLimitCores, spark.ConfDriverRequestCores, spark.ConfDriverResourcePrefix + "gpu.amount"} {
		s := body(t)
		s.SparkConf = map[string]string{k: "1e-100", spark.ConfDriverResourcePrefix + "gpu.vendor": "nvidia.com"}
		_, err := newBuilder(t).Cluster(s, goldenRuns["default"])
		if err == nil || !strings.Contains(err.Error(), k) || !strings.Contains(err.Error(), "exponent out of range") {
			t.Errorf("%s 1e-100: %v, want it refused for its exponent", k, err)
		}
	}
}
