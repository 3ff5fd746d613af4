package objects

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// operatorRequests is the size the Spark operator gives a PodGroup it
// computes itself: util.GetDriverRequestResource plus
// util.GetExecutorRequestResource (GetInitialExecutorNumber executors),
// summed by util.SumResourceList (pkg/util/sparkapplication.go,
// resourcequota.go), written again here so the tests show where sparkplug
// agrees and where it differs. Sizes are read as Kubernetes quantities;
// one that is none ("2g") is left out.
func operatorRequests(s *spec.SparkApplicationSpec) corev1.ResourceList {
	parse := func(p *string) (resource.Quantity, bool) {
		if p == nil {
			return resource.Quantity{}, false
		}
		q, err := resource.ParseQuantity(*p)
		return q, err == nil
	}
	pod := func(cores *int32, coreRequest, coreLimit, memory, overhead *string) corev1.ResourceList {
		l := corev1.ResourceList{}
		if q, ok := parse(coreRequest); ok {
			l[corev1.ResourceCPU] = q
		}
		if _, ok := l[corev1.ResourceCPU]; !ok && cores != nil {
			l[corev1.ResourceCPU] = resource.MustParse(fmt.Sprint(*cores))
		}
		if q, ok := parse(coreLimit); ok {
			if _, ok := l[corev1.ResourceCPU]; !ok {
				l[corev1.ResourceCPU] = q
			}
		}
		if q, ok := parse(memory); ok {
			l[corev1.ResourceMemory] = q
		}
		if q, ok := parse(overhead); ok {
			if m, ok := l[corev1.ResourceMemory]; ok {
				m.Add(q)
				l[corev1.ResourceMemory] = m
			}
		}
		return l
	}
	d, e := &s.Driver, &s.Executor
	total := pod(d.Cores, nil, d.CoreLimit, d.Memory, d.MemoryOverhead) // the driver's coreRequest is not read
	executor := pod(e.Cores, e.CoreRequest, e.CoreLimit, e.Memory, e.MemoryOverhead)
	var n int32 = 2
	if e.Instances != nil {
		n = *e.Instances
	}
	if da := s.DynamicAllocation; da != nil && da.Enabled {
		n = 0
		for _, v := range []*int32{e.Instances, da.InitialExecutors, da.MinExecutors} {
			if v != nil {
				n = max(n, *v)
			}
		}
	}
	for range n {
		add(total, executor)
	}
	return total
}

