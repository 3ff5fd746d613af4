//go:build e2e

package e2e

import (
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
)

// historyServer is the History Server the step names itself: the e2e
// plugin runs without --history-server-url, so the output comes from the
// per-step override alone. Nothing answers at that address; the test
// checks what the node says, not the page.
const historyServer = "http://spark-history.spark.svc:18080/"

// historyWorkflow: the step pi names its History Server and declares the
// history-ui output, which the report step takes as an argument; the
// step plain names none, and the plugin has none.
var historyWorkflow = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: spark-history-
spec:
  entrypoint: main
  templates:
    - name: main
      dag:
        tasks:
          - {name: pi, template: pi}
          - {name: plain, template: plain}
          - name: report
            depends: pi
            template: report
            arguments:
              parameters:
                - {name: page, value: "{{tasks.pi.outputs.parameters.history-ui}}"}
    - name: pi
      outputs:
        parameters:
          - name: history-ui
            valueFrom: {supplied: {}}
      plugin:
        spark:` + sparkBody(10, `arguments: ["1000"]`, "sparkConf:",
	`  spark.eventLog.enabled: "true"`, "  spark.eventLog.dir: s3a://spark-events/",
	driverLine, executorLine, "sparkplug:", `  historyServerURL: "`+historyServer+`"`) + `
    - name: plain
      plugin:
        spark:` + sparkPi + driverBody + `
    - name: report
      inputs:
        parameters:
          - name: page
      plugin:
        spark:` + sparkBody(10, `arguments: ["10", "{{inputs.parameters.page}}"]`, driverLine, executorLine) + `
`

// Through the real controller and agent, a step's
// sparkplug.historyServerURL gives its node the output history-ui, the
// application's page on the History Server (<url>/history/<application
// id>/), while the node runs and once it succeeded, and a later step gets
// it as a parameter; a step that names no History Server, on a plugin
// with none, reports no history-ui.
func TestHistoryUIThroughArgo(t *testing.T) {
	parallel(t)
	wantPage := func(n *wfv1.NodeStatus) string {
		return historyServer[:len(historyServer)-1] + "/history/" + param(*n, "application-id") + "/"
	}
	var whileRunning string
	runningWithPage := framework.NodeCondition{Name: "Running with a history-ui", Done: func(n *wfv1.NodeStatus) bool {
		if n.Phase != wfv1.NodeRunning || param(*n, "history-ui") == "" {
			return false
		}
		whileRunning = param(*n, "history-ui")
		return true
	}}
	Given(t).
		Workflow(historyWorkflow).
		Simulate(sim.Succeed(6*time.Second)).
		When().
		SubmitWorkflow().
		WaitForNode("pi", runningWithPage).
		WaitForWorkflow(framework.ToBeSucceeded).
		Then().
		ExpectNode("pi", func(t *testing.T, n *wfv1.NodeStatus) {
			if !appIDPattern.MatchString(param(*n, "application-id")) {
				t.Fatalf("node pi: application-id %q, want spark-<32 hex>", param(*n, "application-id"))
			}
			want := wantPage(n)
			if whileRunning != want {
				t.Errorf("node pi while Running: history-ui %q, want %q", whileRunning, want)
			}
			if got := param(*n, "history-ui"); n.Phase != wfv1.NodeSucceeded || got != want {
				t.Errorf("node pi %s: history-ui %q, want Succeeded with %q", n.Phase, got, want)
			}
		}).
		ExpectNode("report", func(t *testing.T, n *wfv1.NodeStatus) {
			if n.Inputs == nil || len(n.Inputs.Parameters) != 1 || n.Inputs.Parameters[0].Value == nil ||
				n.Inputs.Parameters[0].Value.String() != whileRunning {
				t.Errorf("node report inputs %+v, want page %q", n.Inputs, whileRunning)
			}
		}).
		ExpectNode("plain", func(t *testing.T, n *wfv1.NodeStatus) {
			if got := param(*n, "history-ui"); got != "" || !appIDPattern.MatchString(param(*n, "application-id")) {
				t.Errorf("node plain: history-ui %q, application-id %q; want no history-ui and an application id", got, param(*n, "application-id"))
			}
		})
}
