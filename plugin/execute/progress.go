package execute

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
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

// sparkProgress is what Spark's REST API last gave of a running
// driver's job (the stage and task counts; "" when the UI does not
// answer, no job runs, or progress is off), for the snapshot: decide
// shows it in a RUNNING message. Only a driver whose pod runs is asked
// about, and the tracker answers at once from what it last heard.
func (c *Core) sparkProgress(body *spec.SparkApplicationSpec, driver *corev1.Pod) string {
	if c.progress == nil || driver == nil || driver.UID == "" || driver.Status.Phase != corev1.PodRunning || driverpod.Finished(driver) {
		return ""
	}
	text, _ := c.progress.Get(string(driver.UID), objects.SparkUIClusterURL(body, driver), driver.Labels[spark.LabelAppSelector])
	return text
}

// forgetProgress forgets the Spark progress of a driver whose node's
// outcome is final.
func (c *Core) forgetProgress(o state.Outcome, driver *corev1.Pod) {
	if c.progress == nil || driver == nil || driver.UID == "" {
		return
	}
	if o.Phase.Completed() {
		c.progress.Forget(string(driver.UID))
	}
}
