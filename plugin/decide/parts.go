package decide

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// MaxProgressBytes bounds Spark's part of a message (its numbers are
// small; this is a guard, not a format).
const MaxProgressBytes = 64

// driverParts adds to an outcome whose outputs name driver what its
// message says of that driver beyond its state: why its log could not be
// stored (what the archive recorded on it), and, while it runs, Spark's
// own progress of its job (Snapshot.Progress).
func driverParts(o state.Outcome, driver *corev1.Pod, progress string) state.Outcome {
	if why := driver.Annotations[spark.AnnotationDriverLogError]; why != "" {
		o.LogNotArchived = spec.Truncate(why, spark.MaxDriverLogErrorBytes)
	}
	if progress != "" && o.State == spark.StateRunning && o.Phase == state.PhaseRunning {
		o.Progress = spec.Truncate(progress, MaxProgressBytes)
	}
	return o
}
