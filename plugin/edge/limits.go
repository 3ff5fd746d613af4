package edge

import (
	"net/http"
	"time"
)

// AgentTimeout is how long Argo's agent waits for one call of a plugin
// (its HTTP client's timeout, workflow/executor/plugins/rpc in Argo)
// before it gives up and tries again.
const AgentTimeout = 30 * time.Second

// MaxBodyBytes bounds a request body: a template.execute request is a
// template and its workflow's metadata, a few KiB; Argo keeps it in a
// WorkflowTaskSet, which etcd caps at about 1.5 MiB. A longer body is
// answered 413 without being read further.
const MaxBodyBytes = 4 << 20

// Limits bound what one client can hold of a server sparkplug runs. A
// field left zero (or negative) takes DefaultLimits' value.
type Limits struct {
	// ReadTimeout bounds reading a request, headers and body: a client
	// that stops sending is cut off.
	ReadTimeout time.Duration
	// WriteTimeout bounds answering, from the end of the headers until
	// the reply is written: the handler and a client that stops reading.
	WriteTimeout time.Duration
	// IdleTimeout closes a kept-alive connection that carries no request
	// for that long.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request line and headers; a larger block
	// is answered 431 (Go reads up to 4 KiB more before it decides).
	MaxHeaderBytes int
}

// DefaultLimits are the servers' limits, defined here once. The agent
// calls over loopback and sends a request at once, so a read that takes
// seconds is a client that stalls; replies take milliseconds, up to
// about 20 s when a first request waits for its workflow's cache or for
// spark-submit, so writes may take a little longer than the agent
// waits, never cutting off a reply the agent still wants; the agent's
// Go client closes its idle connections after 90 s, so the server keeps
// them longer and never closes one the agent is about to reuse (a POST
// on such a connection fails and is not retried); the agent's headers
// are a bearer token and a few short fields.
func DefaultLimits() Limits {
	return Limits{
		ReadTimeout:    10 * time.Second,
		WriteTimeout:   AgentTimeout + 10*time.Second,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 16 << 10,
	}
}

// withDefaults fills the fields left zero or negative.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = d.ReadTimeout
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = d.WriteTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = d.IdleTimeout
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	return l
}

// HTTPServer is the one way sparkplug makes an http.Server: the plugin's
// (server.New's engine), the acknowledger's and the metrics server all
// serve h under l.
func HTTPServer(h http.Handler, l Limits) *http.Server {
	l = l.withDefaults()
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
	}
}
