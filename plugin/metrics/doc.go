// Package metrics defines sparkplug's Prometheus metrics: how the agent's
// calls were answered and how long they took, and what the plugin did to
// drivers (launched, stopped by a limit, deleted when their workflow ended
// or their time to live ran out).
//
// A Metrics value owns its registry, so tests and several servers in one
// process never share counters. sparkplug serve exposes it at /metrics on
// the plugin's address, or on --metrics-addr when set (the plugin address
// is loopback-only inside the agent pod).
package metrics
