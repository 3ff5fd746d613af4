// Package render shows, with no cluster, the objects the plugin would create
// for the spark steps of a file: the driver pod, the ConfigMap with
// spark.properties and the executor pod template, the headless driver
// Service, and what some bodies add (the UI Service). It backs
// `sparkplug render`.
//
// A file holds one or more YAML documents, each one of: a bare spark body;
// a `plugin: {spark: ...}` snippet or the `{spark: ...}` value alone; an
// Argo template; a Workflow, WorkflowTemplate, ClusterWorkflowTemplate or
// CronWorkflow, whose every template with a spark body is a step; or a Spark
// operator SparkApplication or ScheduledSparkApplication, read as the
// Workflow or CronWorkflow package convert makes of it (Step.From says so,
// and what convert reports, but for the body's problems, is in
// Step.Warnings). Each step
// goes the plugin's own way, through package step as the plugin's request
// core does: Argo's parameter substitution (step.Substitute, as far as a
// file allows: inputs.parameters from their value or default,
// workflow.parameters from spec.arguments, workflow.name, namespace and uid,
// each overridable; a tag it cannot resolve is shown as it is, and named in
// Step.Warnings; UnknownParameters names the overrides no step declares or
// uses), step.Parse
// (the body with the plugin's defaults, the template key), Step.Build and
// objects.OwnedBy. An invalid body gives the one line the plugin would put on
// the node. What only a cluster knows (the workflow's uid, the node id, the
// created driver's uid) takes the placeholders in Options.
//
// A step whose launcher is spark-submit (spec.LauncherFor, as the plugin
// decides it) also gets its spark-submit run, made as the launcher makes
// it (submit.Options.Input and Command, from the natively built objects),
// with placeholders for what only the plugin's pod knows (its API server,
// credentials, temporary directories and environment); Write shows that
// run, secret values redacted as the launcher logs them, in place of the
// driver pod, which spark-submit creates.
package render
