package sparkapi

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// clock is a settable time for the Tracker's refresh and expiry.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newTestTracker(c *Client, o TrackerOptions) (*Tracker, *clock) {
	tr := NewTracker(c, o)
	clk := &clock{t: time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)}
	tr.now = clk.now
	return tr, clk
}

// getFast is Get, for the tests that are not about waiting: that Get
// never waits on a request is TestTrackerNeverWaitsOnAHangingDriver's, which
// proves it by what the driver saw, not by a clock (a loaded machine
// delays any call).
func getFast(t *testing.T, tr *Tracker, key, base, app string) (string, bool) {
	t.Helper()
	return tr.Get(key, base, app)
}

func TestTrackerShowsProgressFromTheNextGet(t *testing.T) {
	s, srv := newStandIn(t, testApp, "jobs_one_running.json")
	tr, _ := newTestTracker(nil, TrackerOptions{})
	if text, ok := getFast(t, tr, "driver-uid", srv.URL, testApp); text != "" || ok {
		t.Errorf("first Get = %q, %v, want \"\", false", text, ok)
	}
	tr.wait()
	if text, ok := getFast(t, tr, "driver-uid", srv.URL, testApp); text != "stage 4/7, 1,200/3,000 tasks" || !ok {
		t.Errorf("second Get = %q, %v", text, ok)
	}
	tr.wait()
	if n := s.requests.Load(); n != 1 {
		t.Errorf("%d requests within the refresh interval, want 1", n)
	}
}

func TestTrackerNoRunningJob(t *testing.T) {
	_, srv := newStandIn(t, testApp, "jobs_none_running.json")
	tr, _ := newTestTracker(nil, TrackerOptions{})
	tr.Get("k", srv.URL, testApp)
	tr.wait()
	if text, ok := tr.Get("k", srv.URL, testApp); text != "" || !ok {
		t.Errorf("Get = %q, %v, want \"\", true (Spark answered, no job runs)", text, ok)
	}
}

// A driver that never answers: every Get returns at once, the refresh
// ends by the client's timeout, and the text stays "".
func TestTrackerNeverWaitsOnAHangingDriver(t *testing.T) {
	s, srv := newStandIn(t, testApp, "jobs_one_running.json")
	hold := make(chan struct{}) // never closed: only the timeout ends a request
	s.set(func(s *standIn) { s.hold = hold })
	const timeout = 3 * time.Second
	tr, clk := newTestTracker(NewClient(timeout), TrackerOptions{Refresh: time.Second})
	// While the one request hangs (until the client's timeout), every Get
	// returns without it: a Get that waited would come back only once the
	// request had ended.
	for range 20 {
		text, _ := getFast(t, tr, "k", srv.URL, testApp)
		if text != "" {
			t.Fatalf("Get = %q from a hanging driver", text)
		}
		if s.requests.Load() == 1 && s.inFlight.Load() == 0 {
			t.Fatal("Get returned after its driver's request had ended: it waited on it")
		}
	}
	waitFor(t, func() bool { return s.inFlight.Load() == 1 })
	if n := s.requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1 in flight", n)
	}
	start := time.Now()
	tr.wait()
	if took := time.Since(start); took > timeout+10*time.Second {
		t.Errorf("the refresh took %s, far beyond the %s timeout", took, timeout)
	}
	text, ok := getFast(t, tr, "k", srv.URL, testApp)
	if text != "" || ok {
		t.Errorf("after the timeout Get = %q, %v, want \"\", false", text, ok)
	}
	// A failure counts as a refresh: the next try waits for the interval.
	if n := s.requests.Load(); n != 1 {
		t.Errorf("%d requests right after a failed refresh, want 1", n)
	}
	clk.add(time.Second)
	getFast(t, tr, "k", srv.URL, testApp)
	tr.wait()
	if n := s.requests.Load(); n != 2 {
		t.Errorf("%d requests after the interval, want 2", n)
	}
}

