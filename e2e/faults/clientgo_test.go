package faults

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// clientset is a real client-go clientset that reaches the proxy as the
// plugin would, with a bearer token.
func clientset(t *testing.T, p *Proxy, timeout time.Duration) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: p.URL(), BearerToken: "sa-token", Timeout: timeout, TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	return cs
}

func TestClientGoBearerTokenForwarded(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	p := start(t, u, Options{}) // disabled: everything passes
	cm, err := clientset(t, p, 5*time.Second).CoreV1().ConfigMaps("ns").Get(context.Background(), "cm", metav1.GetOptions{})
	if err != nil || cm.Name != "cm" {
		t.Fatalf("Get = %v, %v", cm, err)
	}
	got := u.requests()
	if len(got) != 1 || got[0].auth != "Bearer sa-token" || got[0].path != cmPath {
		t.Errorf("upstream saw %v, want one GET %s with Bearer sa-token", got, cmPath)
	}
}

func TestClientGoServerError(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	p := start(t, u, Options{Enabled: true, ServerError: 1})
	cms := clientset(t, p, 5*time.Second).CoreV1().ConfigMaps("ns")
	for range 6 {
		_, err := cms.Get(context.Background(), "cm", metav1.GetOptions{})
		if !apierrors.IsInternalError(err) && !apierrors.IsServiceUnavailable(err) && !apierrors.IsTimeout(err) {
			t.Errorf("Get error %v (reason %q), want InternalError, ServiceUnavailable or Timeout", err, apierrors.ReasonForError(err))
		}
	}
	if got := u.requests(); len(got) != 0 {
		t.Errorf("upstream saw %v, want nothing", got)
	}
	wantCounts(t, p, map[string]int{Requests: 6, ServerError: 6})
}

func TestClientGoLostResponse(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	p := start(t, u, Options{Enabled: true, LostResponse: 1})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "ns"}}
	if _, err := clientset(t, p, 5*time.Second).CoreV1().ConfigMaps("ns").Create(context.Background(), cm, metav1.CreateOptions{}); err == nil {
		t.Fatal("Create succeeded, want a connection error")
	}
	got := u.requests()
	if len(got) != 1 || got[0].method != http.MethodPost || got[0].auth != "Bearer sa-token" {
		t.Errorf("upstream saw %v, want the one POST", got)
	}
	wantCounts(t, p, map[string]int{Requests: 1, LostResponse: 1})
}

func TestClientGoTimeout(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	p := start(t, u, Options{Enabled: true, Timeout: 1, TimeoutMax: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := clientset(t, p, 0).CoreV1().ConfigMaps("ns").Get(ctx, "cm", metav1.GetOptions{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Get error %v, want the caller's deadline", err)
	}
	if el := time.Since(began); el > 5*time.Second {
		t.Errorf("gave up after %v, want about 300ms", el)
	}
	if got := u.requests(); len(got) != 0 {
		t.Errorf("upstream saw %v, want nothing", got)
	}
}

func TestClientGoWatchCut(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	p := start(t, u, Options{Enabled: true, WatchCut: 1, WatchCutMin: 400 * time.Millisecond, WatchCutMax: 500 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := clientset(t, p, 0).CoreV1().ConfigMaps("ns").Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	defer w.Stop()
	began := time.Now()
	added := 0
	for ev := range w.ResultChan() {
		if ev.Type == "ADDED" {
			added++
		}
	}
	if el := time.Since(began); ctx.Err() != nil || el > 5*time.Second || added == 0 {
		t.Errorf("watch ended after %v with %d events (ctx %v), want events then a cut after 400-500ms", el, added, ctx.Err())
	}
	wantCounts(t, p, map[string]int{Requests: 1, WatchCut: 1})
}

// TestSameSeedSameFaults replays one sequence of requests through proxies
// seeded alike and differently.
func TestSameSeedSameFaults(t *testing.T) {
	t.Parallel()
	u := newUpstream(t)
	run := func(seed int64) []string {
		p := start(t, u, Options{
			Enabled: true, Seed: seed,
			Latency: 0.1, LatencyMin: time.Millisecond, LatencyMax: 3 * time.Millisecond,
			ServerError: 0.2, TooMany: 0.1, Reset: 0.1, LostResponse: 0.3,
		})
		var faults []string
		for i := range 40 {
			method := http.MethodGet
			if i%3 == 0 {
				method = http.MethodPost
			}
			before := p.Counts()
			_, _, _ = do(t, newClient(5*time.Second), p, method, "/api/v1/namespaces/ns/configmaps")
			after := p.Counts()
			fault := "none"
			for kind, n := range after {
				if kind != Requests && n != before[kind] {
					fault = kind
				}
			}
			faults = append(faults, method+" "+fault)
		}
		return faults
	}
	a, b, c := run(7), run(7), run(8)
	if !slices.Equal(a, b) {
		t.Errorf("seed 7 gave\n%v\nthen\n%v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 7 and 8 gave the same faults %v", a)
	}
	kinds := map[string]bool{}
	for _, f := range a {
		kinds[f] = true
	}
	if len(kinds) < 5 {
		t.Errorf("40 requests met only %v", kinds)
	}
}

// TestCloseReleasesEverything holds requests and streams open, closes the
// proxy, and checks that every client returns and no goroutine is left.
// Not parallel: it counts goroutines.
func TestCloseReleasesEverything(t *testing.T) {
	baseline := runtime.NumGoroutine()
	u := newUpstream(t)
	p, err := Start(Options{Upstream: u.URL, Enabled: true, Timeout: 1, WatchCut: 1, TimeoutMax: time.Hour, WatchCutMin: time.Hour, WatchCutMax: time.Hour})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	c := newClient(0)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			path := cmPath
			if i%2 == 0 {
				path = "/api/v1/namespaces/ns/configmaps?watch=true"
			}
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, p.URL()+path, nil)
			if resp, err := c.Do(req); err == nil {
				_, _ = resp.Body.Read(make([]byte, 1<<16))
				for err == nil {
					_, err = resp.Body.Read(make([]byte, 1<<16))
				}
				resp.Body.Close()
			}
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	for p.Counts()[Requests] < 8 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // let the streams start
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("clients still waiting after Close")
	}
	counts := p.Counts()
	if counts[Timeout] < 4 || counts[Timeout]+counts[WatchCut] != 8 {
		t.Errorf("counts %v, want every request held", counts)
	}
	c.CloseIdleConnections()
	u.Close()
	for time.Now().Before(deadline.Add(3 * time.Second)) {
		if runtime.NumGoroutine() <= baseline {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	t.Errorf("%d goroutines after Close, %d before:\n%s", runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
}
