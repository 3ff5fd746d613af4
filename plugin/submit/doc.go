// Package submit runs Spark's own client, spark-submit --deploy-mode
// cluster, for the bodies that ask for it (sparkplug.launcher:
// spark-submit) instead of sparkplug's native launch.
//
// The command line is what the Spark operator would run
// (internal/controller/sparkapplication/submission.go), built by an ordered
// list of small option functions (Args), from what the native launcher
// built for the same run: every key of objects.Properties as --conf, the
// natively built driver pod's labels and annotations as
// spark.kubernetes.driver.label.* and .annotation.*, and that pod, less
// what Spark's own submission steps add, as the driver pod template
// (DriverTemplate). So spark-submit creates the driver pod under the same
// name, with the same labels, annotations and pod fields, and sparkplug
// follows it exactly as a native driver.
//
// Options.Input and Options.Command make one run's whole exec: program,
// argv, environment and the pod template files, which the launcher
// (plugin/execute) writes and runs and sparkplug render shows. Command
// refuses an Input whose argv spark-submit would read otherwise than meant
// (checkArgs, behind the validation of plugin/spec); the tests prove the
// rest against a model of Spark's own parser.
//
// Run execs $SPARK_HOME/bin/spark-submit with an argv, never a shell,
// under a context timeout, in a minimal environment, and captures the
// output; Message picks the lines of stderr a person needs, and Redact
// hides secret conf values before the argv is logged. Nothing here talks
// to the API server; plugin/execute decides when to submit and what to do
// with the result.
package submit
