//go:build bench

package bench

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/sparkplug-io/sparkplug/e2e/sim"
)

// driverRun is how long each simulated driver runs: long enough that all
// N run at once while the polls are measured, however slow the launch.
func driverRun(n int) time.Duration { return 45*time.Second + time.Duration(n)*90*time.Millisecond }

// loopWorkflow is a workflow whose steps loop runs template pi n times,
// each with its own argument i; spec holds more of the workflow's spec,
// pi the template's kind and body (4 spaces in, after its inputs).
func loopWorkflow(name string, n int, spec, pi string) string {
	return fmt.Sprintf(`
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: %s
spec:
  entrypoint: main%s
  templates:
    - name: main
      steps:
        - - name: pi
            template: pi
            arguments: {parameters: [{name: i, value: "{{item}}"}]}
            withSequence: {count: "%d"}
    - name: pi
      inputs: {parameters: [{name: i}]}
%s`, name, spec, n, pi)
}

// sparkTemplate is the body of a Spark step's template (4 spaces in,
// after its inputs) whose driver runs for run and takes argument arg.
func sparkTemplate(run string, d time.Duration, arg string) string {
	ann, _ := json.Marshal(sim.Succeed(d).Annotations())
	return fmt.Sprintf(`      plugin:
        spark:
          type: Scala
          mode: cluster
          image: spark:3.5.3
          sparkVersion: 3.5.3
          mainClass: org.apache.spark.examples.SparkPi
          mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
          arguments: ["%s"]
          driver: {cores: 1, memory: 512m, serviceAccount: spark, labels: {%s: %s}, annotations: %s}
          executor: {cores: 1, memory: 512m}
          dynamicAllocation: {enabled: true, initialExecutors: 0, minExecutors: 0, maxExecutors: 2}
`, arg, RunLabel, run, ann)
}
