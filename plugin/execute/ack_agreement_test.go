package execute_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/acksrv"
	"github.com/sparkplug-io/sparkplug/plugin/edge"
	"github.com/sparkplug-io/sparkplug/plugin/execute"
	"github.com/sparkplug-io/sparkplug/plugin/server"
)

type alwaysReady struct{}

func (alwaysReady) Ready() error { return nil }

// servers are the sidecar's engine over a real request core (its
// workflow wf/ns/uid-1 followed, its right to write results granted) and
// the acknowledger's handler, with the same token file.
func servers(t *testing.T) (sidecar, ack http.Handler) {
	t.Helper()
	core, _ := execute.ExecuteCore(t, true)
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return server.New(core, &edge.TokenFile{Path: token}, alwaysReady{}, nil, log), acksrv.Handler(&edge.TokenFile{Path: token}, log)
}

func serve(h http.Handler, method, path, auth, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// jsonEqual says whether a and b are the same JSON value.
func jsonEqual(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

// The acknowledger answers every body of package ack's cases as the
// sidecar does: the same status, and for a 200 the same JSON, which is
// the case's reply (the acknowledgement, execute.Acknowledgement, for a
// spark template; {} for another). 400s agree in status only: the
// sidecar's decoding errors name Argo's Go types.
func TestTheAcknowledgerAnswersAsTheSidecar(t *testing.T) {
	sidecar, ack := servers(t)
	b, err := os.ReadFile("../ack/testdata/requests.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct{ Name, Body, Reply string }
	if err := json.Unmarshal(b, &cases); err != nil || len(cases) < 20 {
		t.Fatalf("../ack/testdata/requests.json: %d cases, %v", len(cases), err)
	}
	ackJSON, err := json.Marshal(execute.Acknowledgement())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			s := serve(sidecar, http.MethodPost, edge.ExecutePath, "Bearer tok", tc.Body)
			a := serve(ack, http.MethodPost, edge.ExecutePath, "Bearer tok", tc.Body)
			if s.Code != a.Code || s.Header().Get("Content-Type") != a.Header().Get("Content-Type") {
				t.Fatalf("sidecar %d %s (%s), acknowledger %d %s (%s)", s.Code, s.Body, s.Header().Get("Content-Type"), a.Code, a.Body, a.Header().Get("Content-Type"))
			}
			want := http.StatusOK
			if tc.Reply == "" {
				want = http.StatusBadRequest
			}
			if s.Code != want {
				t.Fatalf("both answer %d (sidecar %s), the case says %d", s.Code, s.Body, want)
			}
			if want == http.StatusOK && (!jsonEqual(s.Body.String(), a.Body.String()) || !jsonEqual(a.Body.String(), tc.Reply)) {
				t.Fatalf("sidecar %s, acknowledger %s, want %s", s.Body, a.Body, tc.Reply)
			}
			if tc.Reply == `{"node":{},"requeue":"0s"}` && !jsonEqual(a.Body.String(), string(ackJSON)) {
				t.Fatalf("acknowledger %s, execute.Acknowledgement() %s", a.Body, ackJSON)
			}
		})
	}
}

// Around the body, too: the token, the body's size, methods and paths
// give the same status, headers the agent may read and body.
func TestTheAcknowledgerAnswersTheEdgeAsTheSidecar(t *testing.T) {
	sidecar, ack := servers(t)
	spark := `{"workflow":{"metadata":{"name":"wf","namespace":"ns","uid":"uid-1"}},"template":{"plugin":{"spark":{}}}}`
	oversize := strings.Replace(spark, `"spark":{}`, `"spark":{"x":"`+strings.Repeat("a", edge.MaxBodyBytes)+`"}`, 1)
	for _, tc := range []struct{ name, method, path, auth, body string }{
		{"a wrong token", "POST", edge.ExecutePath, "Bearer nope", spark},
		{"no token", "POST", edge.ExecutePath, "", spark},
		{"a token without Bearer", "POST", edge.ExecutePath, "tok", spark},
		{"a wrong token and a malformed body", "POST", edge.ExecutePath, "Bearer nope", `{`},
		{"a body over MaxBodyBytes", "POST", edge.ExecutePath, "Bearer tok", oversize},
		{"GET template.execute", "GET", edge.ExecutePath, "Bearer tok", ""},
		{"PUT template.execute", "PUT", edge.ExecutePath, "Bearer tok", spark},
		{"HEAD template.execute", "HEAD", edge.ExecutePath, "Bearer tok", ""},
		{"OPTIONS template.execute", "OPTIONS", edge.ExecutePath, "Bearer tok", ""},
		{"GET /healthz", "GET", "/healthz", "", ""},
		{"POST /healthz", "POST", "/healthz", "", ""},
		{"HEAD /healthz", "HEAD", "/healthz", "", ""},
		{"GET /readyz", "GET", "/readyz", "", ""},
		{"GET /metrics (no metrics)", "GET", "/metrics", "", ""},
		{"an unknown path", "POST", "/api/v1/other", "Bearer tok", spark},
		{"the root", "GET", "/", "", ""},
		{"template.execute with a trailing slash", "POST", edge.ExecutePath + "/", "Bearer tok", spark},
		{"GET /healthz/", "GET", "/healthz/", "", ""},
		{"POST /healthz/", "POST", "/healthz/", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := serve(sidecar, tc.method, tc.path, tc.auth, tc.body)
			a := serve(ack, tc.method, tc.path, tc.auth, tc.body)
			for _, h := range []string{"Content-Type", "Allow", "Location"} {
				if s.Header().Get(h) != a.Header().Get(h) {
					t.Errorf("%s: sidecar %q, acknowledger %q", h, s.Header().Get(h), a.Header().Get(h))
				}
			}
			if s.Code != a.Code || s.Body.String() != a.Body.String() {
				t.Fatalf("sidecar %d %q, acknowledger %d %q", s.Code, s.Body, a.Code, a.Body)
			}
		})
	}
}