// The PodGroup's minResources: the operator's numbers where the operator
// reads the body right, and what the pods request where it does not.
func TestPodGroupMinResources(t *testing.T) {
	rl := func(kv ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	tests := []struct {
		name string
		edit func(s *spec.SparkApplicationSpec)
		// want is sparkplug's minResources; operator the Spark operator's
		// (operatorRequests), the same when nil.
		want, operator corev1.ResourceList
	}{
		{"Kubernetes sizes with explicit overhead: the operator's numbers", func(s *spec.SparkApplicationSpec) {
			s.Driver.Memory, s.Driver.MemoryOverhead = ptrTo("1Gi"), ptrTo("512Mi")
			s.Executor.Cores, s.Executor.Instances = ptrTo[int32](2), ptrTo[int32](3)
			s.Executor.Memory, s.Executor.MemoryOverhead = ptrTo("2Gi"), ptrTo("512Mi")
		}, rl("cpu", "7", "memory", "9Gi"), nil},
		{"executor coreRequest: the operator's numbers", func(s *spec.SparkApplicationSpec) {
			s.Driver.Memory, s.Driver.MemoryOverhead = ptrTo("1Gi"), ptrTo("512Mi")
			s.Executor.CoreRequest, s.Executor.Instances = ptrTo("1500m"), ptrTo[int32](2)
			s.Executor.Memory, s.Executor.MemoryOverhead = ptrTo("2Gi"), ptrTo("1Gi")
		}, rl("cpu", "4", "memory", "7680Mi"), nil},
		{"dynamic allocation starts with the largest of instances, initial and min: the operator's count", func(s *spec.SparkApplicationSpec) {
			s.Driver.Memory, s.Driver.MemoryOverhead = ptrTo("1Gi"), ptrTo("512Mi")
			s.Executor.Memory, s.Executor.MemoryOverhead = ptrTo("1Gi"), ptrTo("512Mi")
			s.Executor.Instances = nil
			s.DynamicAllocation = &spec.DynamicAllocation{Enabled: true, InitialExecutors: ptrTo[int32](4), MinExecutors: ptrTo[int32](2), MaxExecutors: ptrTo[int32](9)}
		}, rl("cpu", "5", "memory", "7680Mi"), nil},
		{"no executors at the start: the driver only", func(s *spec.SparkApplicationSpec) {
			s.Driver.Memory, s.Driver.MemoryOverhead = ptrTo("1Gi"), ptrTo("512Mi")
			s.Executor.Instances = ptrTo[int32](0)
		}, rl("cpu", "1", "memory", "1536Mi"), nil},
		{"Spark sizes and the default overhead, which the operator misreads", func(s *spec.SparkApplicationSpec) {
			// SparkPi: 512m and one executor. Spark adds max(10%, 384 MiB).
		}, rl("cpu", "2", "memory", "1792Mi"), rl("cpu", "2", "memory", "1024m")},
		{"2g is no Kubernetes quantity: the operator drops the memory", func(s *spec.SparkApplicationSpec) {
			s.Driver.Memory, s.Executor.Memory = ptrTo("2g"), ptrTo("2g")
		}, rl("cpu", "2", "memory", "4864Mi"), rl("cpu", "2")},
		{"the driver's coreRequest, which the operator does not read", func(s *spec.SparkApplicationSpec) {
			s.Driver.Memory, s.Driver.MemoryOverhead = ptrTo("1Gi"), ptrTo("512Mi")
			s.Driver.CoreRequest = ptrTo("250m")
			s.Executor.Memory, s.Executor.MemoryOverhead = ptrTo("1Gi"), ptrTo("512Mi")
		}, rl("cpu", "1250m", "memory", "3Gi"), rl("cpu", "2", "memory", "3Gi")},
		{"GPUs, which the operator leaves out", func(s *spec.SparkApplicationSpec) {
			s.Driver.Memory, s.Driver.MemoryOverhead = ptrTo("1Gi"), ptrTo("512Mi")
			s.Executor.Memory, s.Executor.MemoryOverhead = ptrTo("1Gi"), ptrTo("512Mi")
			s.Executor.Instances = ptrTo[int32](2)
			s.Executor.GPU = &spec.GPUSpec{Name: "nvidia.com/gpu", Quantity: 2}
			s.Driver.GPU = &spec.GPUSpec{Name: "nvidia.com/gpu", Quantity: 1}
		}, rl("cpu", "3", "memory", "4608Mi", "nvidia.com/gpu", "5"), rl("cpu", "3", "memory", "4608Mi")},
		{"PySpark memory and Python's 0.4 overhead factor", func(s *spec.SparkApplicationSpec) {
			s.Type = spec.TypePython
			s.MainClass = nil
			s.Driver.Memory, s.Executor.Memory = ptrTo("1Gi"), ptrTo("1Gi")
			s.SparkConf = map[string]string{spark.ConfExecutorPySparkMemory: "256m"}
		}, rl("cpu", "2", "memory", "3122Mi"), rl("cpu", "2", "memory", "2Gi")},
		{"batchSchedulerOptions.resources wins, as with the operator", func(s *spec.SparkApplicationSpec) {
			s.BatchSchedulerOptions = &spec.BatchSchedulerConfiguration{Resources: rl("cpu", "10", "memory", "20Gi")}
		}, rl("cpu", "10", "memory", "20Gi"), rl("cpu", "10", "memory", "20Gi")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := body(t)
			s.BatchScheduler = ptrTo(spark.SchedulerVolcano)
			tt.edit(s)
			objs, err := newBuilder(t).Cluster(s, goldenRuns["default"])
			if err != nil {
				t.Fatal(err)
			}
			got := minResourcesOf(t, objs.PodGroup)
			if !sameResources(got, tt.want) {
				t.Errorf("minResources %s, want %s", show(got), show(tt.want))
			}
			operator := operatorRequests(s)
			if o := s.BatchSchedulerOptions; o != nil && len(o.Resources) > 0 {
				operator = o.Resources
			}
			want := tt.operator
			if want == nil {
				want = tt.want
			}
			if !sameResources(operator, want) {
				t.Errorf("the operator's minResources %s, want %s", show(operator), show(want))
			}
		})
	}
}

