// Package faults is a fault-injecting reverse proxy for the chaos suite:
// put between the plugin and the kube-apiserver of e2e/cluster, it makes
// the API server slow, failing, overloaded, unreachable or forgetful, in a
// sequence replayable from a seed.
//
// Start listens on 127.0.0.1 over HTTPS with a self-signed certificate
// (client-go sends no credentials over plain HTTP); clients reach it with
// https://127.0.0.1:port, not verifying it, and their usual bearer token,
// which is forwarded unchanged to the upstream API server (over TLS, not
// verified: the test cluster's certificate is self-signed). Responses are
// streamed, so watches work through it.
//
// Each request that is eligible (the proxy is enabled and Options.Filter
// accepts it) draws once from the seeded generator and gets at most one
// fault, with the rates of Options:
//
//	latency        wait LatencyMin..LatencyMax, then forward
//	server-error   answer 500, 503 or 504 with a Status body; not forwarded
//	too-many       answer 429, Retry-After: 1, with a Status body; not forwarded
//	reset          reset the client's connection (RST); not forwarded
//	lost-response  POST/PUT/PATCH/DELETE only: forward, discard the answer,
//	               reset the client's connection (the write happened, the
//	               client never learns it)
//	timeout        hold the request until the client gives up or TimeoutMax
//	               passes, then drop the connection; not forwarded
//	watch-cut      watch requests only: forward, then cut the stream after
//	               WatchCutMin..WatchCutMax
//
// If the rates that apply to a request add up to more than 1 they are
// scaled down to add up to 1. Every eligible request consumes the same
// number of draws, so the same seed and the same sequence of requests give
// the same faults; concurrent requests draw in the order they arrive.
//
// Counts reports how many faults of each kind were injected. Close ends
// everything the proxy started: held requests are released, streams cut,
// and it returns once every handler has returned.
package faults
