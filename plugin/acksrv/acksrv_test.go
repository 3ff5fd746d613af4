package acksrv

import (
	"bytes"
	"context"
	"encoding/json"
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

type reply struct {
	code                     int
	body, contentType, allow string
	location                 string
}

func do(t *testing.T, method, url, auth string, body io.Reader) reply {
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
	return reply{resp.StatusCode, string(b), resp.Header.Get("Content-Type"), resp.Header.Get("Allow"), resp.Header.Get("Location")}
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
			if r.code != tc.code || !strings.Contains(r.body, tc.want) || r.contentType != edge.JSONType {
				t.Fatalf("%d %s (%s), want %d with %s (%s)", r.code, r.body, r.contentType, tc.code, tc.want, edge.JSONType)
			}
			if tc.code == 200 && r.body != tc.want {
				t.Fatalf("reply %s, want exactly %s", r.body, tc.want)
			}
		})
	}
}

// Every body of package ack's cases is answered by the rule: 200 with
// the case's reply exactly (the acknowledgement for a spark template, {}
// for another), or 400 for a body that is no request; all JSON.
func TestAnswersEveryCaseOfTheRule(t *testing.T) {
	b, err := os.ReadFile("../ack/testdata/requests.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct{ Name, Body, Reply string }
	if err := json.Unmarshal(b, &cases); err != nil || len(cases) < 20 {
		t.Fatalf("../ack/testdata/requests.json: %d cases, %v", len(cases), err)
	}
	h := Handler(&edge.TokenFile{Path: writeToken(t, t.TempDir(), "tok")}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, tc := range cases {
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
	if r := do(t, http.MethodPost, base+edge.ExecutePath, "Bearer tok", strings.NewReader(padded(edge.MaxBodyBytes))); r.code != 200 || r.body != ackReply {
		t.Fatalf("a body of MaxBodyBytes: %d %s, want 200 %s", r.code, r.body, ackReply)
	}
	r := do(t, http.MethodPost, base+edge.ExecutePath, "Bearer tok", strings.NewReader(padded(edge.MaxBodyBytes+1)))
	if r.code != http.StatusRequestEntityTooLarge || r.body != `{"error":"request body over 4194304 bytes"}` {
		t.Fatalf("a body of MaxBodyBytes+1: %d %s, want 413 naming the cap", r.code, r.body)
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
	if r := do(t, http.MethodPost, url, "Bearer first", strings.NewReader(sparkBody)); r.code != http.StatusServiceUnavailable || !strings.Contains(r.body, "cannot read its token file") {
		t.Fatalf("no token file: %d %s, want 503", r.code, r.body)
	}
	writeToken(t, dir, "first")
	if r := do(t, http.MethodPost, url, "Bearer first", strings.NewReader(sparkBody)); r.code != 200 {
		t.Fatalf("the token written: %d %s, want 200", r.code, r.body)
	}
	// A new token of another length: the file's size changed.
	writeToken(t, dir, "second-token")
	if r := do(t, http.MethodPost, url, "Bearer first", strings.NewReader(sparkBody)); r.code != http.StatusForbidden {
		t.Fatalf("the old token after the file changed: %d %s, want 403", r.code, r.body)
	}
	if r := do(t, http.MethodPost, url, "Bearer second-token", strings.NewReader(sparkBody)); r.code != 200 {
		t.Fatalf("the new token: %d %s, want 200", r.code, r.body)
	}
	if strings.Contains(log.String(), "second-token") || !strings.Contains(log.String(), "cannot read the plugin token") {
		t.Fatalf("log:\n%s\nwant the unreadable token file logged, no token in it", log)
	}
}

// Methods and paths are answered as the sidecar's gin engine answers
// them (package server's TestMethodsAndPaths holds the same table): 405
// with Allow on a known path, a redirect for a trailing slash, 404
// elsewhere, "ok" on /healthz and /readyz; never 404 on template.execute.
func TestMethodsAndPaths(t *testing.T) {
	base, log := start(t, writeToken(t, t.TempDir(), "tok"))
	for _, tc := range []struct {
		method, path string
		want         reply
	}{
		{"GET", edge.ExecutePath, reply{code: 405, body: "405 method not allowed", contentType: "text/plain", allow: "POST"}},
		{"PUT", edge.ExecutePath, reply{code: 405, body: "405 method not allowed", contentType: "text/plain", allow: "POST"}},
		{"HEAD", edge.ExecutePath, reply{code: 405, contentType: "text/plain", allow: "POST"}}, // a HEAD answer carries no body
		{"OPTIONS", edge.ExecutePath, reply{code: 405, body: "405 method not allowed", contentType: "text/plain", allow: "POST"}},
		{"POST", "/healthz", reply{code: 405, body: "405 method not allowed", contentType: "text/plain", allow: "GET"}},
		{"HEAD", "/healthz", reply{code: 405, contentType: "text/plain", allow: "GET"}},
		{"GET", "/healthz", reply{code: 200, body: "ok", contentType: "text/plain; charset=utf-8"}},
		{"GET", "/readyz", reply{code: 200, body: "ok", contentType: "text/plain; charset=utf-8"}},
		{"GET", "/metrics", reply{code: 404, body: "404 page not found", contentType: "text/plain"}},
		{"GET", "/", reply{code: 404, body: "404 page not found", contentType: "text/plain"}},
		{"POST", "/api/v1/template.exec", reply{code: 404, body: "404 page not found", contentType: "text/plain"}},
		{"POST", "/api/v1/other", reply{code: 404, body: "404 page not found", contentType: "text/plain"}},
		{"POST", "/healthz/", reply{code: 404, body: "404 page not found", contentType: "text/plain"}},
		{"POST", edge.ExecutePath + "/", reply{code: 307, location: edge.ExecutePath}},
		{"GET", "/healthz/", reply{code: 301, location: "/healthz", contentType: "text/html; charset=utf-8", body: "<a href=\"/healthz\">Moved Permanently</a>.\n\n"}},
	} {
		r := do(t, tc.method, base+tc.path, "Bearer tok", strings.NewReader(sparkBody))
		if r != tc.want {
			t.Errorf("%s %s: %+v, want %+v", tc.method, tc.path, r, tc.want)
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
