// Package server is sparkplug's HTTP edge: the gin engine the Argo agent
// calls at POST /api/v1/template.execute, plus /healthz and /readyz, and
// edge.HTTPServer, which makes every http.Server sparkplug runs (this engine's
// and the metrics server's) under one set of Limits.
//
// It is thin on purpose: authenticate the bearer token (constant-time, 403
// on mismatch; there is no way to turn the check off), decode the request,
// call the request core, encode the reply. Status codes follow what the
// agent does with them (see docs/node-identity.md): 200 with the core's
// acknowledgement for spark templates and {} for others, 400 for a body
// that is not a template.execute request, 413 for one over edge.MaxBodyBytes,
// 503 only for a core error (the agent retries within the call), and never
// 404 on template.execute, which would disable the plugin for the whole
// workflow. Kubernetes calls use
// the request's context, never gin's.
//
// edge.DefaultLimits (shared with the acknowledger) are the
// servers' timeouts and header size, defined once and derived from the
// agent's behaviour (edge.AgentTimeout): a client that stalls while sending is
// cut off at the read timeout, an oversize header block is answered 431,
// an idle kept-alive connection is closed.
package server
