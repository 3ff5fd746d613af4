package sparkapi

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

const testApp = "spark-0f4c2b1e9a7d4c3b8e6f5a4d3c2b1a09"

func TestProgressOneRunningJob(t *testing.T) {
	s, srv := newStandIn(t, testApp, "jobs_one_running.json")
	p, err := NewClient(0).Progress(context.Background(), srv.URL, testApp)
	if err != nil {
		t.Fatal(err)
	}
	want := Progress{RunningJobs: 1, JobID: 2, Stage: 4, Stages: 7, TasksDone: 1200, Tasks: 3000}
	if p != want {
		t.Errorf("Progress = %+v, want %+v", p, want)
	}
	if got := p.String(); got != "stage 4/7, 1,200/3,000 tasks" {
		t.Errorf("String = %q", got)
	}
	if got := s.seen(); len(got) != 1 || got[0] != "/api/v1/applications/"+testApp+"/jobs?status=running" {
		t.Errorf("requests = %q, want one GET of the running jobs", got)
	}
}

func TestProgressSeveralRunningJobs(t *testing.T) {
	_, srv := newStandIn(t, testApp, "jobs_several_running.json")
	p, err := NewClient(0).Progress(context.Background(), srv.URL, testApp)
	if err != nil {
		t.Fatal(err)
	}
	// Jobs 5, 6 and 7 run (Spark lists 7 first); 5 is the oldest.
	if p.RunningJobs != 3 || p.JobID != 5 {
		t.Errorf("RunningJobs, JobID = %d, %d, want 3, 5", p.RunningJobs, p.JobID)
	}
	if got := p.String(); got != "stage 2/2, 10,250/12,500 tasks" {
		t.Errorf("String = %q", got)
	}
}

func TestProgressNoRunningJob(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		t.Run(fmt.Sprintf("ignoreFilter=%v", ignore), func(t *testing.T) {
			s, srv := newStandIn(t, testApp, "jobs_none_running.json")
			s.set(func(s *standIn) { s.ignoreFilter = ignore })
			p, err := NewClient(0).Progress(context.Background(), srv.URL, testApp)
			if err != nil {
				t.Fatal(err)
			}
			if p != (Progress{}) || p.String() != "" {
				t.Errorf("Progress = %+v %q, want zero and \"\"", p, p.String())
			}
		})
	}
}

// A server that ignores status=running lists finished jobs too: only
// RUNNING ones count.
func TestProgressFiltersStatusItself(t *testing.T) {
	s, srv := newStandIn(t, testApp, "jobs_one_running.json")
	s.set(func(s *standIn) { s.ignoreFilter = true })
	p, err := NewClient(0).Progress(context.Background(), srv.URL, testApp)
	if err != nil {
		t.Fatal(err)
	}
	if p.RunningJobs != 1 || p.String() != "stage 4/7, 1,200/3,000 tasks" {
		t.Errorf("Progress = %+v %q", p, p.String())
	}
}

// Spark's stage list (StageData) where the job list was expected, as a
// misrouting proxy might serve it: its entries are not jobs (no jobId),
// so nothing is shown, and nothing breaks.
func TestProgressStageListIsNoJob(t *testing.T) {
	s, srv := newStandIn(t, testApp, "")
	s.set(func(s *standIn) {
		s.handler = serve(http.StatusOK, "application/json", string(readTestdata(t, "stages_active.json")))
	})
	p, err := NewClient(0).Progress(context.Background(), srv.URL, testApp)
	if err != nil {
		t.Fatal(err)
	}
	if p.String() != "" || p.RunningJobs != 0 {
		t.Errorf("Progress = %+v %q, want none", p, p.String())
	}
}

