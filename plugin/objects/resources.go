package objects

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sparkplug-io/sparkplug/plugin/confvalue"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

const mib = 1 << 20

// byteStringAsMiB parses a Spark memory size ("512m", "2g", "1024") the way
// Spark reads spark.driver.memory (spec.SparkBytes; no unit means MiB).
// Whole MiB are kept and the rest dropped, as Spark's conversion does.
// Fractions ("1.5g") are an error, as in Spark.
func byteStringAsMiB(s string) (int64, error) {
	n, err := spec.SparkBytes(s, mib)
	if err != nil {
		return 0, fmt.Errorf("memory %q: %w", s, err)
	}
	return n / mib, nil
}

// memoryQuantity reads a memory limit written either as Spark does
// ("4g", "4096m") or as Kubernetes does ("4Gi").
func memoryQuantity(s string) (resource.Quantity, error) {
	if v := strings.TrimSpace(s); strings.TrimLeft(v, "0123456789") != "" {
		// A unit: a Spark size if Spark knows it ("4g"), else a quantity.
		if n, err := spec.SparkBytes(v, 1); err == nil {
			return *resource.NewQuantity(n, resource.BinarySI), nil
		}
	}
	q, err := spec.ParseQuantity(strings.TrimSpace(s))
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("memory %q: want a Spark size such as 4g or a Kubernetes quantity such as 4Gi", s)
	}
	return q, nil
}

// memory is a Spark process's memory and the overhead Spark adds for
// everything outside its heap, in MiB; the container requests and is
// limited to their sum.
type memory struct {
	MiB, OverheadMiB int64
}

// TotalMiB is what the container asks for.
func (m memory) TotalMiB() int64 { return m.MiB + m.OverheadMiB }

// driverMemory computes the driver's memory from the effective conf as
// Spark's BasicDriverFeatureStep does: spark.driver.memory (default 1g);
// overhead spark.driver.memoryOverhead when set, else
// max(factor * memory, spark.driver.minMemoryOverhead or 384 MiB), where the
// factor is spark.driver.memoryOverheadFactor when set, else
// spark.kubernetes.memoryOverheadFactor (which Properties resolves to 0.1
// for JVM applications and 0.4 for Python and R).
func driverMemory(c map[string]string) (memory, error) {
	return processMemory(c, memoryKeys{spark.ConfDriverMemory, spark.ConfDriverMemoryOverhead, spark.ConfDriverMemoryOverheadFactor, spark.ConfDriverMinMemoryOverhead})
}

// memoryKeys are the conf keys of one role's memory and overhead.
type memoryKeys struct{ memory, overhead, overheadFactor, minOverhead string }

// processMemory is a Spark process's memory (default 1g) and its overhead
// as Spark's feature steps compute them, for the driver and the executors
// alike: the overhead key when set, else max(factor * memory, the minimum
// overhead key or 384 MiB), the factor being the role's overhead factor
// when set, else spark.kubernetes.memoryOverheadFactor.
func processMemory(c map[string]string, k memoryKeys) (memory, error) {
	heap, err := byteStringAsMiB(valueOr(c[k.memory], "1g"))
	if err != nil {
		return memory{}, fmt.Errorf("%s: %w", k.memory, err)
	}
	if o := c[k.overhead]; o != "" {
		overhead, err := byteStringAsMiB(o)
		if err != nil {
			return memory{}, fmt.Errorf("%s: %w", k.overhead, err)
		}
		return memory{MiB: heap, OverheadMiB: overhead}, nil
	}
	key := k.overheadFactor
	if c[key] == "" {
		key = spark.ConfMemoryOverheadFactor
	}
	factor, err := confvalue.Double(key, valueOr(c[key], javaDouble(spark.MemoryOverheadFactorJVM)))
	if err != nil {
		return memory{}, err
	}
	if factor <= 0 || math.IsInf(factor, 0) {
		return memory{}, fmt.Errorf("%s %q: want a number above 0, such as 0.1", key, c[key])
	}
	minimum := int64(spark.MemoryOverheadMinMiB)
	if m := c[k.minOverhead]; m != "" {
		if minimum, err = byteStringAsMiB(m); err != nil {
			return memory{}, fmt.Errorf("%s: %w", k.minOverhead, err)
		}
	}
	return memory{MiB: heap, OverheadMiB: max(int64(factor*float64(heap)), minimum)}, nil
}

