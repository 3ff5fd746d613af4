package submit

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// runIdentity are the labels and annotations that say which run an object
// belongs to: its workflow, node, attempt and incarnation.
var runIdentity = struct{ labels, annotations []string }{
	labels:      []string{spark.LabelWorkflowUID, spark.LabelNode, spark.LabelAttempt, spark.LabelManagedBy},
	annotations: []string{spark.AnnotationNodeID, spark.AnnotationIncarnation},
}

// NotThisRun says why o, found under the name sparkplug gives one of a
// run's objects, does not carry that run's identity (want's, as sparkplug
// builds the object: runIdentity), "" when it does. Anyone who may create
// such an object can copy these, so they are necessary, not sufficient:
// the caller checks the owner too (driverpod.Own for a driver pod).
func NotThisRun(kind string, o, want metav1.Object) string {
	check := func(what string, got, wanted map[string]string, keys []string) string {
		for _, k := range keys {
			if w, ok := wanted[k]; ok && got[k] != w {
				return fmt.Sprintf("%s %s has %s %s=%q, not this run's %q", kind, o.GetName(), what, k, spec.Truncate(got[k], 64), w)
			}
		}
		return ""
	}
	if why := check("label", o.GetLabels(), want.GetLabels(), runIdentity.labels); why != "" {
		return why
	}
	return check("annotation", o.GetAnnotations(), want.GetAnnotations(), runIdentity.annotations)
}
