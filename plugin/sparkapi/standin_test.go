package sparkapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// standIn is a small stand-in of a live driver's monitoring REST API.
// Spark's containers cannot run in these tests, so this is the one thing
// simulated; everything else is the package's real code over real HTTP.
//
// It answers GET /api/v1/applications/<app-id>/jobs the way Spark's
// AbstractApplicationResource.jobsList and AppStatusStore.jobsList do: only
// for its own application id (a live UI knows no other; 404 "no such app"
// otherwise), jobs newest first, filtered by every status= parameter,
// case-insensitively (JobExecutionStatus.fromString). Replies are Spark's
// JobData JSON (status/api/v1/api.scala) as its Jackson writer indents
// it; the files in testdata follow the field set and order of Spark's own
// HistoryServerExpectations/job_list_json_expectation.json, with values of
// running applications, which that file (made from finished event logs)
// has none of.
type standIn struct {
	appID string
	// body is the job list served, in testdata's JSON.
	body []byte

	requests    atomic.Int32
	inFlight    atomic.Int32
	maxInFlight atomic.Int32

	// mu guards what follows: tests change the behaviour between
	// requests, and a TCP connection is no synchronisation the race
	// detector sees.
	mu sync.Mutex
	// ignoreFilter serves every job whatever the status parameter, like a
	// server that does not know the parameter.
	ignoreFilter bool
	// hold, when set, makes each request wait until it is closed or the
	// client goes away.
	hold chan struct{}
	// handler, when set, answers instead of the API.
	handler http.HandlerFunc
	queries []string // path?query of each request
	apps    map[string]int
}

// set changes the stand-in's behaviour under its lock.
func (s *standIn) set(f func(s *standIn)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func newStandIn(t *testing.T, appID, file string) (*standIn, *httptest.Server) {
	t.Helper()
	s := &standIn{appID: appID, apps: map[string]int{}}
	if file != "" {
		s.body = readTestdata(t, file)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

func readTestdata(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (s *standIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for m := s.maxInFlight.Load(); n > m && !s.maxInFlight.CompareAndSwap(m, n); m = s.maxInFlight.Load() {
	}
	s.mu.Lock()
	s.queries = append(s.queries, r.URL.RequestURI())
	hold, handler := s.hold, s.handler
	s.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
	}
	if handler != nil {
		handler(w, r)
		return
	}
	s.jobs(w, r)
}

// jobs is jobsList of the application named in the path.
func (s *standIn) jobs(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/v1/applications/")
	app, tail, _ := strings.Cut(rest, "/")
	if !ok || tail != "jobs" || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.apps[app]++
	ignoreFilter := s.ignoreFilter
	s.mu.Unlock()
	if app != s.appID {
		http.Error(w, "no such app: "+app, http.StatusNotFound)
		return
	}
	var jobs []map[string]any
	if err := json.Unmarshal(s.body, &jobs); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	statuses := r.URL.Query()["status"]
	out := []map[string]any{}
	for _, j := range jobs {
		if ignoreFilter || len(statuses) == 0 || anyFold(statuses, j["status"]) {
			out = append(out, j)
		}
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func anyFold(statuses []string, v any) bool {
	status, _ := v.(string)
	for _, s := range statuses {
		if strings.EqualFold(s, status) {
			return true
		}
	}
	return false
}

// seen is the path?query of each request so far.
func (s *standIn) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queries...)
}

// asked is how many requests named app.
func (s *standIn) asked(app string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.apps[app]
}

// serve makes a handler that writes status and body.
func serve(status int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}