// driverResources are the driver container's requests and limits: cpu
// request spark.kubernetes.driver.request.cores or spark.driver.cores, cpu
// limit spark.kubernetes.driver.limit.cores, memory request and limit
// memory + overhead, custom resources from spark.driver.resource.*, and the
// body's gpu and memoryLimit as the Spark operator applies them.
func driverResources(c map[string]string, d *spec.DriverSpec) (corev1.ResourceRequirements, error) {
	req := corev1.ResourceList{}
	lim := corev1.ResourceList{}

	cpu, err := cpuRequest(c, spark.ConfDriverRequestCores, spark.ConfDriverCores)
	if err != nil {
		return corev1.ResourceRequirements{}, err
	}
	req[corev1.ResourceCPU] = cpu
	if l := c[spark.ConfDriverLimitCores]; l != "" {
		q, err := spec.ParseQuantity(strings.TrimSpace(l))
		if err != nil {
			return corev1.ResourceRequirements{}, fmt.Errorf("%s %q: %w", spark.ConfDriverLimitCores, l, err)
		}
		lim[corev1.ResourceCPU] = q
	}

	m, err := driverMemory(c)
	if err != nil {
		return corev1.ResourceRequirements{}, err
	}
	mem := resource.MustParse(strconv.FormatInt(m.TotalMiB(), 10) + "Mi")
	req[corev1.ResourceMemory] = mem
	lim[corev1.ResourceMemory] = mem

	custom, err := customResources(c, spark.ConfDriverResourcePrefix)
	if err != nil {
		return corev1.ResourceRequirements{}, err
	}
	for k, v := range custom {
		lim[k] = v
	}
	if g := d.GPU; g != nil && g.Name != "" && g.Quantity > 0 {
		lim[corev1.ResourceName(g.Name)] = *resource.NewQuantity(g.Quantity, resource.DecimalSI)
	}
	if d.MemoryLimit != nil && *d.MemoryLimit != "" {
		q, err := memoryQuantity(*d.MemoryLimit)
		if err != nil {
			return corev1.ResourceRequirements{}, fmt.Errorf("driver.memoryLimit: %w", err)
		}
		if q.Cmp(mem) < 0 {
			return corev1.ResourceRequirements{}, fmt.Errorf("driver.memoryLimit %s is below the %dMi the driver requests (memory %dMi + overhead %dMi)", *d.MemoryLimit, m.TotalMiB(), m.MiB, m.OverheadMiB)
		}
		lim[corev1.ResourceMemory] = q
	}
	return corev1.ResourceRequirements{Requests: req, Limits: lim}, nil
}

// customResources reads <prefix><name>.amount and <prefix><name>.vendor as
// Spark's KubernetesUtils.buildResourcesQuantities does: a limit
// <vendor>/<name> of amount; a resource without a vendor is an error, as in
// Spark.
func customResources(c map[string]string, prefix string) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for k, amount := range prefixed(c, prefix) {
		name, ok := strings.CutSuffix(k, ".amount")
		if !ok {
			continue
		}
		vendor := c[prefix+name+".vendor"]
		if vendor == "" {
			return nil, fmt.Errorf("%s%s.amount is set but %s%s.vendor is not: Kubernetes needs the vendor domain of the resource (such as nvidia.com)", prefix, name, prefix, name)
		}
		q, err := spec.ParseQuantity(strings.TrimSpace(amount))
		if err != nil {
			return nil, fmt.Errorf("%s%s.amount %q: %w", prefix, name, amount, err)
		}
		out[corev1.ResourceName(vendor+"/"+name)] = q
	}
	return out, nil
}