func TestTrackerOneRefreshPerKey(t *testing.T) {
	s, srv := newStandIn(t, testApp, "jobs_one_running.json")
	hold := make(chan struct{})
	s.set(func(s *standIn) { s.hold = hold })
	tr, clk := newTestTracker(NewClient(5*time.Second), TrackerOptions{Refresh: time.Nanosecond})
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				getFast(t, tr, "k", srv.URL, testApp)
				clk.add(time.Millisecond)
			}
		}()
	}
	wg.Wait()
	waitFor(t, func() bool { return s.inFlight.Load() == 1 })
	time.Sleep(20 * time.Millisecond) // room for a wrongly started second request to land
	if n := s.requests.Load(); n != 1 {
		t.Errorf("%d requests for one key while one is in flight, want 1", n)
	}
	close(hold)
	tr.wait()
	clk.add(time.Millisecond)
	if text, _ := getFast(t, tr, "k", srv.URL, testApp); text == "" {
		t.Error("no text after the refresh answered")
	}
	tr.wait()
	if n := s.requests.Load(); n != 2 {
		t.Errorf("%d requests, want a second once the first ended", n)
	}
}

func TestTrackerBoundsRefreshesInFlight(t *testing.T) {
	s, srv := newStandIn(t, testApp, "jobs_one_running.json")
	hold := make(chan struct{})
	s.set(func(s *standIn) { s.hold = hold })
	tr, _ := newTestTracker(NewClient(5*time.Second), TrackerOptions{MaxRefreshes: 4})
	for i := range 20 {
		getFast(t, tr, fmt.Sprint("driver-", i), srv.URL, testApp)
	}
	waitFor(t, func() bool { return s.inFlight.Load() == 4 })
	// Asking again while the slots are taken starts nothing.
	for i := range 20 {
		getFast(t, tr, fmt.Sprint("driver-", i), srv.URL, testApp)
	}
	time.Sleep(50 * time.Millisecond)
	if n := s.requests.Load(); n != 4 {
		t.Errorf("%d requests with 4 slots, want 4", n)
	}
	close(hold)
	tr.wait()
	// Slots free again: the rest go through, still at most 4 at a time.
	for i := range 20 {
		getFast(t, tr, fmt.Sprint("driver-", i), srv.URL, testApp)
		tr.wait()
	}
	if n := s.requests.Load(); n != 20 {
		t.Errorf("%d requests in all, want one per key (20)", n)
	}
	if m := s.maxInFlight.Load(); m != 4 {
		t.Errorf("at most %d in flight, want 4", m)
	}
}

func TestTrackerFailedRefreshClearsText(t *testing.T) {
	s, srv := newStandIn(t, testApp, "jobs_one_running.json")
	tr, clk := newTestTracker(nil, TrackerOptions{Refresh: time.Second})
	tr.Get("k", srv.URL, testApp)
	tr.wait()
	if text, _ := tr.Get("k", srv.URL, testApp); text == "" {
		t.Fatal("no text from a driver that answers")
	}
	s.set(func(s *standIn) { s.handler = serve(http.StatusInternalServerError, "text/plain", "") })
	clk.add(time.Second)
	tr.Get("k", srv.URL, testApp) // still the old text; starts a refresh
	tr.wait()
	if text, ok := tr.Get("k", srv.URL, testApp); text != "" || ok {
		t.Errorf("after a failed refresh Get = %q, %v, want \"\", false", text, ok)
	}
}

// The same key with another driver behind it (another appID or URL)
// starts afresh, and a refresh of the old driver is not believed.
func TestTrackerNewDriverUnderTheSameKey(t *testing.T) {
	old, oldSrv := newStandIn(t, testApp, "jobs_one_running.json")
	_, newSrv := newStandIn(t, "spark-new", "jobs_several_running.json")
	tr, clk := newTestTracker(NewClient(5*time.Second), TrackerOptions{Refresh: time.Second})
	tr.Get("k", oldSrv.URL, testApp)
	tr.wait()
	if text, _ := tr.Get("k", oldSrv.URL, testApp); text != "stage 4/7, 1,200/3,000 tasks" {
		t.Fatalf("old driver: %q", text)
	}
	hold := make(chan struct{})
	old.set(func(s *standIn) { s.hold = hold })
	clk.add(time.Second)
	tr.Get("k", oldSrv.URL, testApp) // a refresh of the old driver, held
	waitFor(t, func() bool { return old.inFlight.Load() == 1 })
	if text, ok := getFast(t, tr, "k", newSrv.URL, "spark-new"); text != "" || ok {
		t.Errorf("new driver's first Get = %q, %v, want \"\", false", text, ok)
	}
	close(hold)
	tr.wait()
	if text, _ := tr.Get("k", newSrv.URL, "spark-new"); text != "" {
		t.Errorf("the old driver's answer was kept for the new one: %q", text)
	}
	tr.wait()
	if text, _ := tr.Get("k", newSrv.URL, "spark-new"); text != "stage 2/2, 10,250/12,500 tasks" {
		t.Errorf("new driver: %q", text)
	}
	tr.wait()
}

