// Package request is the sidecar's answer to the Argo agent's
// template.execute, what package server calls for each request: Decode
// reads the body into Argo's types, and Answerer.Execute replies.
//
// Argo's request names no node, so it decides nothing. A spark template,
// valid or not, is answered with an acknowledgement (Acknowledgement:
// {"node":{},"requeue":"0s"}, the agent writes nothing and never asks
// again), another plugin's with {}, by package ack's rule, the
// acknowledger's too; the one exception is a process that may not write
// the workflow's TaskSet status, which fails the node and names the
// permission. The request's workflow is only a hint: the core (package
// execute, through Follower) starts following it and queues its nodes,
// whose results the passes write into the TaskSet under their own ids.
// A sidecar that knows its agent pod's workflow is pinned to it (Pin)
// and follows no other a request names; one that does not follows at
// most MaxFlows.
//
// It is the sidecar's alone: the controller, whose agent pods carry the
// acknowledger (cmd/sparkplug-ack), does not import it
// (plugin/depstest's modes_test.go), nor any other request code.
package request