// cpuRequest is a Spark container's cpu request as Spark's feature steps
// set it: the request key (spark.kubernetes.*.request.cores), a Kubernetes
// quantity such as 500m, when set; else the cores key (spark.*.cores, an
// int as Spark reads it), default 1.
func cpuRequest(c map[string]string, requestKey, coresKey string) (resource.Quantity, error) {
	if v := strings.TrimSpace(c[requestKey]); v != "" {
		q, err := spec.ParseQuantity(v)
		if err != nil {
			return resource.Quantity{}, fmt.Errorf("%s %q: %w", requestKey, c[requestKey], err)
		}
		return q, nil
	}
	v, set := c[coresKey]
	if !set {
		return *resource.NewQuantity(1, resource.DecimalSI), nil
	}
	n, err := confvalue.Int(coresKey, v)
	if err != nil {
		return resource.Quantity{}, err
	}
	if n < 1 {
		return resource.Quantity{}, fmt.Errorf("%s %q: want 1 or more cores", coresKey, v)
	}
	return *resource.NewQuantity(int64(n), resource.DecimalSI), nil
}

func valueOr(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return v
}

// executorMemory computes an executor's memory from the effective conf as
// Spark's BasicExecutorFeatureStep does: spark.executor.memory (default
// 1g); overhead spark.executor.memoryOverhead when set, else max(factor *
// memory, spark.executor.minMemoryOverhead or 384 MiB), the factor being
// spark.executor.memoryOverheadFactor when set, else
// spark.kubernetes.memoryOverheadFactor; plus, in the overhead, the
// off-heap size when spark.memory.offHeap.enabled and, for Python,
// spark.executor.pyspark.memory. The driver computes this for every
// executor it creates; sparkplug needs it only to tell a batch scheduler
// what each executor asks for.
func executorMemory(c map[string]string, python bool) (memory, error) {
	m, err := processMemory(c, memoryKeys{spark.ConfExecutorMemory, spark.ConfExecutorMemoryOverhead, spark.ConfExecutorMemoryOverheadFactor, spark.ConfExecutorMinMemoryOverhead})
	if err != nil {
		return memory{}, err
	}
	overhead := m.OverheadMiB
	offHeap, err := offHeapMiB(c)
	if err != nil {
		return memory{}, err
	}
	overhead += offHeap
	if py := c[spark.ConfExecutorPySparkMemory]; python && py != "" {
		pyMiB, err := byteStringAsMiB(py)
		if err != nil {
			return memory{}, fmt.Errorf("%s: %w", spark.ConfExecutorPySparkMemory, err)
		}
		overhead += pyMiB
	}
	return memory{MiB: m.MiB, OverheadMiB: overhead}, nil
}

// offHeapMiB is the off-heap memory Spark adds to each executor's overhead
// (Utils.executorOffHeapMemorySizeAsMb): spark.memory.offHeap.size, in
// bytes unless it says otherwise, in whole MiB, when
// spark.memory.offHeap.enabled is true as Spark reads it ("TRUE" too);
// Spark requires 1 MiB or more then.
func offHeapMiB(c map[string]string) (int64, error) {
	v, set := c[spark.ConfMemoryOffHeapEnabled]
	if !set {
		return 0, nil
	}
	on, err := confvalue.Bool(spark.ConfMemoryOffHeapEnabled, v)
	if err != nil || !on {
		return 0, err
	}
	size, err := confvalue.Bytes(spark.ConfMemoryOffHeapSize, c[spark.ConfMemoryOffHeapSize], 1)
	if err != nil {
		return 0, err
	}
	if size < mib {
		return 0, fmt.Errorf("%s %q: Spark requires 1m or more when %s is true", spark.ConfMemoryOffHeapSize, c[spark.ConfMemoryOffHeapSize], spark.ConfMemoryOffHeapEnabled)
	}
	return size / mib, nil
}