func TestTrackerForget(t *testing.T) {
	s, srv := newStandIn(t, testApp, "jobs_one_running.json")
	tr, _ := newTestTracker(NewClient(5*time.Second), TrackerOptions{Refresh: time.Nanosecond})
	tr.Get("k", srv.URL, testApp)
	tr.wait()
	tr.Forget("k")
	if tr.size() != 0 {
		t.Fatalf("%d entries after Forget", tr.size())
	}
	if text, ok := tr.Get("k", srv.URL, testApp); text != "" || ok {
		t.Errorf("Get after Forget = %q, %v, want a fresh start", text, ok)
	}
	tr.wait()

	// Forgotten while its refresh runs: the answer is thrown away, and
	// asking again meanwhile starts no second request.
	hold := make(chan struct{})
	s.set(func(s *standIn) { s.hold = hold })
	tr.Forget("k")
	tr.Get("k", srv.URL, testApp)
	waitFor(t, func() bool { return s.inFlight.Load() == 1 })
	before := s.requests.Load()
	tr.Forget("k")
	tr.Get("k", srv.URL, testApp)
	tr.Forget("k")
	if n := s.requests.Load(); n != before {
		t.Errorf("a second request for a key whose refresh is in flight")
	}
	close(hold)
	tr.wait()
	if tr.size() != 0 {
		t.Errorf("a forgotten key's answer was recorded")
	}
}

func TestTrackerEvictsLeastRecentlyAsked(t *testing.T) {
	_, srv := newStandIn(t, testApp, "jobs_one_running.json")
	tr, _ := newTestTracker(nil, TrackerOptions{MaxEntries: 3})
	for _, k := range []string{"a", "b", "c", "a", "d"} {
		tr.Get(k, srv.URL, testApp)
		tr.wait()
	}
	if n := tr.size(); n != 3 {
		t.Errorf("%d entries, want the cap 3", n)
	}
	for k, kept := range map[string]bool{"a": true, "b": false, "c": true, "d": true} {
		tr.mu.Lock()
		_, found := tr.entries[k]
		tr.mu.Unlock()
		if found != kept {
			t.Errorf("entry %q kept = %v, want %v", k, found, kept)
		}
	}
	// Many keys never grow the tracker past its cap.
	for i := range 100 {
		tr.Get(fmt.Sprint("x", i), srv.URL, testApp)
	}
	tr.wait()
	if n := tr.size(); n != 3 {
		t.Errorf("%d entries after 100 more keys, want 3", n)
	}
}

func TestTrackerExpiresEntriesNotAskedFor(t *testing.T) {
	_, srv := newStandIn(t, testApp, "jobs_one_running.json")
	tr, clk := newTestTracker(nil, TrackerOptions{Expire: time.Minute, Refresh: time.Hour})
	tr.Get("old", srv.URL, testApp)
	tr.wait()
	clk.add(30 * time.Second)
	tr.Get("recent", srv.URL, testApp)
	tr.wait()
	clk.add(31 * time.Second) // "old" last asked 61s ago, "recent" 31s ago
	tr.Get("new", srv.URL, testApp)
	tr.wait()
	tr.mu.Lock()
	_, oldKept := tr.entries["old"]
	_, recentKept := tr.entries["recent"]
	tr.mu.Unlock()
	if oldKept || !recentKept {
		t.Errorf("kept old=%v recent=%v, want only recent (and new)", oldKept, recentKept)
	}
	if n := tr.size(); n != 2 {
		t.Errorf("%d entries, want 2", n)
	}
}

func TestNewTrackerDefaults(t *testing.T) {
	tr := NewTracker(nil, TrackerOptions{})
	if tr.refresh != DefaultRefresh || tr.expire != DefaultExpire || tr.maxLen != DefaultMaxEntries ||
		cap(tr.slots) != DefaultMaxRefreshes || tr.client.Timeout() != DefaultTimeout {
		t.Errorf("defaults: refresh %s expire %s entries %d refreshes %d timeout %s",
			tr.refresh, tr.expire, tr.maxLen, cap(tr.slots), tr.client.Timeout())
	}
}

// wait blocks until no refresh is under way.
func (t *Tracker) wait() { t.running.Wait() }

// size is the number of entries kept.
func (t *Tracker) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lru.Len()
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 5s")
}
