package faults

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// seen is a request that reached the upstream.
type seen struct {
	method, path, auth, body string
}

// upstream is a TLS server standing in for the kube-apiserver: it records
// what reaches it, answers a ConfigMap to everything, and streams an event
// every 20ms to watches until the client goes away.
type upstream struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{}
	u.Server = httptest.NewUnstartedServer(http.HandlerFunc(u.serve))
	// Handshakes cut by Close are expected; keep them out of the output.
	u.Config.ErrorLog = log.New(io.Discard, "", 0)
	u.StartTLS()
	t.Cleanup(u.Close)
	return u
}

const configMapJSON = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"ns","resourceVersion":"1"}}`

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.reqs = append(u.reqs, seen{r.Method, r.URL.Path, r.Header.Get("Authorization"), string(body)})
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if !isWatch(r) {
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		_, _ = io.WriteString(w, configMapJSON)
		return
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		if _, err := fmt.Fprintf(w, `{"type":"ADDED","object":%s}`+"\n", configMapJSON); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

func (u *upstream) requests() []seen {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]seen(nil), u.reqs...)
}

// start starts a proxy in front of u with opts, closed at the end of the
// test.
func start(t *testing.T, u *upstream, opts Options) *Proxy {
	t.Helper()
	opts.Upstream = u.URL
	p, err := Start(opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

// newClient is an HTTP client without keep-alives: Go's transport retries
// an idempotent request once when a reused connection breaks, which would
// blur what a single request meets.
func newClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:   timeout,
		Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // the proxy's own certificate
	}
}

// do sends method path (body for POST) to the proxy with a bearer token.
func do(t *testing.T, c *http.Client, p *Proxy, method, path string) (*http.Response, []byte, error) {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost || method == http.MethodPut {
		body = strings.NewReader(configMapJSON)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, p.URL()+path, body)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// wantCounts checks the counts of the kinds in want (others must be zero).
func wantCounts(t *testing.T, p *Proxy, want map[string]int) {
	t.Helper()
	got := p.Counts()
	for _, kind := range []string{Requests, Latency, ServerError, TooMany, Reset, LostResponse, Timeout, WatchCut} {
		if got[kind] != want[kind] {
			t.Errorf("Counts()[%q] = %d, want %d (all: %v)", kind, got[kind], want[kind], got)
		}
	}
}

// faultLog records the faults logged by a Proxy, in order.
type faultLog struct {
	mu    sync.Mutex
	lines []string // "fault method path"
}

func (h *faultLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *faultLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *faultLog) WithGroup(string) slog.Handler            { return h }

func (h *faultLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "fault injected" {
		return nil
	}
	attrs := map[string]string{}
	r.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, attrs["fault"]+" "+attrs["method"]+" "+attrs["path"])
	return nil
}

func (h *faultLog) get() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.lines...)
}

func slogger(h *faultLog) *slog.Logger { return slog.New(h) }
