package objects

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/confvalue"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// Batch scheduling follows the Spark operator's batchScheduler
// (internal/scheduler/volcano, kubescheduler and yunikorn, and its
// webhook's addSchedulerName):
//
//   - All: batchSchedulerOptions.priorityClassName becomes the
//     priorityClassName of the pods that have none of their own.
//   - volcano and yunikorn: the driver's and the executors' schedulerName
//     is the batch scheduler, as the operator's webhook sets it.
//   - kube-scheduler: the operator sets schedulerName kube-scheduler, the
//     name under which its example deploys a kube-scheduler with
//     scheduler-plugins' Coscheduling plugin (registered with the
//     operator's --kube-scheduler-names). sparkplug does the same unless
//     driver.schedulerName and executor.schedulerName name that scheduler
//     otherwise (validation requires them to agree): sparkplug has no
//     operator-wide list of names, and such a scheduler is often called
//     scheduler-plugins-scheduler, or default-scheduler when it replaces
//     the cluster's own.
//   - volcano and kube-scheduler: a PodGroup (podgroup.go), named on the
//     pods by groupConf.
//   - yunikorn: exactly the operator's metadata: the queue label from
//     batchSchedulerOptions.queue, the task group name on each pod, and on
//     the driver the task groups (the driver's, and the executors' with
//     minMember the initial executor count) with their resources, node
//     selectors, tolerations, affinity and labels. YuniKorn has no
//     PodGroup object.

// schedulerConf adds to the conf derived from the body the labels and
// annotations the batch scheduler reads; Spark puts them on the driver
// and on every executor.
func schedulerConf(c map[string]string, s *spec.SparkApplicationSpec, n Names) {
	if s.BatchScheduler == nil {
		return
	}
	groupConf(c, s, n)
	if *s.BatchScheduler != spark.SchedulerYuniKorn {
		return
	}
	if o := s.BatchSchedulerOptions; o != nil && o.Queue != nil && *o.Queue != "" {
		c[spark.ConfDriverLabelPrefix+spark.LabelYuniKornQueue] = *o.Queue
		c[spark.ConfExecutorLabelPrefix+spark.LabelYuniKornQueue] = *o.Queue
	}
	c[spark.ConfDriverAnnotationPrefix+spark.AnnotationYuniKornTaskGroupName] = spark.YuniKornDriverTaskGroup
	c[spark.ConfExecutorAnnotationPrefix+spark.AnnotationYuniKornTaskGroupName] = spark.YuniKornExecutorTaskGroup
}

