package monitor

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/sparkplug-io/sparkplug/plugin/cleanup"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// sweepEnv is a cleaner over fake clients and a watch whose caches hold
// what a test puts there.
type sweepEnv struct {
	kube     *fake.Clientset
	meta     *metadatafake.FakeMetadataClient
	w        *watch
	recorder *record.FakeRecorder
	deleted  []string
	c        *cleanup.Cleaner
}

func newSweepEnv(t *testing.T, now time.Time) *sweepEnv {
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Workflow"}, &metav1.PartialObjectMetadata{})
	scheme.AddKnownTypeWithName(schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "WorkflowList"}, &metav1.PartialObjectMetadataList{})
	e := &sweepEnv{kube: fake.NewClientset(), meta: metadatafake.NewSimpleMetadataClient(scheme), recorder: record.NewFakeRecorder(20)}
	e.w = &watch{namespaces: []string{"jobs"},
		workflows: map[string]cache.SharedIndexInformer{"jobs": cache.NewSharedIndexInformer(&cache.ListWatch{}, &metav1.PartialObjectMetadata{}, 0, cache.Indexers{indexUID: byUID})},
		pods:      map[string]cache.SharedIndexInformer{"jobs": cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.Pod{}, 0, cache.Indexers{})}}
	e.c = cleanup.New(cleanup.Config{Kube: e.kube, Recorder: e.recorder, Now: func() time.Time { return now },
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Deleted: func(r string) { e.deleted = append(e.deleted, r) },
		Workflow: func(ctx context.Context, ns, name string) (metav1.Object, error) {
			return e.meta.Resource(workflowsResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		}})
	return e
}

// workflow puts a Workflow in the API server (live) and in the cache
// (cached), each with its completed label.
func (e *sweepEnv) workflow(t *testing.T, name, uid string, live, cached *bool) spark.WorkflowRef {
	t.Helper()
	m := func(completed bool) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "jobs", UID: typesUID(uid),
				Labels: map[string]string{spark.ArgoLabelCompleted: map[bool]string{true: "true", false: "false"}[completed]}}}
	}
	if live != nil {
		if err := e.meta.Tracker().Add(m(*live)); err != nil {
			t.Fatal(err)
		}
	}
	if cached != nil {
		if err := e.w.workflows["jobs"].GetIndexer().Add(m(*cached)); err != nil {
			t.Fatal(err)
		}
	}
	return spark.WorkflowRef{Name: name, Namespace: "jobs", UID: uid}
}

// driver puts wf's driver of node in the API server and the cache.
func (e *sweepEnv) driver(t *testing.T, wf spark.WorkflowRef, node string, opts ...func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	p := pod(spark.RoleDriver, opts...)
	p.Name = objects.NamesFor(objects.Run{Workflow: wf, NodeID: node}).DriverPod
	p.UID = typesUID("pod-" + p.Name)
	p.Labels[spark.LabelWorkflowUID] = wf.UID
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[spark.AnnotationWorkflowName] = wf.Name
	p.Annotations[spark.AnnotationNodeID] = node
	p.OwnerReferences = []metav1.OwnerReference{objects.WorkflowOwner(wf)}
	e.add(t, p)
	return p
}

func (e *sweepEnv) add(t *testing.T, p *corev1.Pod) {
	t.Helper()
	if _, err := e.kube.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.w.pods["jobs"].GetStore().Add(p); err != nil {
		t.Fatal(err)
	}
}

func (e *sweepEnv) exists(p *corev1.Pod) bool {
	_, err := e.kube.CoreV1().Pods(p.Namespace).Get(context.Background(), p.Name, metav1.GetOptions{})
	return err == nil
}

// workflowsRead are the names of the Workflows the cleaner read.
func (e *sweepEnv) workflowsRead() []string {
	var out []string
	for _, a := range e.meta.Actions() {
		if a.GetVerb() == "get" {
			out = append(out, a.(interface{ GetName() string }).GetName())
		}
	}
	slices.Sort(out)
	return out
}

