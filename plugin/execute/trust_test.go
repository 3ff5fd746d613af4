package execute

import (
	"strconv"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

var tt0 = time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)

// trustPod is a driver of attempt made at made, with an incarnation
// unless legacy.
func trustPod(name string, attempt int, uid string, made time.Time, legacy bool, status corev1.PodStatus) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: name, UID: types.UID(uid), CreationTimestamp: metav1.NewTime(made),
		Labels:      map[string]string{spark.LabelAttempt: strconv.Itoa(attempt)},
		Annotations: map[string]string{spark.AnnotationIncarnation: "inc"},
	}, Status: status}
	if legacy {
		delete(p.Annotations, spark.AnnotationIncarnation)
	}
	return p
}

// none: this process launched no driver.
func none(types.UID) bool { return false }

// A driver this process launched counts whatever the clocks say: Argo may
// record its node's start after the TaskSet listed the node (a Workflow
// update made again), and a rule of times alone would disown it.
func TestALaunchedDriverCountsWhateverTheClocksSay(t *testing.T) {
	mine := func(uid types.UID) bool { return uid == "u1" }
	early := trustPod("d", 1, "u1", tt0.Add(-time.Minute), false, live)
	if why := forgery(early, entryRecord{}, tt0, mine); why != "" {
		t.Errorf("the driver this process launched is disowned: %s", why)
	}
	if why := forgery(early, entryRecord{}, tt0, none); why == "" {
		t.Error("a pod made a minute before its node started counts without this process having launched it")
	}
	next := trustPod("d2", 2, "u1", tt0.Add(time.Second), false, live)
	if kept, _ := forgedInChain([]*corev1.Pod{trustPod("d1", 1, "u0", tt0, false, live), next}, entryRecord{}, mine); len(kept) != 2 {
		t.Errorf("kept %d drivers, want the launched one beside the first", len(kept))
	}
}

func endedWith(at time.Time) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: spark.DriverContainerName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: metav1.NewTime(at)}}}}}
}

var live = corev1.PodStatus{Phase: corev1.PodRunning}

func TestForgery(t *testing.T) {
	rec := entryRecord{driver: "d", attempt: 1, uid: "u1"}
	for _, c := range []struct {
		name   string
		pod    *corev1.Pod
		rec    entryRecord
		counts bool
	}{
		{"the recorded driver", trustPod("d", 1, "u1", tt0, false, live), rec, true},
		{"another uid under the recorded driver's name", trustPod("d", 1, "u2", tt0.Add(time.Minute), false, live), rec, false},
		{"another pod of the recorded attempt", trustPod("x", 1, "u2", tt0.Add(time.Minute), false, live), rec, false},
		{"a later attempt made after the node started", trustPod("d2", 2, "u2", tt0.Add(time.Minute), false, live), rec, true},
		{"nothing recorded, made after the node started", trustPod("d", 1, "u1", tt0.Add(time.Second), false, live), entryRecord{}, true},
		{"nothing recorded, made within the clock skew before", trustPod("d", 1, "u1", tt0.Add(-time.Second), false, live), entryRecord{}, true},
		{"nothing recorded, made before the node started", trustPod("d", 1, "u1", tt0.Add(-3*time.Second), false, live), entryRecord{}, false},
		{"a legacy run made after its node started", trustPod("d", 1, "u1", tt0, true, live), entryRecord{}, true},
		{"a legacy run made before its node started", trustPod("d", 1, "u1", tt0.Add(-time.Minute), true, live), entryRecord{}, false},
		{"a legacy run under the recorded driver's name with another uid", trustPod("d", 1, "u2", tt0, true, live), rec, false},
	} {
		why := forgery(c.pod, c.rec, tt0, none)
		if (why == "") != c.counts {
			t.Errorf("%s: forgery %q, want counts=%v", c.name, why, c.counts)
		}
	}
	if why := forgery(trustPod("d", 1, "u1", time.Time{}, false, live), entryRecord{}, tt0, none); why != "" {
		t.Errorf("a pod with no creation time (never from an API server) is judged by it: %q", why)
	}
}

