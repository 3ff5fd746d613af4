package objects

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/confvalue"
	"github.com/sparkplug-io/sparkplug/plugin/kueue"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// workload is the Kueue Workload of a queued step's attempt
// (Run.KueueQueue), nil when the step is not queued. It asks for the
// whole application at once, so that Kueue admits the driver with its
// executors or neither (a driver admitted alone takes quota and waits for
// executors that never fit):
//
//   - pod set "driver", count 1: the driver pod as built, its metadata cut
//     to labels and annotations (all Kueue allows in a pod set's template);
//   - pod set "executor": the executor pod template with its Spark
//     container sized as Spark sizes it (executorResources: cores, memory
//     plus overhead, GPUs and custom resources) and the application's and
//     executors' node selectors from the conf, which Kueue matches against
//     flavors' node labels. Count is what the application starts with
//     (spark.executor.instances, 2 when unset, as Spark defaults it); under
//     dynamic allocation it is maxExecutors, with minCount minExecutors (at
//     least 1, Kueue's minimum) so that Kueue may admit fewer (partial
//     admission) and sparkplug caps the application at what it admitted.
//     An application without executors (count 0) has no executor pod set.
//
// It is owned by the Workflow (never orphaned: Kueue finishes only
// Workloads without owners) and carries the run's labels and node
// annotation, like the tombstone, so a cache finds it by node and the
// ownership check holds. The priority is resolved by the act side, which
// reads the priority class.
func workload(s *spec.SparkApplicationSpec, r Run, n Names, c map[string]string, driver, executor *corev1.Pod) (*unstructured.Unstructured, error) {
	if r.KueueQueue == "" {
		return nil, nil
	}
	if err := kueue.CheckDynamic(s); err != nil {
		return nil, err
	}
	sets := []kueue.PodSet{{Name: kueue.PodSetDriver, Count: 1, Template: podSetTemplate(driver)}}
	count, minCount, err := executorCounts(c)
	if err != nil {
		return nil, err
	}
	if count > 0 {
		exec := executor.DeepCopy()
		res, err := executorResources(s, c)
		if err != nil {
			return nil, fmt.Errorf("executor resources: %w", err)
		}
		i := containerIndex(exec, spark.ExecutorContainerName)
		if i < 0 {
			exec.Spec.Containers = append(exec.Spec.Containers, corev1.Container{Name: spark.ExecutorContainerName})
			i = len(exec.Spec.Containers) - 1
		}
		exec.Spec.Containers[i].Resources = res
		if exec.Spec.Containers[i].Image == "" {
			exec.Spec.Containers[i].Image = c[spark.ConfContainerImage]
		}
		exec.Spec.NodeSelector = executorNodeSelector(exec.Spec.NodeSelector, c)
		set := kueue.PodSet{Name: kueue.PodSetExecutor, Count: count, Template: podSetTemplate(exec)}
		if minCount > 0 {
			set.MinCount = ptr.To(minCount)
		}
		sets = append(sets, set)
	}
	w := &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{
			Name: n.Workload, Namespace: r.Workflow.Namespace,
			Labels: sparkplugLabels(r), Annotations: sparkplugAnnotations(r),
			OwnerReferences: []metav1.OwnerReference{WorkflowOwner(r.Workflow)},
		},
		Spec: kueue.WorkloadSpec{PodSets: sets, QueueName: r.KueueQueue},
	}
	return kueue.ToUnstructured(w)
}

// podSetTemplate is a pod as a pod set's template: labels, annotations
// and spec.
func podSetTemplate(p *corev1.Pod) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: p.Labels, Annotations: p.Annotations},
		Spec:       *p.Spec.DeepCopy(),
	}
}

// executorCounts are the executor pod set's count and minCount (0: no
// partial admission) from the conf.
func executorCounts(c map[string]string) (count, minCount int32, err error) {
	dynamic, err := dynamicAllocation(c)
	if err != nil {
		return 0, 0, err
	}
	if !dynamic {
		n, err := initialExecutors(c)
		return n, 0, err
	}
	n := func(k string) (int32, error) {
		v, err := confvalue.Int(k, c[k])
		if err != nil {
			return 0, err
		}
		if v < 0 {
			return 0, fmt.Errorf("%s %q is not a number of executors", k, c[k])
		}
		return v, nil
	}
	if _, set := c[spark.ConfDynamicAllocationMaxExecutors]; !set {
		// Spark's default is no bound; Kueue needs one to reserve.
		return 0, 0, fmt.Errorf("%s is required when the step is queued with Kueue (%s) under dynamic allocation: set it, and Kueue reserves quota for that many executors, admitting at least minExecutors", spark.ConfDynamicAllocationMaxExecutors, kueue.LabelQueueName)
	}
	if count, err = n(spark.ConfDynamicAllocationMaxExecutors); err != nil {
		return 0, 0, err
	}
	if _, set := c[spark.ConfDynamicAllocationMinExecutors]; set {
		if minCount, err = n(spark.ConfDynamicAllocationMinExecutors); err != nil {
			return 0, 0, err
		}
	}
	if count == 0 {
		return 0, 0, nil
	}
	return count, min(max(minCount, 1), count), nil
}

// executorNodeSelector is what Spark selects executors' nodes with: the
// template's, spark.kubernetes.node.selector.* and
// spark.kubernetes.executor.node.selector.* (the latter winning, as in
// Spark's BasicExecutorFeatureStep).
func executorNodeSelector(tmpl map[string]string, c map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range tmpl {
		out[k] = v
	}
	for _, prefix := range []string{spark.ConfNodeSelectorPrefix, spark.ConfExecutorNodeSelectorPrefix} {
		for k, v := range c {
			if key, ok := strings.CutPrefix(k, prefix); ok && key != "" {
				out[key] = v
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