func TestSweep(t *testing.T) {
	now := t0.Add(2 * time.Hour)
	yes, no := new(bool), new(bool)
	*yes = true
	e := newSweepEnv(t, now)
	running := driverRunning(time.Minute)
	ended := driverExited(0, time.Minute, time.Hour, corev1.PodSucceeded)
	ttl60 := func(p *corev1.Pod) { p.Annotations = map[string]string{spark.AnnotationTTLSeconds: "60"} }

	done := e.workflow(t, "done", "uid-done", yes, yes)
	doneRunning := e.driver(t, done, "a", running)
	doneExpired := e.driver(t, done, "b", ended, ttl60)
	doneKept := e.driver(t, done, "c", ended)
	forged := doneRunning.DeepCopy()
	forged.Name, forged.UID = "copied-labels-driver", "forged-1"
	e.add(t, forged)
	unowned := e.driver(t, done, "d", running)
	unowned.OwnerReferences = nil
	_ = e.w.pods["jobs"].GetStore().Update(unowned)

	live := e.workflow(t, "live", "uid-live", no, no)
	liveRunning := e.driver(t, live, "a", running)
	liveExpired := e.driver(t, live, "b", ended, ttl60)

	gone := spark.WorkflowRef{Name: "gone", Namespace: "jobs", UID: "uid-gone"}
	goneFinished := e.driver(t, gone, "a", ended)

	lag := e.workflow(t, "lag", "uid-lag", no, nil)
	lagRunning := e.driver(t, lag, "a", running)

	retried := e.workflow(t, "retried", "uid-retried", no, yes)
	retriedRunning := e.driver(t, retried, "a", running)

	renamed := spark.WorkflowRef{Name: "renamed", Namespace: "jobs", UID: "uid-old"}
	e.workflow(t, "renamed", "uid-new", no, no)
	renamedRunning := e.driver(t, renamed, "a", running)

	sweep(context.Background(), e.c, e.w)

	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		deleted bool
	}{
		{"running driver of a completed workflow", doneRunning, true},
		{"expired driver of a completed workflow", doneExpired, true},
		{"finished driver of a completed workflow, no ttl", doneKept, false},
		{"a pod with a driver's labels copied, another name", forged, false},
		{"a pod with a driver's name and labels, not owned by the Workflow", unowned, false},
		{"running driver of a running workflow", liveRunning, false},
		{"expired driver of a running workflow: its sidecar's", liveExpired, false},
		{"finished driver of a workflow that is gone", goneFinished, true},
		{"a workflow the cache lacks but the API server has", lagRunning, false},
		{"a completed workflow in the cache that runs again", retriedRunning, false},
		{"a workflow whose name another workflow took", renamedRunning, true},
	} {
		if got := !e.exists(tc.pod); got != tc.deleted {
			t.Errorf("%s: deleted %v, want %v", tc.name, got, tc.deleted)
		}
	}
	slices.Sort(e.deleted)
	if want := []string{cleanup.ReasonExpired, cleanup.ReasonWorkflowDeleted, cleanup.ReasonWorkflowDeleted, cleanup.ReasonWorkflowEnded}; !slices.Equal(e.deleted, want) {
		t.Errorf("deletions counted %q, want %q", e.deleted, want)
	}
	// Only the candidates' workflows were read, each once; a running
	// workflow in the cache costs no request.
	if got, want := e.workflowsRead(), []string{"done", "gone", "lag", "renamed", "retried"}; !slices.Equal(got, want) {
		t.Errorf("workflows read %q, want %q", got, want)
	}
	close(e.recorder.Events)
	var events []string
	for ev := range e.recorder.Events {
		events = append(events, ev)
	}
	slices.Sort(events)
	if len(events) != 2 || !strings.HasPrefix(events[0], "Normal SparkDriverDeleted deleted driver "+doneRunning.Name+" of node a: its workflow ended while no sidecar watched") ||
		!strings.HasPrefix(events[1], "Normal SparkDriverExpired deleted driver "+doneExpired.Name+" of node b: timeToLiveSeconds ran out") {
		t.Errorf("events:\n%s", strings.Join(events, "\n"))
	}

	// A second sweep finds nothing more to do, and deletes nothing twice.
	e.deleted = nil
	sweep(context.Background(), e.c, e.w)
	if len(e.deleted) != 0 {
		t.Errorf("a second sweep deleted again: %q", e.deleted)
	}
}

func typesUID(s string) types.UID { return types.UID(s) }
