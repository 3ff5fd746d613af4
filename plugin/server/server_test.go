package server

import (
	"context"
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

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"

	"github.com/sparkplug-io/sparkplug/plugin/daemon"
	"github.com/sparkplug-io/sparkplug/plugin/edge"
	"github.com/sparkplug-io/sparkplug/plugin/edge/edgetest"
	"github.com/sparkplug-io/sparkplug/plugin/metrics"
	"github.com/sparkplug-io/sparkplug/plugin/request"
)

type fakeCore struct {
	reply executor.ExecuteTemplateReply
	err   error
	panic bool
	calls int
	ctx   context.Context
	args  executor.ExecuteTemplateArgs
}

func (f *fakeCore) Execute(ctx context.Context, args executor.ExecuteTemplateArgs) (executor.ExecuteTemplateReply, error) {
	f.calls++
	f.ctx, f.args = ctx, args
	if f.panic {
		panic("boom")
	}
	return f.reply, f.err
}

type readyFunc func() error

func (r readyFunc) Ready() error { return r() }

func tokenFile(t *testing.T, content string) *edge.TokenFile {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte(content), 0o440); err != nil {
		t.Fatal(err)
	}
	return &edge.TokenFile{Path: p}
}

const validBody = `{"workflow":{"metadata":{"name":"wf","namespace":"ns","uid":"u"}},"template":{"name":"t","plugin":{"spark":{}}}}`

func TestExecute(t *testing.T) {
	running := executor.ExecuteTemplateReply{Node: &wfv1.NodeResult{Phase: wfv1.NodeRunning, Message: "RUNNING"}}
	cases := []struct {
		name       string
		auth       string
		body       string
		core       *fakeCore
		wantStatus int
		wantBody   string // substring
		wantCalls  int
	}{
		{"no token", "", validBody, &fakeCore{reply: running}, 403, "bearer token", 0},
		{"wrong token", "Bearer nope", validBody, &fakeCore{reply: running}, 403, "bearer token", 0},
		{"wrong scheme", "Basic secret-token", validBody, &fakeCore{reply: running}, 403, "bearer token", 0},
		{"token with a prefix of the real one", "Bearer secret", validBody, &fakeCore{reply: running}, 403, "bearer token", 0},
		{"garbage body", "Bearer secret-token", "{not json", &fakeCore{reply: running}, 400, "not a template.execute request", 0},
		{"not ours", "Bearer secret-token", validBody, &fakeCore{}, 200, "{}", 1},
		{"running", "Bearer secret-token", validBody, &fakeCore{reply: running}, 200, `"phase":"Running"`, 1},
		{"bad request from core", "Bearer secret-token", validBody, &fakeCore{err: fmt.Errorf("%w: no workflow", request.ErrBadRequest)}, 400, "no workflow", 1},
		{"cache not ready", "Bearer secret-token", validBody, &fakeCore{err: errors.New("wf: not ready")}, 503, "not ready", 1},
		{"transient", "Bearer secret-token", validBody, &fakeCore{err: errors.New("etcd is slow")}, 503, "etcd is slow", 1},
		{"panic", "Bearer secret-token", validBody, &fakeCore{panic: true}, 500, "internal error", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := New(tc.core, tokenFile(t, "secret-token\n"), readyFunc(func() error { return nil }), nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
			req := httptest.NewRequest(http.MethodPost, edge.ExecutePath, strings.NewReader(tc.body))
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if rec.Code != tc.wantStatus {
				t.Fatalf("status %d, want %d; body %s", rec.Code, tc.wantStatus, rec.Body)
			}
			if !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Fatalf("body %q does not contain %q", rec.Body, tc.wantBody)
			}
			if tc.core.calls != tc.wantCalls {
				t.Fatalf("core called %d times, want %d", tc.core.calls, tc.wantCalls)
			}
			if ct := rec.Header().Get("Content-Type"); ct != edge.JSONType {
				t.Fatalf("content type %q, want %q", ct, edge.JSONType)
			}
			if tc.wantCalls > 0 && tc.core.ctx == nil {
				t.Fatal("core got no context")
			}
			if tc.wantCalls > 0 && (tc.core.args.Workflow == nil || tc.core.args.Workflow.ObjectMeta.Name != "wf" || tc.core.args.Template == nil || tc.core.args.Template.Name != "t") {
				t.Fatalf("core got %+v, want the request decoded", tc.core.args)
			}
		})
	}
}

func TestNotOursIsExactlyEmptyObject(t *testing.T) {
	e := New(&fakeCore{}, tokenFile(t, "tok"), readyFunc(func() error { return nil }), nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	req := httptest.NewRequest(http.MethodPost, edge.ExecutePath, strings.NewReader(validBody))
	req.Header.Set("Authorization", "Bearer tok")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if got := strings.TrimSpace(rec.Body.String()); got != "{}" {
		t.Fatalf("body %q, want {}", got)
	}
}

// Methods and paths are gin's answers (edgetest.Routes, the table the
// acknowledger's router is held to as well).
func TestMethodsAndPaths(t *testing.T) {
	e := New(&fakeCore{}, tokenFile(t, "tok"), readyFunc(func() error { return nil }), nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, tc := range edgetest.Routes() {
		req := httptest.NewRequest(tc.Method, tc.Path, strings.NewReader(validBody))
		req.Header.Set("Authorization", "Bearer tok")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		got := edgetest.Reply{Code: rec.Code, Body: rec.Body.String(), ContentType: rec.Header().Get("Content-Type"), Allow: rec.Header().Get("Allow"), Location: rec.Header().Get("Location")}
		if got != tc.Want {
			t.Errorf("%s %s: %+v, want %+v", tc.Method, tc.Path, got, tc.Want)
		}
	}
}

func TestMetricsCountCalls(t *testing.T) {
	m := metrics.New()
	running := executor.ExecuteTemplateReply{Node: &wfv1.NodeResult{Phase: wfv1.NodeRunning}}
	e := New(&fakeCore{reply: running}, tokenFile(t, "tok"), readyFunc(func() error { return nil }), m, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, auth := range []string{"Bearer tok", "Bearer tok", "Bearer wrong"} {
		req := httptest.NewRequest(http.MethodPost, edge.ExecutePath, strings.NewReader(validBody))
		req.Header.Set("Authorization", auth)
		e.ServeHTTP(httptest.NewRecorder(), req)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{
		`sparkplug_template_execute_requests_total{code="200",phase="Running"} 2`,
		`sparkplug_template_execute_requests_total{code="403",phase=""} 1`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestReadyz(t *testing.T) {
	var r daemon.Ready
	e := New(&fakeCore{}, tokenFile(t, "tok"), &r, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	get := func(path string) int {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code
	}
	if code := get("/readyz"); code != 503 {
		t.Fatalf("readyz before Set: %d, want 503", code)
	}
	if code := get("/healthz"); code != 200 {
		t.Fatalf("healthz: %d, want 200", code)
	}
	r.Set(errors.New("api server unreachable"))
	if code := get("/readyz"); code != 503 {
		t.Fatalf("readyz after failure: %d, want 503", code)
	}
	r.Set(nil)
	if code := get("/readyz"); code != 200 {
		t.Fatalf("readyz when ready: %d, want 200", code)
	}
}
