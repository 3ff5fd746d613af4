package objects

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// A run's PodGroup, for batchScheduler volcano and kube-scheduler, is the
// Spark operator's (internal/scheduler/volcano and kubescheduler):
//
//   - volcano: a scheduling.volcano.sh/v1beta1 PodGroup with minMember 1
//     (the driver is scheduled first; its executors join the group),
//     minResources, and batchSchedulerOptions' queue and priorityClassName;
//     the driver and the executors carry the scheduling.k8s.io/group-name
//     annotation.
//   - kube-scheduler: a scheduling.x-k8s.io/v1alpha1 PodGroup of
//     scheduler-plugins, for a kube-scheduler running its Coscheduling
//     plugin, with minMember 1 and minResources; the driver and the
//     executors carry the scheduling.x-k8s.io/pod-group label.
//
// In client mode the operator groups only the executors, since its own
// spark-submit runs the driver; sparkplug's client-mode driver is a pod of
// its own, so it is grouped as in cluster mode.
//
// minResources is batchSchedulerOptions.resources when it is set, as the
// operator does for Volcano (for kube-scheduler the operator ignores the
// field; sparkplug honours it the same way). Otherwise it is the sum of
// what the driver and the executors the application starts with request.
// There sparkplug differs from the operator's util.GetDriverRequestResource
// and GetExecutorRequestResource: those read the memory as a Kubernetes
// quantity ("512m" is half a byte, "2g" is no quantity and drops out) and
// leave out the default memory overhead and the driver's coreRequest.
// sparkplug sums what the pods request as Spark sizes them, the numbers
// YuniKorn's task groups get: cpu (coreRequest, else cores), memory plus
// overhead (plus PySpark and off-heap memory for executors), and the
// extended resources the Spark containers are limited to (gpu,
// spark.{driver,executor}.resource.*), which Kubernetes requests as much as
// it limits. Sidecars and init containers are not counted, as the operator
// counts none.
//
// The PodGroup is named <prefix>-pg (the operator's spark-<app>-pg and
// <app>-pg) and made for each attempt, as each attempt has its own driver.
// It must exist before the driver: Volcano's admission webhook up to 1.11
// refuses a pod that names a PodGroup that does not exist (the check went
// in 1.12), Volcano's scheduler leaves such a pod Pending until it does,
// and scheduler-plugins schedules it as a lone pod, with no gang and no
// minResources check. So, unlike the
// ConfigMap and the Services, it is created before the driver, owned by the
// Workflow, and then handed to the driver (OwnedBy), so that it goes with
// the driver: a stopped driver, a finished one past its timeToLiveSeconds,
// the Workflow.
//
// A body whose driver names a group of its own (driver.annotations for
// volcano, driver.labels for kube-scheduler, as the operator checks) gets
// no PodGroup; the body's group is used as it is.

// podGroupKind is what a batch scheduler's PodGroup is and what its
// absence tells a user.
type podGroupKind struct {
	apiVersion string
	// what names the CRD in a message; install how to get it.
	what, install string
}

var podGroupKinds = map[string]podGroupKind{
	spark.SchedulerVolcano: {
		apiVersion: spark.VolcanoPodGroupAPIVersion,
		what:       "Volcano's PodGroup CRD",
		install:    "install Volcano",
	},
	spark.SchedulerKubeScheduler: {
		apiVersion: spark.SchedulerPluginsPodGroupAPIVersion,
		what:       "the PodGroup CRD of scheduler-plugins",
		install:    "install scheduler-plugins (its CRDs and a kube-scheduler with the Coscheduling plugin)",
	},
}

// PodGroupResource is the API resource of a PodGroup the builder made.
func PodGroupResource(pg *unstructured.Unstructured) schema.GroupVersionResource {
	return pg.GroupVersionKind().GroupVersion().WithResource(spark.PodGroupResource)
}

// MissingPodGroupCRD is the message of a run whose PodGroup the API server
// has no resource for: the CRD is not installed.
func MissingPodGroupCRD(pg *unstructured.Unstructured) string {
	for _, name := range slices.Sorted(maps.Keys(podGroupKinds)) {
		if k := podGroupKinds[name]; k.apiVersion == pg.GetAPIVersion() {
			return fmt.Sprintf("batchScheduler %s needs %s (%s) in the cluster: %s, or remove spark.batchScheduler", name, k.what, k.apiVersion, k.install)
		}
	}
	return fmt.Sprintf("the API server has no %s %s: is its CRD installed?", pg.GetAPIVersion(), pg.GetKind())
}

// InPodGroup reports whether a pod names pg as its group: the driver of a
// run sparkplug made the PodGroup for.
func InPodGroup(pod *corev1.Pod, pg *unstructured.Unstructured) bool {
	switch pg.GetAPIVersion() {
	case spark.VolcanoPodGroupAPIVersion:
		return pod.Annotations[spark.AnnotationVolcanoGroup] == pg.GetName()
	case spark.SchedulerPluginsPodGroupAPIVersion:
		return pod.Labels[spark.LabelPodGroup] == pg.GetName()
	}
	return false
}

// groupKeys are the conf keys of the driver's and the executors' metadata
// that name a batch scheduler's PodGroup; none for a scheduler without one.
func groupKeys(scheduler string) (driver, executor string, ok bool) {
	switch scheduler {
	case spark.SchedulerVolcano:
		return spark.ConfDriverAnnotationPrefix + spark.AnnotationVolcanoGroup, spark.ConfExecutorAnnotationPrefix + spark.AnnotationVolcanoGroup, true
	case spark.SchedulerKubeScheduler:
		return spark.ConfDriverLabelPrefix + spark.LabelPodGroup, spark.ConfExecutorLabelPrefix + spark.LabelPodGroup, true
	}
	return "", "", false
}