func TestProgressHTTPErrors(t *testing.T) {
	for _, tt := range []struct {
		name    string
		status  int
		body    string
		wantErr string
	}{
		{"not found", http.StatusNotFound, "no such app: x", "sparkapi: HTTP 404"},
		{"server error", http.StatusInternalServerError, "<html><body>HTTP ERROR 500 java.lang.NullPointerException</body></html>", "sparkapi: HTTP 500"},
		{"forbidden (UI ACLs)", http.StatusForbidden, "user \"system:serviceaccount\" is not authorized", "sparkapi: HTTP 403"},
		{"unavailable", http.StatusServiceUnavailable, "", "sparkapi: HTTP 503"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := newStandIn(t, testApp, "")
			s.set(func(s *standIn) { s.handler = serve(tt.status, "text/plain", tt.body) })
			_, err := NewClient(0).Progress(context.Background(), srv.URL, testApp)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// A live UI answers only for its own spark.app.id.
func TestProgressOtherAppID(t *testing.T) {
	s, srv := newStandIn(t, testApp, "jobs_one_running.json")
	_, err := NewClient(0).Progress(context.Background(), srv.URL, "spark-other")
	if err == nil || err.Error() != "sparkapi: HTTP 404" {
		t.Errorf("err = %v, want HTTP 404", err)
	}
	if s.asked("spark-other") != 1 {
		t.Errorf("the stand-in was not asked for spark-other")
	}
}

func TestProgressJunk(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		// want is the text, or "error" when an error is wanted.
		want string
	}{
		{"empty", "", "error"},
		{"html", "<!DOCTYPE html><html><head><title>Spark Jobs</title></head></html>", "error"},
		{"object", `{"message":"no such app"}`, "error"},
		{"truncated", `[ {"jobId" : 2, "status" : "RUNNING", "numTasks" : 30`, "error"},
		{"numbers", `[1, 2, 3]`, "error"},
		{"string id", `[{"jobId":"2","status":"RUNNING"}]`, "error"},
		{"huge count", `[{"jobId":2,"status":"RUNNING","numTasks":1e40}]`, "error"},
		{"deep", strings.Repeat("[", 100000) + strings.Repeat("]", 100000), "error"},
		{"null", `null`, ""},
		{"empty list", `[]`, ""},
		{"no stages, no tasks", `[{"jobId":0,"status":"RUNNING"}]`, ""},
		{"odd stage ids", `[{"jobId":0,"status":"RUNNING","stageIds":[0,"x",{}],"numTasks":5}]`, "stage 1/3, 0/5 tasks"},
		{"negative counts", `[{"jobId":0,"status":"RUNNING","stageIds":[1],"numCompletedStages":-9,"numTasks":-5,"numCompletedIndices":-1}]`, "stage 1/1"},
		{"lower-case status", `[{"jobId":3,"status":"running","stageIds":[1,2],"numTasks":10,"numCompletedIndices":4}]`, "stage 1/2, 4/10 tasks"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := newStandIn(t, testApp, "")
			s.set(func(s *standIn) { s.handler = serve(http.StatusOK, "application/json", tt.body) })
			p, err := NewClient(0).Progress(context.Background(), srv.URL, testApp)
			if tt.want == "error" {
				if err == nil {
					t.Fatalf("no error, Progress %+v", p)
				}
				if len(err.Error()) > 80 {
					t.Errorf("error not short: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.String(); got != tt.want {
				t.Errorf("String = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestProgressBodyLimit(t *testing.T) {
	job := `[{"jobId":0,"status":"RUNNING","stageIds":[0],"numTasks":2,"numCompletedIndices":1}`
	pad := func(n int) string { return job + strings.Repeat(" ", n-len(job)-1) + "]" }
	for _, tt := range []struct {
		name    string
		size    int
		wantErr bool
	}{
		{"at the limit", MaxBody, false},
		{"one byte over", MaxBody + 1, true},
		{"endless", -1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := newStandIn(t, testApp, "")
			h := http.HandlerFunc(endless)
			if tt.size > 0 {
				h = serve(http.StatusOK, "application/json", pad(tt.size))
			}
			s.set(func(s *standIn) { s.handler = h })
			p, err := NewClient(5*time.Second).Progress(context.Background(), srv.URL, testApp)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "reply over") {
					t.Errorf("err = %v, want reply over the limit", err)
				}
				return
			}
			if err != nil || p.String() != "stage 1/1, 1/2 tasks" {
				t.Errorf("Progress = %q, %v", p.String(), err)
			}
		})
	}
}

func TestProgressHangs(t *testing.T) {
	for _, tt := range []struct {
		name string
		h    http.HandlerFunc
	}{
		{"no headers", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }},
		{"dripping body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("[ "))
			for {
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(10 * time.Millisecond):
					_, _ = w.Write([]byte(" "))
				}
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, srv := newStandIn(t, testApp, "")
			s.set(func(s *standIn) { s.handler = tt.h })
			const timeout = 150 * time.Millisecond
			start := time.Now()
			_, err := NewClient(timeout).Progress(context.Background(), srv.URL, testApp)
			took := time.Since(start)
			if err == nil || err.Error() != "sparkapi: no reply within 150ms" {
				t.Errorf("err = %v, want the timeout", err)
			}
			if took < timeout || took > timeout+time.Second {
				t.Errorf("took %s, want about %s", took, timeout)
			}
		})
	}
}

func TestProgressCallerCancels(t *testing.T) {
	s, srv := newStandIn(t, testApp, "jobs_one_running.json")
	hold := make(chan struct{})
	s.set(func(s *standIn) { s.hold = hold })
	defer close(hold)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	_, err := NewClient(5*time.Second).Progress(ctx, srv.URL, testApp)
	if err == nil || err.Error() != "sparkapi: canceled" {
		t.Errorf("err = %v, want canceled", err)
	}
}

func TestProgressRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = NewClient(0).Progress(context.Background(), "http://"+addr, testApp)
	if err == nil {
		t.Fatal("no error from a closed port")
	}
	if strings.Contains(err.Error(), "/api/v1") || len(err.Error()) > 140 {
		t.Errorf("error not short: %q", err)
	}
}

func TestProgressRedirects(t *testing.T) {
	elsewhere, otherSrv := newStandIn(t, testApp, "jobs_one_running.json")
	s, srv := newStandIn(t, testApp, "jobs_one_running.json")
	s.set(func(s *standIn) { s.handler = redirects(s, otherSrv.URL) })
	c := NewClient(0)
	if p, err := c.Progress(context.Background(), srv.URL+"/moved", testApp); err != nil || p.JobID != 2 {
		t.Errorf("same-host redirect: %+v, %v, want it followed", p, err)
	}
	if _, err := c.Progress(context.Background(), srv.URL+"/away", testApp); err == nil || err.Error() != "sparkapi: HTTP 302" {
		t.Errorf("other-host redirect: err = %v, want HTTP 302", err)
	}
	if n := elsewhere.requests.Load(); n != 0 {
		t.Errorf("the other host got %d requests", n)
	}
	if _, err := c.Progress(context.Background(), srv.URL+"/loop", testApp); err == nil || !strings.Contains(err.Error(), "too many redirects") {
		t.Errorf("redirect loop: err = %v", err)
	}
}

// The client takes no proxy from the environment: the driver is reached
// directly. (The transport is inspected because net/http reads the proxy
// variables once per process, so setting them in a test proves nothing.)
func TestClientUsesNoProxy(t *testing.T) {
	tr, ok := NewClient(0).http.Transport.(*http.Transport)
	if !ok || tr.Proxy != nil {
		t.Errorf("transport %T with a proxy function, want none", NewClient(0).http.Transport)
	}
}

func TestJobsURL(t *testing.T) {
	for _, tt := range []struct {
		base, app, want string
	}{
		{"http://p-ui-svc.ns.svc:4040", "spark-1", "http://p-ui-svc.ns.svc:4040/api/v1/applications/spark-1/jobs?status=running"},
		{"http://p-driver-svc.ns.svc:4040/", "spark-1", "http://p-driver-svc.ns.svc:4040/api/v1/applications/spark-1/jobs?status=running"},
		{"https://ui.example.com/ns/app/?x=1#f", "spark-1", "https://ui.example.com/ns/app/api/v1/applications/spark-1/jobs?status=running"},
		{"http://h:4040", "a/b c", "http://h:4040/api/v1/applications/a%2Fb%20c/jobs?status=running"},
		{"", "spark-1", ""},
		{"h:4040", "spark-1", ""},
		{"ftp://h", "spark-1", ""},
		{"http://", "spark-1", ""},
		{"http://h:4040", "", ""},
	} {
		got, err := JobsURL(tt.base, tt.app)
		if (err != nil) != (tt.want == "") || got != tt.want {
			t.Errorf("JobsURL(%q, %q) = %q, %v, want %q", tt.base, tt.app, got, err, tt.want)
		}
	}
}

// redirects sends /moved to the API on the same host, /away to the API on
// other, and /loop to itself.
func redirects(s *standIn, other string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved/api/v1/applications/" + testApp + "/jobs":
			http.Redirect(w, r, "/api/v1/applications/"+testApp+"/jobs?status=running", http.StatusFound)
		case "/away/api/v1/applications/" + testApp + "/jobs":
			http.Redirect(w, r, other+"/api/v1/applications/"+testApp+"/jobs?status=running", http.StatusFound)
		case "/loop/api/v1/applications/" + testApp + "/jobs":
			http.Redirect(w, r, r.URL.RequestURI(), http.StatusFound)
		default:
			s.jobs(w, r)
		}
	}
}

// endless streams a JSON list that never ends, until the client leaves.
func endless(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("["))
	chunk := []byte(strings.Repeat(`{"jobId":0,"status":"RUNNING"},`, 1024))
	for r.Context().Err() == nil {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}
