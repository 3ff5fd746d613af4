package execute

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/sparkapi"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// fakeProgress records what it was asked and answers a fixed text.
type fakeProgress struct {
	text          string
	asked, forgot []string
	urls, appIDs  []string
}

func (f *fakeProgress) Get(key, baseURL, appID string) (string, bool) {
	f.asked, f.urls, f.appIDs = append(f.asked, key), append(f.urls, baseURL), append(f.appIDs, appID)
	return f.text, f.text != ""
}
func (f *fakeProgress) Forget(key string) { f.forgot = append(f.forgot, key) }

func progressDriver() *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "etl-1a2b3c4d-driver", Namespace: "jobs", UID: "u-1",
		Labels: map[string]string{spark.LabelAppSelector: "spark-0123"}}}
}

// A running driver's Spark progress is asked of the tracker, at its
// in-cluster UI, for the snapshot (decide puts it in the message: its
// TestRunningMessageCarriesSparksProgress); a driver whose pod does not
// run is not asked about, and a finished one is forgotten.
func TestRunningDriversProgressIsGathered(t *testing.T) {
	f := &fakeProgress{text: "stage 4/7, 1,200/3,000 tasks"}
	c := &Core{progress: f}
	body := &spec.SparkApplicationSpec{SparkConf: map[string]string{spark.ConfUIPort: "4050"}}
	driver := progressDriver()
	driver.Status.Phase = corev1.PodRunning

	if got := c.sparkProgress(body, driver); got != "stage 4/7, 1,200/3,000 tasks" {
		t.Errorf("progress %q", got)
	}
	if len(f.asked) != 1 || f.asked[0] != "u-1" || f.appIDs[0] != "spark-0123" || f.urls[0] != "http://etl-1a2b3c4d-driver-svc.jobs.svc:4050" {
		t.Errorf("asked %v at %v for %v; want the driver's uid, its in-cluster UI at spark.ui.port, its application id", f.asked, f.urls, f.appIDs)
	}

	f.text = "" // the UI does not answer: no progress, never an error
	if got := c.sparkProgress(body, driver); got != "" {
		t.Errorf("unreachable UI: progress %q", got)
	}
	if got := c.sparkProgress(body, progressDriver()); got != "" || len(f.asked) != 2 {
		t.Errorf("a pending driver: progress %q, asked %d times; want none, not asked", got, len(f.asked))
	}

	c.forgetProgress(state.Outcome{State: spark.StateRunning, Phase: state.PhaseRunning}, driver)
	if len(f.forgot) != 0 {
		t.Errorf("a running driver forgotten: %v", f.forgot)
	}
	c.forgetProgress(state.Outcome{State: spark.StateCompleted, Phase: state.PhaseSucceeded}, driver)
	if len(f.forgot) != 1 || f.forgot[0] != "u-1" {
		t.Errorf("finished driver: forgot %v; want the driver forgotten", f.forgot)
	}

	off := &Core{}
	if got := off.sparkProgress(body, driver); got != "" {
		t.Errorf("progress off: %q", got)
	}
	if newProgressSource(0) != nil {
		t.Error("a progress interval of 0 must make no tracker")
	}
}

// Through the real tracker against a stand-in of Spark's REST API (Spark's
// containers cannot run here): the first reply never waits and shows no
// progress; a later one carries the stage and task counts.
func TestSparkProgressFromAStandIn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/api/v1/applications/spark-0123/jobs") {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `[{"jobId":3,"name":"count","status":"RUNNING","stageIds":[5,6,7],"numTasks":3000,"numCompletedTasks":1200,"numCompletedIndices":1200,"numSkippedTasks":0,"numCompletedStages":1,"numSkippedStages":0,"numActiveTasks":8}]`)
	}))
	defer srv.Close()
	tr := sparkapi.NewTracker(sparkapi.NewClient(0), sparkapi.TrackerOptions{Refresh: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if text, _ := tr.Get("u-1", srv.URL, "spark-0123"); text != "" {
			if text != "stage 2/3, 1,200/3,000 tasks" {
				t.Fatalf("progress %q", text)
			}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the tracker never showed the stand-in's progress")
}
