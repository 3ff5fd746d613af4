package execute

import (
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/sparkapi"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// ProgressSource is where a running driver's Spark progress comes from:
// sparkapi.Tracker, which asks the driver's REST API in the background and
// answers from what it last heard, so a reply never waits on Spark.
type ProgressSource interface {
	Get(key, baseURL, appID string) (text string, ok bool)
	Forget(key string)
}

// newProgressSource is the Spark REST API tracker, refreshed once per
// progress interval so Spark's numbers, like the elapsed time, change the
// message (and the Workflow) at most once per interval; none when the
// interval is 0.
func newProgressSource(interval time.Duration) ProgressSource {
	if interval <= 0 {
		return nil
	}
	return sparkapi.NewTracker(sparkapi.NewClient(0), sparkapi.TrackerOptions{Refresh: interval})
}

// withSparkProgress adds, to a running driver's outcome, the running
// job's stage and task progress Spark's REST API last gave (nothing when
// the UI does not answer: the executor count and elapsed time alone), and
// forgets a driver that is over.
func (c *Core) withSparkProgress(o state.Outcome, body *spec.SparkApplicationSpec, driver *corev1.Pod) state.Outcome {
	if c.progress == nil || driver == nil || driver.UID == "" {
		return o
	}
	key := string(driver.UID)
	if o.State != spark.StateRunning || o.Phase != wfv1.NodeRunning {
		if o.Phase == wfv1.NodeSucceeded || o.Phase == wfv1.NodeFailed || o.Phase == wfv1.NodeError {
			c.progress.Forget(key)
		}
		return o
	}
	if text, _ := c.progress.Get(key, objects.SparkUIClusterURL(body, driver), driver.Labels[spark.LabelAppSelector]); text != "" {
		o.Progress = spec.Truncate(text, maxProgressBytes)
	}
	return o
}

// maxProgressBytes bounds Spark's part of a message (its numbers are
// small; this is a guard, not a format).
const maxProgressBytes = 64
