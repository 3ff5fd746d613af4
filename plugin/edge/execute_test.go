package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func tokenFile(t *testing.T, content string) *TokenFile {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(content), 0o440); err != nil {
		t.Fatal(err)
	}
	return &TokenFile{Path: p}
}

// fakeAnswer reads the whole body, remembers it, and returns reply and
// err.
type fakeAnswer struct {
	reply any
	err   error
	calls int
	body  string
	ctx   context.Context
}

func (f *fakeAnswer) answer(ctx context.Context, body io.Reader) (any, error) {
	f.calls++
	f.ctx = ctx
	b, err := io.ReadAll(body)
	f.body = string(b)
	if err != nil {
		return nil, NotARequest(err)
	}
	return f.reply, f.err
}

// upper stands in for package redact's Value: it shows which words went
// through it.
func upper(s string) string { return strings.ToUpper(s) }

func post(h http.Handler, auth, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, ExecutePath, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Every answer, whatever its status, is JSON of JSONType: the reply as
// the answer gave it, an error as {"error": words}, the answer's words
// through Redact and Execute's own as they are. The token is checked
// before the body is read (a wrong token with a malformed body is 403),
// and the answer gets the request's context.
func TestExecuteAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, auth, body string
		answer           fakeAnswer
		code             int
		want             string
		calls            int
	}{
		{"a reply", "Bearer tok", "req", fakeAnswer{reply: map[string]any{"node": map[string]any{}, "requeue": "0s"}}, 200, `{"node":{},"requeue":"0s"}`, 1},
		{"raw JSON as it is", "Bearer tok", "req", fakeAnswer{reply: json.RawMessage(`{"node":{},"requeue":"0s"}`)}, 200, `{"node":{},"requeue":"0s"}`, 1},
		{"an empty reply", "Bearer tok", "req", fakeAnswer{reply: struct{}{}}, 200, `{}`, 1},
		{"a bad request", "Bearer tok", "req", fakeAnswer{err: BadRequest(errors.New("no template"))}, 400, `{"error":"NO TEMPLATE"}`, 1},
		{"an undecodable body", "Bearer tok", "req", fakeAnswer{err: NotARequest(errors.New("unexpected EOF"))}, 400, `{"error":"REQUEST BODY IS NOT A TEMPLATE.EXECUTE REQUEST: UNEXPECTED EOF"}`, 1},
		{"a bad request wrapped", "Bearer tok", "req", fakeAnswer{err: fmt.Errorf("decoding: %w", BadRequest(errors.New("x")))}, 400, `{"error":"DECODING: X"}`, 1},
		{"another error", "Bearer tok", "req", fakeAnswer{err: errors.New("cache not ready")}, 503, `{"error":"CACHE NOT READY"}`, 1},
		{"a reply that does not encode", "Bearer tok", "req", fakeAnswer{reply: func() {}}, 500, `{"error":"the plugin cannot encode its reply; see its log"}`, 1},
		{"no token", "", "req", fakeAnswer{}, 403, `{"error":"invalid or missing bearer token"}`, 0},
		{"a wrong token", "Bearer nope", "req", fakeAnswer{}, 403, `{"error":"invalid or missing bearer token"}`, 0},
		{"a token without Bearer", "tok", "req", fakeAnswer{}, 403, `{"error":"invalid or missing bearer token"}`, 0},
		{"a lower-case scheme", "bearer tok", "req", fakeAnswer{}, 403, `{"error":"invalid or missing bearer token"}`, 0},
		{"another scheme", "Basic tok", "req", fakeAnswer{}, 403, `{"error":"invalid or missing bearer token"}`, 0},
		{"an empty bearer", "Bearer ", "req", fakeAnswer{}, 403, `{"error":"invalid or missing bearer token"}`, 0},
		{"a prefix of the token", "Bearer to", "req", fakeAnswer{}, 403, `{"error":"invalid or missing bearer token"}`, 0},
		{"a wrong token and a malformed body", "Bearer nope", "{", fakeAnswer{}, 403, `{"error":"invalid or missing bearer token"}`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.answer
			h := &Execute{Token: tokenFile(t, "tok\n"), Answer: f.answer, Redact: upper, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			rec := post(h, tc.auth, tc.body)
			if rec.Code != tc.code || rec.Body.String() != tc.want || rec.Header().Get("Content-Type") != JSONType {
				t.Fatalf("%d %s (%s), want %d %s (%s)", rec.Code, rec.Body, rec.Header().Get("Content-Type"), tc.code, tc.want, JSONType)
			}
			if f.calls != tc.calls {
				t.Fatalf("the answer was called %d times, want %d", f.calls, tc.calls)
			}
			if f.calls > 0 && (f.body != tc.body || f.ctx == nil) {
				t.Fatalf("the answer read %q (context %v), want %q and the request's context", f.body, f.ctx, tc.body)
			}
		})
	}
}

