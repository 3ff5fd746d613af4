package acksrv

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/edge"
	"github.com/sparkplug-io/sparkplug/plugin/edge/edgetest"
)

const (
	sparkBody = `{"workflow":{"metadata":{"name":"wf","namespace":"ns","uid":"uid-1"}},"template":{"name":"pi","plugin":{"spark":{"type":"Scala"}}}}`
	otherBody = `{"workflow":{"metadata":{"name":"wf","namespace":"ns","uid":"uid-1"}},"template":{"name":"hi","plugin":{"slack":{"text":"hi"}}}}`
	ackReply  = `{"node":{},"requeue":"0s"}`
)

// start runs the acknowledger (Run) on a loopback port with token file
// path until the test ends, and returns its base URL and its log.
func start(t *testing.T, tokenPath string) (string, *lockedBuffer) {
	t.Helper()
	log := &lockedBuffer{}
	c := DefaultConfig()
	c.Addr, c.TokenFile = "127.0.0.1:0", tokenPath
	addr := make(chan string, 1)
	c.Listening = func(a string) { addr <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, c, slog.New(slog.NewJSONHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})))
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case a := <-addr:
		return "http://" + a, log
	case err := <-done:
		t.Fatalf("Run: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("the acknowledger did not listen")
	}
	return "", nil
}

