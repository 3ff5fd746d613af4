package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sparkplug-io/sparkplug/plugin/kueue"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// maxAllowedShown bounds the allowed classes a refusal lists: the
// operator's setting, shown whole unless it is very long.
const maxAllowedShown = 1024

// CheckPriorityClass returns an *Error when a step queued with Kueue
// (queue, its LocalQueue; "": not queued) names, by the label
// kueue.x-k8s.io/priority-class of its template's metadata, a
// WorkloadPriorityClass Policy.WorkloadPriorityClasses does not list.
// A step that names none, or is not queued (the label then does
// nothing), passes; so does every step when the list is empty.
func CheckPriorityClass(p Policy, queue string, templateLabels map[string]string) error {
	name := templateLabels[kueue.LabelPriorityClass]
	if len(p.WorkloadPriorityClasses) == 0 || queue == "" || name == "" || slices.Contains(p.WorkloadPriorityClasses, name) {
		return nil
	}
	return &Error{Problems: []Problem{{
		Field: fmt.Sprintf("metadata.labels[%s]", kueue.LabelPriorityClass),
		Rule:  "allowed-workload-priority-classes",
		Detail: fmt.Sprintf("WorkloadPriorityClass %s is not allowed: name one of %s, or none",
			shown(name), spec.Truncate(strings.Join(p.WorkloadPriorityClasses, ", "), maxAllowedShown)),
	}}}
}