func TestForgedInChain(t *testing.T) {
	a1Live := trustPod("d1", 1, "u1", tt0, false, live)
	a1Ended := trustPod("d1", 1, "u1", tt0, false, endedWith(tt0.Add(time.Minute)))
	for _, c := range []struct {
		name string
		pods []*corev1.Pod
		rec  entryRecord
		kept []string
	}{
		{"one driver", []*corev1.Pod{a1Live}, entryRecord{}, []string{"d1"}},
		{"a later attempt while the first runs", []*corev1.Pod{trustPod("d2", 2, "u2", tt0.Add(time.Second), false, live), a1Live}, entryRecord{}, []string{"d1"}},
		{"a later attempt made after the first ended", []*corev1.Pod{a1Ended, trustPod("d2", 2, "u2", tt0.Add(2*time.Minute), false, live)}, entryRecord{}, []string{"d1", "d2"}},
		{"a later attempt made before the first ended", []*corev1.Pod{a1Ended, trustPod("d2", 2, "u2", tt0.Add(30*time.Second), false, live)}, entryRecord{}, []string{"d1"}},
		{"the recorded later attempt stays", []*corev1.Pod{a1Live, trustPod("d2", 2, "u2", tt0.Add(time.Second), false, live)}, entryRecord{driver: "d2", attempt: 2, uid: "u2"}, []string{"d1", "d2"}},
		{"a third attempt after a dropped second", []*corev1.Pod{a1Live, trustPod("d2", 2, "u2", tt0, false, live), trustPod("d3", 3, "u3", tt0, false, live)}, entryRecord{}, []string{"d1"}},
	} {
		kept, dropped := forgedInChain(c.pods, c.rec, none)
		var names []string
		for _, p := range kept {
			names = append(names, p.Name)
		}
		if len(names) != len(c.kept) || len(kept)+len(dropped) != len(c.pods) {
			t.Errorf("%s: kept %v (dropped %d), want %v", c.name, names, len(dropped), c.kept)
			continue
		}
		for i := range names {
			if names[i] != c.kept[i] {
				t.Errorf("%s: kept %v, want %v", c.name, names, c.kept)
			}
		}
	}
}

func TestEndedAtOfADeletedDriverIsWhenItsDeleteWasAsked(t *testing.T) {
	grace := int64(30)
	asked := tt0.Add(time.Minute)
	p := trustPod("d1", 1, "u1", tt0, false, live)
	p.DeletionTimestamp = &metav1.Time{Time: asked.Add(30 * time.Second)}
	p.DeletionGracePeriodSeconds = &grace
	if got := endedAt(p, tt0.Add(time.Hour)); !got.Equal(asked) {
		t.Fatalf("endedAt %s, want when the delete was asked, %s", got, asked)
	}
}

func TestTombCounts(t *testing.T) {
	tomb := func(uid string, attempt int) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{spark.LabelAttempt: strconv.Itoa(attempt)},
			Annotations: map[string]string{spark.AnnotationDriverUID: uid}}}
	}
	drivers := []*corev1.Pod{trustPod("d1", 1, "u1", tt0, false, live)}
	rec := entryRecord{driver: "d2", attempt: 2, uid: "u2"}
	for _, c := range []struct {
		name   string
		cm     *corev1.ConfigMap
		counts bool
	}{
		{"names the counted driver of its attempt", tomb("u1", 1), true},
		{"names the recorded driver", tomb("u2", 2), true},
		{"names a driver of another attempt", tomb("u1", 2), false},
		{"names an unknown uid", tomb("ux", 1), false},
		{"names no uid", tomb("", 1), false},
	} {
		if got := tombCounts(c.cm, drivers, rec); got != c.counts {
			t.Errorf("%s: counts %v, want %v", c.name, got, c.counts)
		}
	}
}

func TestRecordOfReadsTheDriverUID(t *testing.T) {
	entry := &wfv1.NodeResult{Outputs: &wfv1.Outputs{Parameters: []wfv1.Parameter{
		{Name: spark.OutputDriverPod, Value: wfv1.AnyStringPtr("d2")},
		{Name: spark.OutputAttempt, Value: wfv1.AnyStringPtr("2")},
		{Name: spark.OutputDriverUID, Value: wfv1.AnyStringPtr("u2")},
	}}}
	if got := recordOf(entry); got != (entryRecord{driver: "d2", attempt: 2, uid: "u2"}) {
		t.Fatalf("recordOf %+v", got)
	}
	if got := recordOf(nil); got != (entryRecord{attempt: 1}) {
		t.Fatalf("recordOf(nil) %+v", got)
	}
}

func TestForgeriesAreNamedOnceAndBounded(t *testing.T) {
	var f boundedUIDs
	if !f.first("a") || f.first("a") {
		t.Fatal("a forgery is not named exactly once")
	}
	for i := range maxRemembered {
		f.first(types.UID(strconv.Itoa(i)))
	}
	if len(f.m) > maxRemembered {
		t.Fatalf("remembers %d forgeries, bound %d", len(f.m), maxRemembered)
	}
}
