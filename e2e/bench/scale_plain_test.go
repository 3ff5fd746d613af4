//go:build bench

package bench

import (
	"fmt"
	"testing"
	"time"
)

// plainWorkflow is the same fan-out with container steps.
func plainWorkflow(run string, n int) string {
	return loopWorkflow("scale-plain-", n, "", fmt.Sprintf(`      metadata: {labels: {%s: %s}}
      container:
        image: spark:3.5.3
        command: [/opt/spark/bin/spark-submit]
        args: [--class, org.apache.spark.examples.SparkPi, "local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar", "{{inputs.parameters.i}}"]
`, RunLabel, run))
}

func runPlain(t *testing.T, n int) Result {
	run := runID("plain", n)
	w := newPodWatch(t, run)
	api0 := apiRequests(t)
	wf := submit(t, plainWorkflow(run, n))
	w.waitCreated(t, wf, n, 10*time.Minute)
	r := Result{Kind: KindPlain, N: n, Created: w.created(), APIRequests: apiRequests(t) - api0, OwnRequests: -1, WorkflowWrites: -1, TaskSetWrites: -1}
	// KWOK runs container pods forever: the workflow is never done here.
	cleanup(t, wf, run)
	return r
}