// Without Redact the answer's words are sent as they are.
func TestExecuteWithoutRedact(t *testing.T) {
	f := fakeAnswer{err: BadRequest(errors.New("no template"))}
	h := &Execute{Token: tokenFile(t, "tok"), Answer: f.answer, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if rec := post(h, "Bearer tok", "req"); rec.Code != 400 || rec.Body.String() != `{"error":"no template"}` {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

// The body is bounded at MaxBodyBytes: one of exactly that size is read
// whole; reading one byte more is 413 naming the cap, whether the answer
// returns the read's error as it is or as a bad request.
func TestExecuteBoundsTheBody(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, size := range []int{MaxBodyBytes, MaxBodyBytes + 1} {
		for _, wrap := range []func(error) error{func(err error) error { return err }, NotARequest} {
			var read int
			answer := func(_ context.Context, body io.Reader) (any, error) {
				n, err := io.Copy(io.Discard, body)
				read = int(n)
				if err != nil {
					return nil, wrap(err)
				}
				return struct{}{}, nil
			}
			h := &Execute{Token: tokenFile(t, "tok"), Answer: answer, Log: log}
			rec := post(h, "Bearer tok", strings.Repeat("a", size))
			switch {
			case size == MaxBodyBytes && (rec.Code != 200 || read != size):
				t.Fatalf("a body of MaxBodyBytes: %d %s, %d bytes read; want 200 and all of it", rec.Code, rec.Body, read)
			case size > MaxBodyBytes && (rec.Code != 413 || rec.Body.String() != `{"error":"request body over 4194304 bytes"}` || rec.Header().Get("Content-Type") != JSONType):
				t.Fatalf("a body of MaxBodyBytes+1: %d %s (%s), want 413 naming the cap", rec.Code, rec.Body, rec.Header().Get("Content-Type"))
			}
		}
	}
}

// A token file that cannot be read is 503, which the agent retries, and
// is logged without the token; once written, it is read, and read again
// when it changes.
func TestExecuteReadsTheTokenFile(t *testing.T) {
	var log bytes.Buffer
	dir := t.TempDir()
	token := &TokenFile{Path: filepath.Join(dir, "token")}
	f := fakeAnswer{reply: struct{}{}}
	h := &Execute{Token: token, Answer: f.answer, Redact: upper, Log: slog.New(slog.NewTextHandler(&log, nil))}
	if rec := post(h, "Bearer first", "req"); rec.Code != 503 || rec.Body.String() != `{"error":"the plugin cannot read its token file"}` || rec.Header().Get("Content-Type") != JSONType {
		t.Fatalf("no token file: %d %s (%s), want 503", rec.Code, rec.Body, rec.Header().Get("Content-Type"))
	}
	if !strings.Contains(log.String(), "cannot read the plugin token") || f.calls != 0 {
		t.Fatalf("log %q, answer called %d times; want the unreadable file logged, no call", log.String(), f.calls)
	}
	for _, step := range []struct{ file, bearer string }{{"first", "first"}, {"second-token", "second-token"}} {
		if err := os.WriteFile(token.Path, []byte(step.file+"\n"), 0o440); err != nil {
			t.Fatal(err)
		}
		if rec := post(h, "Bearer "+step.bearer, "req"); rec.Code != 200 {
			t.Fatalf("token %s: %d %s, want 200", step.bearer, rec.Code, rec.Body)
		}
	}
	if rec := post(h, "Bearer first", "req"); rec.Code != 403 {
		t.Fatalf("the old token after the file changed: %d %s, want 403", rec.Code, rec.Body)
	}
	if strings.Contains(log.String(), "second-token") {
		t.Fatalf("the log shows the token:\n%s", log.String())
	}
}

func TestTokenFileIsReReadWhenItChanges(t *testing.T) {
	tf := tokenFile(t, "first")
	if ok, err := tf.Matches("first"); err != nil || !ok {
		t.Fatalf("first token: ok=%v err=%v", ok, err)
	}
	if err := os.WriteFile(tf.Path, []byte("second-token"), 0o440); err != nil {
		t.Fatal(err)
	}
	if ok, _ := tf.Matches("first"); ok {
		t.Fatal("old token still accepted after the file changed")
	}
	if ok, err := tf.Matches("second-token"); err != nil || !ok {
		t.Fatalf("new token: ok=%v err=%v", ok, err)
	}
}

func TestTokenFileMissingOrEmptyIsAnError(t *testing.T) {
	missing := &TokenFile{Path: filepath.Join(t.TempDir(), "absent")}
	if _, err := missing.Matches("x"); err == nil {
		t.Fatal("missing token file: no error")
	}
	empty := tokenFile(t, "  \n")
	if ok, err := empty.Matches(""); err == nil || ok {
		t.Fatalf("empty token file: ok=%v err=%v; want an error", ok, err)
	}
}
