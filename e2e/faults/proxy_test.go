package faults

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const cmPath = "/api/v1/namespaces/ns/configmaps/cm"

func TestNoFaultPassesThrough(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	p := start(t, u, Options{Enabled: true})
	resp, body, err := do(t, newClient(5*time.Second), p, http.MethodGet, cmPath)
	if err != nil || resp.StatusCode != http.StatusOK || string(body) != configMapJSON {
		t.Fatalf("GET = %v %q %v, want 200 and the ConfigMap", resp, body, err)
	}
	if got, want := u.requests(), []seen{{"GET", cmPath, "Bearer tok", ""}}; !slices.Equal(got, want) {
		t.Errorf("upstream saw %v, want %v", got, want)
	}
	wantCounts(t, p, map[string]int{Requests: 1})
}

func TestServerError(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	log := &faultLog{}
	p := start(t, u, Options{Enabled: true, ServerError: 1, Seed: 3, Log: slogger(log)})
	c := newClient(5 * time.Second)
	codes := map[int]bool{}
	for range 20 {
		resp, body, err := do(t, c, p, http.MethodGet, cmPath)
		if err != nil {
			t.Fatalf("GET: %v", err)
		}
		st := decodeStatus(t, body)
		if int(st.Code) != resp.StatusCode {
			t.Errorf("Status.code %d, HTTP %d", st.Code, resp.StatusCode)
		}
		switch resp.StatusCode {
		case 500, 503, 504:
			codes[resp.StatusCode] = true
		default:
			t.Errorf("status %d, want 500, 503 or 504", resp.StatusCode)
		}
	}
	if len(codes) != 3 {
		t.Errorf("20 server errors gave only %v", codes)
	}
	if got := u.requests(); len(got) != 0 {
		t.Errorf("upstream saw %v, want nothing", got)
	}
	wantCounts(t, p, map[string]int{Requests: 20, ServerError: 20})
	if lines := log.get(); len(lines) != 20 || lines[0] != "server-error GET "+cmPath {
		t.Errorf("log lines %q, want 20 of %q", lines, "server-error GET "+cmPath)
	}
}

func TestTooMany(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	p := start(t, u, Options{Enabled: true, TooMany: 1})
	resp, body, err := do(t, newClient(5*time.Second), p, http.MethodPost, "/api/v1/namespaces/ns/configmaps")
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("got %d Retry-After %q, want 429 Retry-After 1", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if st := decodeStatus(t, body); st.Reason != metav1.StatusReasonTooManyRequests || st.Details == nil || st.Details.RetryAfterSeconds != 1 {
		t.Errorf("Status %+v, want reason TooManyRequests, retryAfterSeconds 1", st)
	}
	if got := u.requests(); len(got) != 0 {
		t.Errorf("upstream saw %v, want nothing", got)
	}
	wantCounts(t, p, map[string]int{Requests: 1, TooMany: 1})
}

func TestReset(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	p := start(t, u, Options{Enabled: true, Reset: 1})
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		if resp, _, err := do(t, newClient(5*time.Second), p, method, "/api/v1/namespaces/ns/configmaps"); err == nil {
			t.Errorf("%s answered %d, want a connection error", method, resp.StatusCode)
		}
	}
	if got := u.requests(); len(got) != 0 {
		t.Errorf("upstream saw %v, want nothing", got)
	}
	wantCounts(t, p, map[string]int{Requests: 2, Reset: 2})
}

func TestLostResponse(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	p := start(t, u, Options{Enabled: true, LostResponse: 1})
	c := newClient(5 * time.Second)
	const list = "/api/v1/namespaces/ns/configmaps"
	if resp, _, err := do(t, c, p, http.MethodPost, list); err == nil {
		t.Errorf("POST answered %d, want a connection error", resp.StatusCode)
	} else if !isReset(err) {
		t.Logf("POST error (not a reset): %v", err)
	}
	// Reads never lose their answer.
	if resp, _, err := do(t, c, p, http.MethodGet, list); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET = %v %v, want 200", resp, err)
	}
	want := []seen{{"POST", list, "Bearer tok", configMapJSON}, {"GET", list, "Bearer tok", ""}}
	if got := u.requests(); !slices.Equal(got, want) {
		t.Errorf("upstream saw %v, want %v", got, want)
	}
	wantCounts(t, p, map[string]int{Requests: 2, LostResponse: 1})
}

func TestTimeoutUntilClientGivesUp(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	p := start(t, u, Options{Enabled: true, Timeout: 1, TimeoutMax: time.Minute})
	began := time.Now()
	_, _, err := do(t, newClient(300*time.Millisecond), p, http.MethodPost, "/api/v1/namespaces/ns/configmaps")
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("POST error %v, want the client's timeout", err)
	}
	if el := time.Since(began); el < 300*time.Millisecond || el > 5*time.Second {
		t.Errorf("gave up after %v, want about 300ms", el)
	}
	if got := u.requests(); len(got) != 0 {
		t.Errorf("upstream saw %v, want nothing", got)
	}
	wantCounts(t, p, map[string]int{Requests: 1, Timeout: 1})
}

