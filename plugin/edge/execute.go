package edge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
)

// Token checks the bearer token the agent sends (TokenFile).
type Token interface {
	Matches(bearer string) (bool, error)
}

// Answer is what a server makes of one template.execute request whose
// bearer token matched: it reads the request from body (bounded at
// MaxBodyBytes) and returns the reply, any value encoding/json encodes,
// or an error. An error made by BadRequest (or NotARequest) is answered
// 400, one that reading the body past MaxBodyBytes caused (an
// *http.MaxBytesError in its chain, also under BadRequest) 413, any other
// 503, which the agent retries.
type Answer func(ctx context.Context, body io.Reader) (reply any, err error)

// BadRequest marks err as the request's fault: Execute answers it 400
// with err's words.
func BadRequest(err error) error { return &badRequest{err: err} }

// NotARequest is BadRequest for a body that could not be decoded: the
// words say so, then err's.
func NotARequest(err error) error {
	return BadRequest(fmt.Errorf("request body is not a template.execute request: %w", err))
}

type badRequest struct{ err error }

func (b *badRequest) Error() string { return b.err.Error() }
func (b *badRequest) Unwrap() error { return b.err }

// JSONType is the content type of every JSON answer, the one gin's
// c.JSON sets (the sidecar's other routes are gin's).
const JSONType = "application/json; charset=utf-8"

// Execute answers the agent's POST template.execute, the one answer both
// servers mount: the sidecar's gin engine (package server) and the
// acknowledger (package acksrv). The bearer token is always checked,
// before the body is read: 503 when the token file cannot be read (the
// agent retries), 403 when the token is missing, not a Bearer token or
// wrong. Then Answer reads the body, bounded at MaxBodyBytes, and its
// reply is sent 200; its error as the Answer type says. Every answer is
// JSON of JSONType, an error {"error": words}.
type Execute struct {
	Token  Token
	Answer Answer
	// Redact rewrites the words of the errors Answer returns before they
	// are sent (package redact's Value); nil sends them as they are. The
	// words Execute chooses itself are sent as they are.
	Redact func(string) string
	Log    *slog.Logger
}

func (e *Execute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	match, err := e.Token.Matches(bearer)
	if err != nil {
		e.Log.Error("cannot read the plugin token", "error", err.Error())
		writeError(w, http.StatusServiceUnavailable, "the plugin cannot read its token file")
		return
	}
	if !ok || !match {
		writeError(w, http.StatusForbidden, "invalid or missing bearer token")
		return
	}
	reply, err := e.Answer(r.Context(), http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	var bad *badRequest
	switch {
	case errors.As(err, &tooLarge):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", tooLarge.Limit))
		return
	case errors.As(err, &bad):
		writeError(w, http.StatusBadRequest, e.redact(err.Error()))
		return
	case err != nil:
		e.Log.Info("answering 503; the agent retries", "error", err.Error())
		writeError(w, http.StatusServiceUnavailable, e.redact(err.Error()))
		return
	}
	b, err := json.Marshal(reply)
	if err != nil {
		e.Log.Error("cannot encode the reply", "error", err.Error())
		writeError(w, http.StatusInternalServerError, "the plugin cannot encode its reply; see its log")
		return
	}
	writeJSON(w, http.StatusOK, b)
}

func (e *Execute) redact(s string) string {
	if e.Redact == nil {
		return s
	}
	return e.Redact(s)
}

// writeError writes {"error": msg} with code.
func writeError(w http.ResponseWriter, code int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg}) // a map of strings always marshals
	writeJSON(w, code, b)
}

func writeJSON(w http.ResponseWriter, code int, b []byte) {
	w.Header().Set("Content-Type", JSONType)
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
