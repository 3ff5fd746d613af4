// Package edge is what every server the Argo agent calls shares, in the
// standard library only (a test checks): the path it posts
// template.execute to, the servers' limits (limits.go: timeouts, header
// size, MaxBodyBytes, all derived from the agent's behaviour,
// AgentTimeout), the bearer token check (token.go: constant-time, the
// file re-read when it changes) and the one answer to template.execute
// (execute.go: Execute).
//
// Execute is the HTTP side of the answer, written once: the token
// checked before anything else (403 on a wrong or missing one, 503 when
// the file cannot be read), the body bounded at MaxBodyBytes (413 naming
// the cap), the errors as {"error": words} (400 for a bad request, 503
// for any other error, which the agent retries), the reply 200, all JSON
// of JSONType. What differs between the servers is their Answer alone:
// the sidecar's gin engine (package server) decodes Argo's types and asks
// the sidecar's request path (package request); the acknowledger (package acksrv), which must not
// link gin, Argo's types or a Kubernetes client, applies package ack's
// rule. Both mount the same Execute, so the agent meets the same limits,
// token rule and answers whichever serves it, with nothing to keep them
// equal but this package.
package edge