// lockedBuffer is the log, written by the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func writeToken(t *testing.T, dir, token string) string {
	t.Helper()
	p := filepath.Join(dir, "token")
	if err := os.WriteFile(p, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func do(t *testing.T, method, url, auth string, body io.Reader) edgetest.Reply {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return edgetest.Reply{Code: resp.StatusCode, Body: string(b), ContentType: resp.Header.Get("Content-Type"), Allow: resp.Header.Get("Allow"), Location: resp.Header.Get("Location")}
}

// Over HTTP on 127.0.0.1, as the agent calls it: the acknowledgement for
// a spark template, {} for another plugin's, 400 for a body that is no
// request, 403 for a wrong or missing token (before the body is read),
// all JSON.
func TestServesTheAgentOnLoopback(t *testing.T) {
	base, _ := start(t, writeToken(t, t.TempDir(), "secret-token"))
	url := base + edge.ExecutePath
	for _, tc := range []struct {
		name, auth, body string
		code             int
		want             string
	}{
		{"a spark template", "Bearer secret-token", sparkBody, 200, ackReply},
		{"another plugin's template", "Bearer secret-token", otherBody, 200, `{}`},
		{"malformed JSON", "Bearer secret-token", `{"workflow":`, 400, `request body is not a template.execute request`},
		{"no template", "Bearer secret-token", `{"workflow":{}}`, 400, `the request needs workflow and template`},
		{"a wrong token", "Bearer other", sparkBody, 403, `{"error":"invalid or missing bearer token"}`},
		{"a token without Bearer", "secret-token", sparkBody, 403, `{"error":"invalid or missing bearer token"}`},
		{"no token", "", sparkBody, 403, `{"error":"invalid or missing bearer token"}`},
		{"an empty bearer", "Bearer ", `{"workflow":`, 403, `{"error":"invalid or missing bearer token"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, http.MethodPost, url, tc.auth, strings.NewReader(tc.body))
			if r.Code != tc.code || !strings.Contains(r.Body, tc.want) || r.ContentType != edge.JSONType {
				t.Fatalf("%d %s (%s), want %d with %s (%s)", r.Code, r.Body, r.ContentType, tc.code, tc.want, edge.JSONType)
			}
			if tc.code == 200 && r.Body != tc.want {
				t.Fatalf("reply %s, want exactly %s", r.Body, tc.want)
			}
		})
	}
}

// Every body of package ack's cases is answered by the rule: 200 with
// the case's reply exactly (the acknowledgement for a spark template, {}
// for another), or 400 for a body that is no request; all JSON.
func TestAnswersEveryCaseOfTheRule(t *testing.T) {
	h := Handler(&edge.TokenFile{Path: writeToken(t, t.TempDir(), "tok")}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, tc := range edgetest.Cases(t) {
		t.Run(tc.Name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, edge.ExecutePath, strings.NewReader(tc.Body))
			req.Header.Set("Authorization", "Bearer tok")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			want, wantBody := http.StatusOK, tc.Reply
			if tc.Reply == "" {
				want, wantBody = http.StatusBadRequest, `{"error":`
			}
			if rec.Code != want || !strings.HasPrefix(rec.Body.String(), wantBody) || rec.Header().Get("Content-Type") != edge.JSONType {
				t.Fatalf("%d %s (%s), want %d %s", rec.Code, rec.Body, rec.Header().Get("Content-Type"), want, wantBody)
			}
			if want == http.StatusOK && rec.Body.String() != tc.Reply {
				t.Fatalf("reply %s, want exactly %s", rec.Body, tc.Reply)
			}
		})
	}
}

// A body over edge.MaxBodyBytes is 413 naming the cap; one of exactly
// that size is read whole.
func TestABodyOverMaxBodyBytesIs413(t *testing.T) {
	base, _ := start(t, writeToken(t, t.TempDir(), "tok"))
	padded := func(size int) string {
		body := strings.Replace(sparkBody, `"name":"pi"`, `"name":"pi`+strings.Repeat("x", size-len(sparkBody))+`"`, 1)
		if len(body) != size {
			t.Fatalf("built %d bytes, want %d", len(body), size)
		}
		return body
	}
	if r := do(t, http.MethodPost, base+edge.ExecutePath, "Bearer tok", strings.NewReader(padded(edge.MaxBodyBytes))); r.Code != 200 || r.Body != ackReply {
		t.Fatalf("a body of MaxBodyBytes: %d %s, want 200 %s", r.Code, r.Body, ackReply)
	}
	r := do(t, http.MethodPost, base+edge.ExecutePath, "Bearer tok", strings.NewReader(padded(edge.MaxBodyBytes+1)))
	if r.Code != http.StatusRequestEntityTooLarge || r.Body != `{"error":"request body over 4194304 bytes"}` {
		t.Fatalf("a body of MaxBodyBytes+1: %d %s, want 413 naming the cap", r.Code, r.Body)
	}
}

// The token file is read when it changes (the agent's init container
// writes it, maybe after the start); one that cannot be read is 503,
// which the agent retries, and is logged without the token.
func TestTheTokenFileIsReReadAndAMissingOneIs503(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "token")
	base, log := start(t, path)
	url := base + edge.ExecutePath
	if r := do(t, http.MethodPost, url, "Bearer first", strings.NewReader(sparkBody)); r.Code != http.StatusServiceUnavailable || !strings.Contains(r.Body, "cannot read its token file") {
		t.Fatalf("no token file: %d %s, want 503", r.Code, r.Body)
	}
	writeToken(t, dir, "first")
	if r := do(t, http.MethodPost, url, "Bearer first", strings.NewReader(sparkBody)); r.Code != 200 {
		t.Fatalf("the token written: %d %s, want 200", r.Code, r.Body)
	}
	// A new token of another length: the file's size changed.
	writeToken(t, dir, "second-token")
	if r := do(t, http.MethodPost, url, "Bearer first", strings.NewReader(sparkBody)); r.Code != http.StatusForbidden {
		t.Fatalf("the old token after the file changed: %d %s, want 403", r.Code, r.Body)
	}
	if r := do(t, http.MethodPost, url, "Bearer second-token", strings.NewReader(sparkBody)); r.Code != 200 {
		t.Fatalf("the new token: %d %s, want 200", r.Code, r.Body)
	}
	if strings.Contains(log.String(), "second-token") || !strings.Contains(log.String(), "cannot read the plugin token") {
		t.Fatalf("log:\n%s\nwant the unreadable token file logged, no token in it", log)
	}
}

// Methods and paths are answered as the sidecar's gin engine answers
// them (edgetest.Routes, the table package server's test holds it to).
func TestMethodsAndPaths(t *testing.T) {
	base, log := start(t, writeToken(t, t.TempDir(), "tok"))
	for _, tc := range edgetest.Routes() {
		if tc.Method == http.MethodHead {
			tc.Want.Body = "" // a HEAD answer carries no body over HTTP
		}
		r := do(t, tc.Method, base+tc.Path, "Bearer tok", strings.NewReader(sparkBody))
		if r != tc.Want {
			t.Errorf("%s %s: %+v, want %+v", tc.Method, tc.Path, r, tc.Want)
		}
	}
	// Answers of 400 and more are logged at info, the others at debug.
	if !strings.Contains(log.String(), `"level":"INFO","msg":"request","method":"GET","path":"/api/v1/template.execute","status":405`) ||
		!strings.Contains(log.String(), `"level":"DEBUG","msg":"request","method":"GET","path":"/healthz","status":200`) {
		t.Fatalf("request log:\n%s", log)
	}
}

// A config without an address or token file is refused, naming the flag.
func TestValidateNamesTheFlag(t *testing.T) {
	for _, tc := range []struct {
		mutate func(*Config)
		want   string
	}{
		{func(c *Config) { c.Addr = "" }, "--addr"},
		{func(c *Config) { c.TokenFile = "" }, "--token-file"},
		{func(c *Config) { c.ShutdownGrace = -time.Second }, "--shutdown-grace"},
	} {
		c := DefaultConfig()
		tc.mutate(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v, want an error naming %s", err, tc.want)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}
