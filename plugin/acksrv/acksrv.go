package acksrv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/ack"
	"github.com/sparkplug-io/sparkplug/plugin/edge"
	"github.com/sparkplug-io/sparkplug/plugin/redact"
)

// Config is everything one acknowledger runs with.
type Config struct {
	// Addr is the address to listen on; the agent calls localhost at the
	// port in plugin.yaml.
	Addr string
	// TokenFile holds the bearer token the agent sends. It is always
	// checked.
	TokenFile string
	// ShutdownGrace is how long in-flight requests may finish at shutdown.
	ShutdownGrace time.Duration
	// Limits bound the server's clients; a zero field takes
	// edge.DefaultLimits' value.
	Limits edge.Limits
	// Listening, when set, receives the bound address.
	Listening func(addr string)
}

// DefaultConfig is the acknowledger's defaults: the sidecar's address,
// token file and limits. Replies take microseconds, so a short grace
// lets every request in flight finish.
func DefaultConfig() Config {
	return Config{Addr: edge.DefaultAddr, TokenFile: edge.DefaultTokenFile, ShutdownGrace: 5 * time.Second, Limits: edge.DefaultLimits()}
}

// Validate rejects a config the acknowledger cannot run with, naming the
// flag.
func (c Config) Validate() error {
	switch {
	case c.Addr == "":
		return errors.New("--addr is required")
	case c.TokenFile == "":
		return errors.New("--token-file is required: the bearer token is always checked")
	case c.ShutdownGrace < 0:
		return fmt.Errorf("--shutdown-grace must not be negative, got %s", c.ShutdownGrace)
	}
	return nil
}

// Run listens at once (the agent's first calls fail after about 15 s of
// refused connections) and serves until ctx ends, then lets requests in
// flight finish for ShutdownGrace.
func Run(ctx context.Context, c Config, log *slog.Logger) error {
	if err := c.Validate(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.Addr, err)
	}
	srv := edge.HTTPServer(Handler(&edge.TokenFile{Path: c.TokenFile}, log), c.Limits)
	log.Info("acknowledging template.execute", "addr", ln.Addr().String(), "token_file", c.TokenFile)
	if c.Listening != nil {
		c.Listening(ln.Addr().String())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), c.ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// routes are the paths served and the one method each takes.
var routes = map[string]string{
	edge.ExecutePath: http.MethodPost,
	"/healthz":       http.MethodGet,
	"/readyz":        http.MethodGet,
}

// Handler answers the agent. token is always checked on template.execute.
func Handler(token edge.Token, log *slog.Logger) http.Handler {
	return &handler{execute: &edge.Execute{Token: token, Answer: answer, Redact: redact.Value, Log: log}, log: log}
}

type handler struct {
	execute http.Handler
	log     *slog.Logger
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	h.route(sw, r)
	level := slog.LevelDebug
	if sw.status >= 400 {
		level = slog.LevelInfo
	}
	h.log.Log(r.Context(), level, "request", "method", r.Method, "path", r.URL.Path,
		"status", sw.status, "duration", time.Since(start).String())
}

// route answers as gin answers the sidecar's routes (HandleMethodNotAllowed,
// RedirectTrailingSlash).
func (h *handler) route(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	method, known := routes[path]
	switch {
	case known && r.Method == method && path == edge.ExecutePath:
		h.execute.ServeHTTP(w, r)
	case known && r.Method == method:
		text(w, http.StatusOK, "text/plain; charset=utf-8", "ok")
	case known:
		w.Header().Set("Allow", method)
		text(w, http.StatusMethodNotAllowed, "text/plain", "405 method not allowed")
	case strings.HasSuffix(path, "/") && routes[strings.TrimSuffix(path, "/")] == r.Method:
		code := http.StatusMovedPermanently
		if r.Method != http.MethodGet {
			code = http.StatusTemporaryRedirect
		}
		http.Redirect(w, r, strings.TrimSuffix(path, "/"), code)
	default:
		text(w, http.StatusNotFound, "text/plain", "404 page not found")
	}
}

// answer is the acknowledger's answer (edge.Execute does the rest):
// package ack's rule, without a Kubernetes client. A body that is no
// request, or that the rule calls one, is answered 400.
func answer(_ context.Context, body io.Reader) (any, error) {
	req, err := ack.Decode(body)
	if err != nil {
		return nil, edge.NotARequest(err)
	}
	kind, err := ack.Classify(req)
	if err != nil {
		return nil, edge.BadRequest(err)
	}
	return json.RawMessage(ack.Reply(kind)), nil
}

func text(w http.ResponseWriter, code int, contentType, body string) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(code)
	_, _ = w.Write([]byte(body))
}

// statusWriter remembers the status written, for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}
