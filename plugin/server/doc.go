// Package server is the sidecar's HTTP edge: the gin engine the Argo agent
// calls at POST /api/v1/template.execute, plus /healthz, /readyz and,
// with metrics, /metrics.
//
// It is thin on purpose. template.execute is edge.Execute, the answer the
// acknowledger (package acksrv) mounts too: the bearer token always
// checked (constant-time, 403 on mismatch, 503 when its file cannot be
// read), the body bounded (413 over edge.MaxBodyBytes), JSON errors
// redacted (package redact). Its own part is the answer (handler.answer):
// decode the request into Argo's types (request.Decode; 400 for a body
// that is not a template.execute request), call the request path
// (package request's Answerer, behind Executor), reply its
// acknowledgement for spark templates and {} for others; its
// request.ErrBadRequest is 400, any other error 503 (the agent retries
// within the call). Status codes follow what the agent does with
// them (see docs/node-identity.md); never 404 on template.execute, which
// would disable the plugin for the whole workflow. Kubernetes calls use
// the request's context, never gin's.
//
// Around it, gin: the routes (405 with Allow for another method, a
// redirect for a trailing slash, 404 elsewhere; package acksrv copies
// these answers), recovery (a panic is a 500 with a message), the
// request log and the request metrics, whose node phase the answer hands
// to them through the request's context.
//
// edge.DefaultLimits (shared with the acknowledger) are the servers'
// timeouts and header size, defined once and derived from the agent's
// behaviour (edge.AgentTimeout); edge.HTTPServer makes every http.Server
// sparkplug runs (this engine's and the metrics server's) under them: a
// client that stalls while sending is cut off at the read timeout, an
// oversize header block is answered 431, an idle kept-alive connection is
// closed.
package server