func minResourcesOf(t *testing.T, pg *unstructured.Unstructured) corev1.ResourceList {
	t.Helper()
	if pg == nil {
		t.Fatal("no PodGroup")
	}
	m, ok, err := unstructured.NestedStringMap(pg.Object, "spec", "minResources")
	if err != nil || !ok {
		t.Fatalf("spec.minResources: %v (found %v)", err, ok)
	}
	out := corev1.ResourceList{}
	for k, v := range m {
		out[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return out
}

func sameResources(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, q := range a {
		r, ok := b[k]
		if !ok || q.Cmp(r) != 0 {
			return false
		}
	}
	return true
}

func show(l corev1.ResourceList) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		q := l[k]
		parts = append(parts, string(k)+"="+q.String())
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// Each scheduler gets its own PodGroup, named on the pods as the Spark
// operator names it; yunikorn and a driver in a group of its own get none.
func TestPodGroupPerScheduler(t *testing.T) {
	tests := []struct {
		name      string
		edit      func(s *spec.SparkApplicationSpec)
		mode      spec.DeployMode
		wantGroup string // the PodGroup's apiVersion; "" for none
		// the pods' metadata key that names the group, and its value
		metaKey, metaValue string
		scheduler          string
	}{
		{"volcano", func(s *spec.SparkApplicationSpec) {}, spec.ModeCluster,
			spark.VolcanoPodGroupAPIVersion, spark.AnnotationVolcanoGroup, "nightly-etl-x7k2p-50afb368-pg", "volcano"},
		{"volcano in client mode groups the driver pod too", func(s *spec.SparkApplicationSpec) {}, spec.ModeClient,
			spark.VolcanoPodGroupAPIVersion, spark.AnnotationVolcanoGroup, "nightly-etl-x7k2p-50afb368-pg", "volcano"},
		{"kube-scheduler", func(s *spec.SparkApplicationSpec) { s.BatchScheduler = ptrTo(spark.SchedulerKubeScheduler) }, spec.ModeCluster,
			spark.SchedulerPluginsPodGroupAPIVersion, spark.LabelPodGroup, "nightly-etl-x7k2p-50afb368-pg", "kube-scheduler"},
		{"kube-scheduler by another name", func(s *spec.SparkApplicationSpec) {
			s.BatchScheduler = ptrTo(spark.SchedulerKubeScheduler)
			s.Driver.SchedulerName, s.Executor.SchedulerName = ptrTo("scheduler-plugins-scheduler"), ptrTo("scheduler-plugins-scheduler")
		}, spec.ModeCluster, spark.SchedulerPluginsPodGroupAPIVersion, spark.LabelPodGroup, "nightly-etl-x7k2p-50afb368-pg", "scheduler-plugins-scheduler"},
		{"yunikorn: task groups, no PodGroup", func(s *spec.SparkApplicationSpec) { s.BatchScheduler = ptrTo(spark.SchedulerYuniKorn) }, spec.ModeCluster,
			"", spark.AnnotationYuniKornTaskGroupName, spark.YuniKornDriverTaskGroup, "yunikorn"},
		{"volcano with the driver in a group of its own", func(s *spec.SparkApplicationSpec) {
			s.Driver.Annotations = map[string]string{spark.AnnotationVolcanoGroup: "team-pg"}
		}, spec.ModeCluster, "", spark.AnnotationVolcanoGroup, "team-pg", "volcano"},
		{"kube-scheduler with the driver in a group of its own", func(s *spec.SparkApplicationSpec) {
			s.BatchScheduler = ptrTo(spark.SchedulerKubeScheduler)
			s.Driver.Labels = map[string]string{spark.LabelPodGroup: "team-pg"}
		}, spec.ModeCluster, "", spark.LabelPodGroup, "team-pg", "kube-scheduler"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := body(t)
			s.Mode = tt.mode
			s.BatchScheduler = ptrTo(spark.SchedulerVolcano)
			tt.edit(s)
			objs, err := newBuilder(t).Build(s, goldenRuns["default"])
			if err != nil {
				t.Fatal(err)
			}
			pg := objs.PodGroup
			switch {
			case tt.wantGroup == "" && pg != nil:
				t.Fatalf("PodGroup %s %s, want none", pg.GetAPIVersion(), pg.GetName())
			case tt.wantGroup != "" && pg == nil:
				t.Fatalf("no PodGroup, want a %s", tt.wantGroup)
			case pg != nil:
				if pg.GetAPIVersion() != tt.wantGroup || pg.GetKind() != "PodGroup" || pg.GetName() != tt.metaValue || pg.GetNamespace() != "data" {
					t.Errorf("PodGroup %s %s %s/%s", pg.GetAPIVersion(), pg.GetKind(), pg.GetNamespace(), pg.GetName())
				}
				if n, _, _ := unstructured.NestedInt64(pg.Object, "spec", "minMember"); n != 1 {
					t.Errorf("minMember %d, want 1 as the operator", n)
				}
				if !InPodGroup(objs.Driver, pg) {
					t.Errorf("InPodGroup(driver) = false")
				}
				if refs := pg.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "Workflow" {
					t.Errorf("owners %+v, want the Workflow until the driver exists", refs)
				}
				driver := objs.Driver.DeepCopy()
				driver.UID = types.UID("d71e")
				OwnedBy(objs, driver)
				if refs := pg.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].UID != "d71e" || !*refs[0].Controller {
					t.Errorf("owners %+v, want the driver once it exists", refs)
				}
			}
			meta := func(m map[string]string) string { return m[tt.metaKey] }
			executors := objs.ConfigMap.Data[spark.PropertiesFile]
			if tt.mode == spec.ModeClient {
				executors = objs.ConfigMap.Data[spark.ClientDefaultsFile]
			}
			if tt.metaKey == spark.LabelPodGroup {
				if got := meta(objs.Driver.Labels); got != tt.metaValue {
					t.Errorf("driver label %s=%q, want %q", tt.metaKey, got, tt.metaValue)
				}
				if want := "spark.kubernetes.executor.label." + tt.metaKey + "=" + tt.metaValue; tt.wantGroup != "" && !strings.Contains(executors, want) {
					t.Errorf("the executors' conf lacks %s", want)
				}
			} else {
				if got := meta(objs.Driver.Annotations); got != tt.metaValue {
					t.Errorf("driver annotation %s=%q, want %q", tt.metaKey, got, tt.metaValue)
				}
				if want := "spark.kubernetes.executor.annotation." + tt.metaKey + "=" + tt.metaValue; tt.wantGroup != "" && !strings.Contains(executors, want) {
					t.Errorf("the executors' conf lacks %s", want)
				}
			}
			if objs.Driver.Spec.SchedulerName != tt.scheduler {
				t.Errorf("driver schedulerName %q, want %q", objs.Driver.Spec.SchedulerName, tt.scheduler)
			}
			if want := "schedulerName: " + tt.scheduler; !strings.Contains(objs.ConfigMap.Data[spark.ExecutorPodTemplateKey], want) {
				t.Errorf("executor pod template lacks %q:\n%s", want, objs.ConfigMap.Data[spark.ExecutorPodTemplateKey])
			}
		})
	}
}

