//go:build e2e

package realnode

import (
	"slices"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
)

// A container step (Argo's emissary on the real node) takes a Spark
// step's application id as an argument, and a Spark step takes the
// container step's output parameter as an app argument.
func TestParametersFlowBetweenSparkAndContainerSteps(t *testing.T) {
	t.Parallel()
	start := time.Now()
	w := submit(t, Given(t).
		Workflow(workflow("params", "main", `    - name: main
      dag:
        tasks:
          - {name: first, template: spark}
          - name: echo
            template: echo
            depends: first
            arguments: {parameters: [{name: id, value: "{{tasks.first.outputs.parameters.application-id}}"}]}
          - name: second
            template: consume
            depends: echo
            arguments: {parameters: [{name: msg, value: "{{tasks.echo.outputs.parameters.out}}"}]}
    - name: spark
      outputs: {parameters: [{name: application-id, valueFrom: {supplied: {}}}]}
`+sparkStep(1, `"--sleep=1s"`)+`    - name: echo
      inputs: {parameters: [{name: id}]}
`+containerStep("seen", "{{inputs.parameters.id}}")+`    - name: consume
      inputs: {parameters: [{name: msg}]}
`+sparkStep(1, `"--message={{inputs.parameters.msg}}"`)))).
		WaitForWorkflow(framework.ToBeSucceeded, wfTimeout)
	t.Logf("workflow Succeeded in %.1fs", time.Since(start).Seconds())
	var appID, echoed string
	w.Then().
		ExpectNode("first", func(t *testing.T, n *wfv1.NodeStatus) { appID = param(*n, "application-id") }).
		ExpectNode("echo", func(t *testing.T, n *wfv1.NodeStatus) {
			echoed = param(*n, "out")
			if n.Type != wfv1.NodeTypePod || n.HostNodeName == "" {
				t.Errorf("echo is a %s on %q, want a pod on the real node", n.Type, n.HostNodeName)
			}
		}).
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			want := "--message=seen " + appID
			if !slices.ContainsFunc(drivers, func(d corev1.Pod) bool {
				return slices.Contains(d.Spec.Containers[0].Args, want)
			}) {
				t.Errorf("no driver has the argument %q", want)
			}
		})
	if appID == "" || echoed != "seen "+appID {
		t.Errorf("the container step's output %q, want %q", echoed, "seen "+appID)
	}
}
