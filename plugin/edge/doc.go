// Package edge is what every server the Argo agent calls shares, in the
// standard library only: the path it posts template.execute to, the
// servers' limits (limits.go: timeouts, header size, MaxBodyBytes, all
// derived from the agent's behaviour, AgentTimeout) and the bearer token
// check (token.go: constant-time, the file re-read when it changes).
//
// The sidecar's gin server (package server) and the acknowledger
// (package acksrv), which must not link gin, Argo's types or a Kubernetes
// client, both take them from here, so the agent meets the same limits
// and the same token rule whichever answers it.
package edge
