// Package acksrv is the acknowledger's HTTP server: what the agent pod
// runs in controller mode instead of the sidecar, where a cluster-wide
// controller does the work. It answers template.execute by package ack's
// rule, with the standard library's net/http only (no gin, no Argo types,
// no Kubernetes client: its pod mounts no service account token).
//
// template.execute is edge.Execute, the answer the sidecar's server
// (package server) mounts too: the same path, limits and token check
// (package edge: loopback by default, a constant-time compare with the
// file re-read when it changes, 403 on a wrong or missing token, 503 when
// the file cannot be read), 413 for a body over edge.MaxBodyBytes, JSON
// errors redacted. Its own part is the answer (answer): ack.Decode and
// ack.Classify (400 for a body that is not a template.execute request),
// then ack.Reply, 200 with the acknowledgement for a spark template and
// {} for any other; it never answers 503 of its own, having nothing to
// wait for.
//
// Around it, its own router answers methods and paths as gin answers the
// sidecar's routes (each package's TestMethodsAndPaths holds the same
// table): 405 with Allow for a known path and another method, a redirect
// for a known path with a trailing slash, 404 elsewhere, never 404 on
// template.execute; GET /healthz and /readyz answer "ok". Each request is
// logged at debug, or at info when it is answered 400 or more, as the
// sidecar does.
package acksrv
