// Package ack is the acknowledger's pure logic: which template.execute
// requests are spark steps, which are not sparkplug's, which are not
// requests at all, and the reply to each. In controller mode the agent
// pod carries only the acknowledger (package acksrv, cmd/sparkplug-ack)
// and a cluster-wide controller does the work; the agent must still get,
// for every request, the answer the sidecar gives (package request):
//
//   - a spark template: Acknowledgement, {"node":{},"requeue":"0s"}, a
//     node without a phase (the agent writes nothing) and a zero requeue
//     (it never asks about the node again);
//   - another plugin's template: {}, which passes it on (never 404, which
//     would disable the plugin for the whole workflow);
//   - a body that is not a template.execute request: an error wrapping
//     ErrBadRequest (the server answers 400).
//
// Classify is the one rule: the sidecar's Execute decides by it too, and
// it decides "spark" by spark.PluginBody, the rule of step.BodyOf. The
// package imports the standard library and package spark only (a test
// checks), so the acknowledger links no Kubernetes client, no Argo types
// and no gin.
package ack