// batchScheduling sets the scheduler and priority class on the driver pod
// or the executor pod template, and YuniKorn's task groups on the driver.
// ps is the role's part of the body.
func batchScheduling(pod *corev1.Pod, s *spec.SparkApplicationSpec, ps *spec.SparkPodSpec, role string, c map[string]string) error {
	if s.BatchScheduler == nil {
		return nil
	}
	if *s.BatchScheduler != spark.SchedulerKubeScheduler || ps.SchedulerName == nil || *ps.SchedulerName == "" {
		pod.Spec.SchedulerName = *s.BatchScheduler
	}
	if o := s.BatchSchedulerOptions; o != nil && o.PriorityClassName != nil && pod.Spec.PriorityClassName == "" {
		pod.Spec.PriorityClassName = *o.PriorityClassName
	}
	if *s.BatchScheduler != spark.SchedulerYuniKorn || role != spark.RoleDriver {
		return nil
	}
	groups, err := yunikornTaskGroups(pod, s, c)
	if err != nil {
		return fmt.Errorf("yunikorn task groups: %w", err)
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[spark.AnnotationYuniKornTaskGroups] = groups
	return nil
}

// taskGroup is one of YuniKorn's task groups, with the JSON names YuniKorn
// reads.
type taskGroup struct {
	Name         string              `json:"name"`
	MinMember    int32               `json:"minMember"`
	MinResource  map[string]string   `json:"minResource,omitempty"`
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
	Affinity     *corev1.Affinity    `json:"affinity,omitempty"`
	Labels       map[string]string   `json:"labels,omitempty"`
}

// yunikornTaskGroups is the value of the task-groups annotation: the
// driver's group, sized by the driver container's requests, and, when the
// application starts with executors, theirs, sized as Spark sizes each
// executor.
func yunikornTaskGroups(driver *corev1.Pod, s *spec.SparkApplicationSpec, c map[string]string) (string, error) {
	req := driver.Spec.Containers[containerIndex(driver, spark.DriverContainerName)].Resources.Requests
	groups := []taskGroup{{
		Name:      spark.YuniKornDriverTaskGroup,
		MinMember: 1,
		MinResource: map[string]string{
			string(corev1.ResourceCPU):    ptr.To(req[corev1.ResourceCPU]).String(),
			string(corev1.ResourceMemory): ptr.To(req[corev1.ResourceMemory]).String(),
		},
		NodeSelector: nonEmpty(merged(s.NodeSelector, s.Driver.NodeSelector)),
		Tolerations:  s.Driver.Tolerations,
		Affinity:     s.Driver.Affinity,
		Labels:       nonEmpty(maps.Clone(s.Driver.Labels)),
	}}
	n, err := initialExecutors(c)
	if err != nil {
		return "", err
	}
	if n > 0 {
		m, err := executorMemory(c, s.Type == spec.TypePython)
		if err != nil {
			return "", err
		}
		cpu, err := cpuRequest(c, spark.ConfExecutorRequestCores, spark.ConfExecutorCores)
		if err != nil {
			return "", err
		}
		groups = append(groups, taskGroup{
			Name:      spark.YuniKornExecutorTaskGroup,
			MinMember: n,
			MinResource: map[string]string{
				string(corev1.ResourceCPU):    cpu.String(),
				string(corev1.ResourceMemory): strconv.FormatInt(m.TotalMiB(), 10) + "Mi",
			},
			NodeSelector: nonEmpty(merged(s.NodeSelector, s.Executor.NodeSelector)),
			Tolerations:  s.Executor.Tolerations,
			Affinity:     s.Executor.Affinity,
			Labels:       nonEmpty(maps.Clone(s.Executor.Labels)),
		})
	}
	out, err := json.Marshal(groups)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// initialExecutors is how many executors the application starts with:
// spark.executor.instances, or with dynamic allocation the largest of it,
// the minimum and the initial executors (Spark's
// Utils.getDynamicAllocationInitialExecutors), each read as Spark reads it
// (confvalue): a value Spark would read otherwise is an error, never 0.
func initialExecutors(c map[string]string) (int32, error) {
	var errs []error
	n := func(k string) int32 {
		v, set := c[k]
		if !set {
			return 0
		}
		i, err := confvalue.Int(k, v)
		if err != nil {
			errs = append(errs, err)
		}
		return max(i, 0)
	}
	dynamic, err := dynamicAllocation(c)
	if err != nil {
		return 0, err
	}
	var out int32
	switch _, set := c[spark.ConfExecutorInstances]; {
	case dynamic:
		out = max(n(spark.ConfDynamicAllocationMinExecutors), n(spark.ConfDynamicAllocationInitialExecutors), n(spark.ConfExecutorInstances))
	case !set:
		out = 2 // Spark's default spark.executor.instances
	default:
		out = n(spark.ConfExecutorInstances)
	}
	return out, errors.Join(errs...)
}

// dynamicAllocation says whether spark.dynamicAllocation.enabled is true
// as Spark reads it ("tRuE" is).
func dynamicAllocation(c map[string]string) (bool, error) {
	v, set := c[spark.ConfDynamicAllocationEnabled]
	if !set {
		return false, nil
	}
	return confvalue.Bool(spark.ConfDynamicAllocationEnabled, v)
}

func nonEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}