func TestTimeoutCap(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	p := start(t, u, Options{Enabled: true, Timeout: 1, TimeoutMax: 200 * time.Millisecond})
	began := time.Now()
	if resp, _, err := do(t, newClient(10*time.Second), p, http.MethodGet, cmPath); err == nil {
		t.Errorf("GET answered %d, want the connection dropped", resp.StatusCode)
	}
	if el := time.Since(began); el < 200*time.Millisecond || el > 5*time.Second {
		t.Errorf("dropped after %v, want about 200ms", el)
	}
	if got := u.requests(); len(got) != 0 {
		t.Errorf("upstream saw %v, want nothing", got)
	}
}

func TestLatency(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	p := start(t, u, Options{Enabled: true, Latency: 1, LatencyMin: 100 * time.Millisecond, LatencyMax: 150 * time.Millisecond})
	for range 3 {
		began := time.Now()
		resp, _, err := do(t, newClient(5*time.Second), p, http.MethodGet, cmPath)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET = %v %v, want 200", resp, err)
		}
		if el := time.Since(began); el < 100*time.Millisecond {
			t.Errorf("answered after %v, want at least 100ms", el)
		}
	}
	if got := len(u.requests()); got != 3 {
		t.Errorf("upstream saw %d requests, want 3", got)
	}
	wantCounts(t, p, map[string]int{Requests: 3, Latency: 3})
}

func TestWatchCut(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	p := start(t, u, Options{Enabled: true, WatchCut: 1, WatchCutMin: 200 * time.Millisecond, WatchCutMax: 300 * time.Millisecond})
	c := newClient(0)
	// Not a watch: untouched.
	if resp, _, err := do(t, c, p, http.MethodGet, cmPath); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET = %v %v, want 200", resp, err)
	}
	for _, q := range []string{"?watch=true", "?watch=1"} {
		began := time.Now()
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, p.URL()+"/api/v1/namespaces/ns/configmaps"+q, nil)
		resp, err := c.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("watch%s = %v %v, want 200", q, resp, err)
		}
		events := 0
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			events++
		}
		resp.Body.Close()
		el := time.Since(began)
		if events < 2 || el < 200*time.Millisecond || el > 5*time.Second {
			t.Errorf("watch%s ended after %v and %d events (%v), want events streamed and a cut after 200-300ms", q, el, events, sc.Err())
		}
		if sc.Err() == nil {
			t.Errorf("watch%s ended cleanly after %v and %d events, want it cut", q, el, events)
		}
	}
	wantCounts(t, p, map[string]int{Requests: 3, WatchCut: 2})
}

func TestFilter(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	p := start(t, u, Options{Enabled: true, ServerError: 1, Filter: func(r *http.Request) bool {
		return strings.Contains(r.URL.Path, "/configmaps")
	}})
	c := newClient(5 * time.Second)
	if resp, _, err := do(t, c, p, http.MethodGet, "/api/v1/namespaces/ns/pods/x"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("filtered-out GET = %v %v, want 200", resp, err)
	}
	if resp, _, err := do(t, c, p, http.MethodGet, cmPath); err != nil || resp.StatusCode < 500 {
		t.Errorf("filtered-in GET = %v %v, want 5xx", resp, err)
	}
	wantCounts(t, p, map[string]int{Requests: 2, ServerError: 1})
}

func TestSetEnabled(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	p := start(t, u, Options{ServerError: 1}) // starts disabled
	c := newClient(5 * time.Second)
	status := func() int {
		resp, _, err := do(t, c, p, http.MethodGet, cmPath)
		if err != nil {
			t.Fatalf("GET: %v", err)
		}
		return resp.StatusCode
	}
	if got := status(); got != http.StatusOK {
		t.Errorf("disabled: %d, want 200", got)
	}
	p.SetEnabled(true)
	if got := status(); got < 500 {
		t.Errorf("enabled: %d, want 5xx", got)
	}
	p.SetEnabled(false)
	if got := status(); got != http.StatusOK {
		t.Errorf("disabled again: %d, want 200", got)
	}
	wantCounts(t, p, map[string]int{Requests: 3, ServerError: 1})
}

func TestStartRejectsBadOptions(t *testing.T) {
	t.Parallel()
	for name, o := range map[string]Options{
		"no upstream":        {},
		"not a URL":          {Upstream: "127.0.0.1:6443"},
		"rate above 1":       {Upstream: "https://127.0.0.1:1", Reset: 1.5},
		"negative rate":      {Upstream: "https://127.0.0.1:1", TooMany: -0.1},
		"latency no max":     {Upstream: "https://127.0.0.1:1", Latency: 0.5},
		"latency inverted":   {Upstream: "https://127.0.0.1:1", Latency: 0.5, LatencyMin: 2 * time.Second, LatencyMax: time.Second},
		"watch cut inverted": {Upstream: "https://127.0.0.1:1", WatchCutMin: 2 * time.Second, WatchCutMax: time.Second},
	} {
		if p, err := Start(o); err == nil {
			_ = p.Close()
			t.Errorf("%s: Start succeeded, want an error", name)
		}
	}
}

func decodeStatus(t *testing.T, body []byte) metav1.Status {
	t.Helper()
	var st metav1.Status
	if err := json.Unmarshal(body, &st); err != nil || st.Kind != "Status" || st.APIVersion != "v1" || st.Status != metav1.StatusFailure {
		t.Errorf("body %q is not a failure Status (%v)", body, err)
	}
	return st
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset by peer")
}