func TestMissingPodGroupCRD(t *testing.T) {
	s := body(t)
	s.BatchScheduler = ptrTo(spark.SchedulerVolcano)
	objs, err := newBuilder(t).Cluster(s, goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	want := "batchScheduler volcano needs Volcano's PodGroup CRD (scheduling.volcano.sh/v1beta1) in the cluster: install Volcano, or remove spark.batchScheduler"
	if got := MissingPodGroupCRD(objs.PodGroup); got != want {
		t.Errorf("MissingPodGroupCRD = %q, want %q", got, want)
	}
	if got := PodGroupResource(objs.PodGroup); got.String() != "scheduling.volcano.sh/v1beta1, Resource=podgroups" {
		t.Errorf("PodGroupResource = %s", got)
	}
	s.BatchScheduler = ptrTo(spark.SchedulerKubeScheduler)
	if objs, err = newBuilder(t).Cluster(s, goldenRuns["default"]); err != nil {
		t.Fatal(err)
	}
	if got := MissingPodGroupCRD(objs.PodGroup); !strings.HasPrefix(got, "batchScheduler kube-scheduler needs the PodGroup CRD of scheduler-plugins (scheduling.x-k8s.io/v1alpha1) in the cluster: install scheduler-plugins") {
		t.Errorf("MissingPodGroupCRD = %q", got)
	}
}
