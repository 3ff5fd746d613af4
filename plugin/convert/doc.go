// Package convert turns the Spark operator's SparkApplications and
// ScheduledSparkApplications (sparkoperator.k8s.io/v1beta2) into Argo
// Workflows and CronWorkflows whose one template is a sparkplug step, for
// people moving off the operator (`sparkplug convert`).
//
// Convert is pure: YAML bytes in (any number of documents, Lists
// expanded), typed Argo objects and Findings out. The `spec` of a
// SparkApplication, or the `spec.template` of a ScheduledSparkApplication,
// becomes the step's `spark` body unchanged, value for value, except that
// a named SparkApplication's body gets sparkConf spark.app.name set to its
// name, as the operator's spark-submit --name sets it (withAppName); it is
// run through spec.Parse, and each problem the plugin would fail the step on is
// a Finding with its path in the input. The schedule is read with package
// schedule, as Argo reads it. Whatever does not carry over as it was (a
// status, an owner, an @every interval, a name too long for Argo, another
// kind) is a Finding with its path, never dropped silently, and so is a pod
// run as the ServiceAccount of the operator's Helm chart
// (OperatorServiceAccount), which goes with the operator; the mapping
// itself is documented in the README ("Coming from the Spark operator").
//
// A Finding carries its line and column in the input: the input is read a
// second time as yaml.Node trees, which keep positions, and the Finding's
// path is looked up there (position.go); it says too whether what is
// written will certainly fail (Fails: a body the plugin refuses, a
// schedule or zone Argo refuses), which makes the command exit 1.
//
// Marshal writes an object as YAML without the fields a new object has
// empty (status, creationTimestamp); MarshalResult also keeps the input's
// comments before the object and in its spark body, writing the input's
// own body node. The command does the I/O.
package convert