// groupConf adds to the conf the pod metadata naming the run's PodGroup,
// on the driver and the executors, unless the body's driver names a group
// of its own.
func groupConf(c map[string]string, s *spec.SparkApplicationSpec, n Names) {
	driver, executor, ok := groupKeys(*s.BatchScheduler)
	if !ok {
		return
	}
	if _, own := c[driver]; own {
		return
	}
	c[driver] = n.PodGroup
	c[executor] = n.PodGroup
}

// podGroup is the run's PodGroup, or nil when the body asks for none: no
// batchScheduler, yunikorn (whose task groups are pod annotations), or a
// driver that names a group of its own. c is the effective conf and driver
// the built driver pod, whose Spark container's requests it counts.
func podGroup(s *spec.SparkApplicationSpec, r Run, n Names, c map[string]string, driver *corev1.Pod) (*unstructured.Unstructured, error) {
	if s.BatchScheduler == nil {
		return nil, nil
	}
	kind, ok := podGroupKinds[*s.BatchScheduler]
	if !ok {
		return nil, nil
	}
	if key, _, _ := groupKeys(*s.BatchScheduler); c[key] != n.PodGroup {
		return nil, nil // the body's own group (driver metadata or sparkConf)
	}

	opts := ptr.Deref(s.BatchSchedulerOptions, spec.BatchSchedulerConfiguration{})
	minResources := opts.Resources
	if len(minResources) == 0 {
		var err error
		if minResources, err = applicationRequests(s, c, driver); err != nil {
			return nil, err
		}
	}
	resources := map[string]any{}
	for name, q := range minResources {
		resources[string(name)] = q.String()
	}
	podSpec := map[string]any{
		"minMember":    int64(1),
		"minResources": resources,
	}
	if *s.BatchScheduler == spark.SchedulerVolcano {
		if opts.Queue != nil && *opts.Queue != "" {
			podSpec["queue"] = *opts.Queue
		}
		if opts.PriorityClassName != nil && *opts.PriorityClassName != "" {
			podSpec["priorityClassName"] = *opts.PriorityClassName
		}
	}

	labels := sparkplugLabels(r)
	labels[spark.LabelAppSelector] = n.AppID
	pg := &unstructured.Unstructured{Object: map[string]any{"spec": podSpec}}
	pg.SetAPIVersion(kind.apiVersion)
	pg.SetKind(spark.PodGroupKind)
	pg.SetName(n.PodGroup)
	pg.SetNamespace(r.Workflow.Namespace)
	pg.SetLabels(labels)
	pg.SetAnnotations(sparkplugAnnotations(r))
	pg.SetOwnerReferences([]metav1.OwnerReference{WorkflowOwner(r.Workflow)})
	return pg, nil
}

// applicationRequests is what the driver and the executors the application
// starts with request: the driver's Spark container as built, and each
// executor's Spark container as Spark sizes it from the conf.
func applicationRequests(s *spec.SparkApplicationSpec, c map[string]string, driver *corev1.Pod) (corev1.ResourceList, error) {
	i := containerIndex(driver, spark.DriverContainerName)
	if i < 0 {
		return nil, fmt.Errorf("driver pod %s has no container %s", driver.Name, spark.DriverContainerName)
	}
	total := requested(driver.Spec.Containers[i].Resources)
	executor, err := executorResources(s, c)
	if err != nil {
		return nil, fmt.Errorf("executor resources: %w", err)
	}
	each := requested(executor)
	n, err := initialExecutors(c)
	if err != nil {
		return nil, err
	}
	for range n {
		add(total, each)
	}
	return total, nil
}

// executorResources are an executor's Spark container's requests and
// limits as Spark's BasicExecutorFeatureStep sets them: cpu
// spark.kubernetes.executor.request.cores or spark.executor.cores (default
// 1), memory plus overhead, the spark.executor.resource.* limits, and the
// body's executor.gpu, which sparkplug puts in the executor pod template.
func executorResources(s *spec.SparkApplicationSpec, c map[string]string) (corev1.ResourceRequirements, error) {
	cpu, err := cpuRequest(c, spark.ConfExecutorRequestCores, spark.ConfExecutorCores)
	if err != nil {
		return corev1.ResourceRequirements{}, err
	}
	m, err := executorMemory(c, s.Type == spec.TypePython)
	if err != nil {
		return corev1.ResourceRequirements{}, err
	}
	mem := resource.MustParse(strconv.FormatInt(m.TotalMiB(), 10) + "Mi")
	lim, err := customResources(c, spark.ConfExecutorResourcePrefix)
	if err != nil {
		return corev1.ResourceRequirements{}, err
	}
	lim[corev1.ResourceMemory] = mem
	if g := s.Executor.GPU; g != nil && g.Name != "" && g.Quantity > 0 {
		lim[corev1.ResourceName(g.Name)] = *resource.NewQuantity(g.Quantity, resource.DecimalSI)
	}
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem},
		Limits:   lim,
	}, nil
}

// requested is what a container requests once the API server has
// defaulted it: its requests, and its limits of the resources it requests
// nothing of.
func requested(r corev1.ResourceRequirements) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range r.Limits {
		out[name] = q.DeepCopy()
	}
	for name, q := range r.Requests {
		out[name] = q.DeepCopy()
	}
	return out
}

// add adds b to a.
func add(a, b corev1.ResourceList) {
	for name, q := range b {
		sum := a[name]
		sum.Add(q)
		a[name] = sum
	}
}
