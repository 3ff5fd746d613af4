package execute

import (
	"strconv"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/nodestatus"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// result renders what a node shows: its phase and message as the outcome
// renders them (nodestatus.Of), with a driver, its outputs (the
// result a JSON string when asJSON is set, for a loop's child, and the
// driver-log artifact when its log was stored).
func (c *Core) result(o state.Outcome, driver *corev1.Pod, asJSON bool, body *spec.SparkApplicationSpec, artifact *wfv1.Artifact) wfv1.NodeResult {
	node := nodestatus.Of(o)
	if driver == nil || body == nil {
		return node
	}
	appID := driver.Labels[spark.LabelAppSelector]
	result := appID
	if asJSON {
		// A JSON string: the loop's aggregated result is then the list of
		// application ids.
		result = strconv.Quote(appID)
	}
	node.Outputs = &wfv1.Outputs{
		Result: &result,
		Parameters: []wfv1.Parameter{
			{Name: spark.OutputApplicationID, Value: wfv1.AnyStringPtr(appID)},
			{Name: spark.OutputDriverPod, Value: wfv1.AnyStringPtr(driver.Name)},
			{Name: spark.OutputSparkUI, Value: wfv1.AnyStringPtr(objects.SparkUIURL(body, driver))},
			{Name: spark.OutputAttempt, Value: wfv1.AnyStringPtr(strconv.Itoa(attemptOf(driver)))},
		},
	}
	if uid := driverUID(driver); uid != "" {
		// The record of which driver is the node's (trust.go).
		node.Outputs.Parameters = append(node.Outputs.Parameters, wfv1.Parameter{Name: spark.OutputDriverUID, Value: wfv1.AnyStringPtr(uid)})
	}
	if u := spec.HistoryUIURL(body.HistoryServerURL(), appID); u != "" {
		node.Outputs.Parameters = append(node.Outputs.Parameters, wfv1.Parameter{Name: spark.OutputHistoryUI, Value: wfv1.AnyStringPtr(u)})
	}
	if o.ExitCode != nil {
		// Argo puts it in scope as {{tasks.<name>.exitCode}} and
		// {{steps.<name>.exitCode}}, and the UI shows it.
		code := strconv.Itoa(int(*o.ExitCode))
		node.Outputs.ExitCode = &code
	}
	if artifact != nil {
		node.Outputs.Artifacts = append(node.Outputs.Artifacts, *artifact)
	}
	return node
}

// driverUID is a driver's uid; of a stand-in (a stopped driver's, built
// from its tombstone, or a ghost's, from the entry), the uid it stands
// for.
func driverUID(driver *corev1.Pod) string {
	if driver.UID != "" {
		return string(driver.UID)
	}
	return driver.Annotations[spark.AnnotationDriverUID]
}
