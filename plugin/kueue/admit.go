package kueue

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// Admit returns a copy of body changed as Kueue's admission of Workload
// name asks, for the attempt's driver and executors to be built from: each
// pod set's flavors' node labels join its nodeSelector (a label the body
// selects with another value is a conflict, as Kueue's podset.Merge finds
// it: the pods could never run where the quota is) and their tolerations
// its tolerations; the executors are capped at the admitted count
// (spark.executor.instances, or dynamicAllocation.maxExecutors); the
// driver and the executors carry the Workload annotation and their pod
// set's label. flavors holds the spec of every flavor the admission names.
func Admit(body *spec.SparkApplicationSpec, name string, v View, flavors map[string]ResourceFlavorSpec) (*spec.SparkApplicationSpec, error) {
	if v.Admission == nil {
		return nil, fmt.Errorf("workload %s is not admitted", name)
	}
	out, err := copySpec(body)
	if err != nil {
		return nil, err
	}
	for _, a := range v.Admission.PodSetAssignments {
		var pod *spec.SparkPodSpec
		var field string
		switch a.Name {
		case PodSetDriver:
			pod, field = &out.Driver.SparkPodSpec, "spark.driver"
		case PodSetExecutor:
			pod, field = &out.Executor.SparkPodSpec, "spark.executor"
		default:
			return nil, &ConflictError{fmt.Sprintf("Kueue Workload %s: admission of pod set %q, which sparkplug never asks for", name, a.Name)}
		}
		names := slices.Sorted(maps.Values(a.Flavors))
		names = slices.Compact(names)
		for _, f := range names {
			fl, ok := flavors[f]
			if !ok {
				return nil, fmt.Errorf("workload %s: ResourceFlavor %s of pod set %s not known", name, f, a.Name)
			}
			if err := selectNodes(pod, out.NodeSelector, field, f, fl.NodeLabels); err != nil {
				return nil, err
			}
			for _, t := range fl.Tolerations {
				if !slices.ContainsFunc(pod.Tolerations, func(have corev1.Toleration) bool { return have.MatchToleration(&t) }) {
					pod.Tolerations = append(pod.Tolerations, t)
				}
			}
		}
		pod.Labels = withEntry(pod.Labels, LabelPodSet, a.Name)
		pod.Annotations = withEntry(pod.Annotations, AnnotationWorkload, name)
		if a.Name == PodSetExecutor && a.Count != nil {
			capExecutors(out, *a.Count)
		}
	}
	return out, nil
}

// ConflictError is an admission the step's body cannot run with: asking
// again gives the same answer.
type ConflictError struct{ msg string }

func (e *ConflictError) Error() string { return e.msg }

// selectNodes adds a flavor's node labels to a pod's nodeSelector; one
// the body selects with another value (in the pod's or the application's
// nodeSelector) is an error naming both.
func selectNodes(pod *spec.SparkPodSpec, app map[string]string, field, flavor string, labels map[string]string) error {
	keys := slices.Sorted(maps.Keys(labels))
	for _, k := range keys {
		want := labels[k]
		for _, sel := range []struct {
			field string
			m     map[string]string
		}{{field + ".nodeSelector", pod.NodeSelector}, {"spark.nodeSelector", app}} {
			if have, ok := sel.m[k]; ok && have != want {
				return &ConflictError{fmt.Sprintf("%s[%s] is %q but Kueue admitted the step to ResourceFlavor %s, whose nodes are %s=%q: remove it from %s or give the LocalQueue's ClusterQueue a flavor with that label",
					sel.field, k, have, flavor, k, want, sel.field)}
			}
		}
		pod.NodeSelector = withEntry(pod.NodeSelector, k, want)
	}
	return nil
}

// capExecutors makes the application start at most n executors, the
// number Kueue admitted.
func capExecutors(s *spec.SparkApplicationSpec, n int32) {
	if d := s.DynamicAllocation; d != nil && d.Enabled {
		d.MaxExecutors = ptr.To(min(ptr.Deref(d.MaxExecutors, n), n))
		if d.InitialExecutors != nil {
			d.InitialExecutors = ptr.To(min(*d.InitialExecutors, n))
		}
		if d.MinExecutors != nil {
			d.MinExecutors = ptr.To(min(*d.MinExecutors, n))
		}
		return
	}
	if s.Executor.Instances == nil || *s.Executor.Instances > n {
		s.Executor.Instances = ptr.To(n)
	}
}

func withEntry(m map[string]string, k, v string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	out[k] = v
	return out
}

// copySpec is a deep copy of a body (the spec types have no DeepCopy).
func copySpec(s *spec.SparkApplicationSpec) (*spec.SparkApplicationSpec, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("copy spark body: %w", err)
	}
	var out spec.SparkApplicationSpec
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("copy spark body: %w", err)
	}
	return &out, nil
}

// CheckDynamic refuses a dynamic-allocation body Kueue cannot reserve
// quota for: without a finite maxExecutors the executors would escape the
// quota. The error names the field and the fix.
func CheckDynamic(s *spec.SparkApplicationSpec) error {
	d := s.DynamicAllocation
	if d == nil || !d.Enabled || d.MaxExecutors != nil {
		return nil
	}
	return fmt.Errorf("spark.dynamicAllocation.maxExecutors is required when the step is queued with Kueue (%s): set it, and Kueue reserves quota for that many executors, admitting at least minExecutors", LabelQueueName)
}
