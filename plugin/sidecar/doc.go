// Package sidecar is the plugin sidecar as a library: Run wires, from one
// Config, what one agent pod's sparkplug runs — the Kubernetes, Argo and
// dynamic clients, the object templates and builder, the per-workflow
// caches (package scope), the core that follows the nodes (package
// execute), the answer to the agent's requests (package request, pinned
// to the agent pod's own workflow once known), the HTTP servers (package
// server; the plugin's and the metrics server, both under
// Config.ServerLimits), Events and metrics, the background sweeps — and
// shuts it down gracefully, deleting the running drivers of an ending
// workflow on the way out. DefaultConfig is the one place its defaults
// are defined; `sparkplug serve` only turns flags into a Config.
package sidecar
