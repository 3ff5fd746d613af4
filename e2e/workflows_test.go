//go:build e2e

package e2e

// The pieces of Workflow YAML the tests share: SparkPi's spark body, the
// pods' lines, and a Workflow of one spark step. A test's own Workflow
// holds what it is about and takes the rest from here.

import (
	"slices"
	"strings"
)

// sparkPiLines are SparkPi's application: the spark body every test
// workflow starts from. Its pods' lines (driverLine, executorLine, or a
// test's own) come after.
var sparkPiLines = []string{
	"type: Scala",
	"mode: cluster",
	"image: spark:3.5.3",
	"sparkVersion: 3.5.3",
	"mainClass: org.apache.spark.examples.SparkPi",
	"mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar",
}

const (
	// driverLine: a driver of one core and 512m, as the ServiceAccount
	// spark the suite makes in each job namespace.
	driverLine = "driver: {cores: 1, memory: 512m, serviceAccount: spark}"
	// executorLine: one executor of one core and 512m.
	executorLine = "executor: {cores: 1, instances: 1, memory: 512m}"
)

// sparkBody is what follows `spark:` in a Workflow: SparkPi's lines, then
// extra (a line may start with spaces of its own, for a map's entries),
// each on a line indented by indent spaces (a template's plugin.spark is
// at 8 or 10, a CronWorkflow's at 12).
func sparkBody(indent int, extra ...string) string {
	pad := "\n" + strings.Repeat(" ", indent)
	return pad + strings.Join(append(slices.Clone(sparkPiLines), extra...), pad)
}

// sparkPi is SparkPi with one executor at a template's plugin.spark of a
// steps or dag Workflow (10 spaces), without a driver line.
var sparkPi = sparkBody(10, executorLine)

// driverBody is driverLine at sparkPi's indentation.
var driverBody = "\n          " + driverLine

// sparkWorkflow is a Workflow whose entrypoint is a single spark step:
// tmpl goes into the template (4 spaces in), body into plugin.spark after
// sparkPi.
func sparkWorkflow(generateName, tmpl, body string) string {
	return `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: ` + generateName + `
spec:
  entrypoint: pi
  templates:
    - name: pi` + tmpl + `
      plugin:
        spark:` + sparkPi + body + "\n"
}
