//go:build bench

package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// taskSetWatch records when each WorkflowTaskSet of the namespace (Argo
// creates one per workflow with a plugin step) was first seen, since
// submitted, by the uid of the Workflow that owns it: how fast Argo hands
// one-step workflows to sparkplug.
type taskSetWatch struct {
	mu   sync.Mutex
	seen map[string]time.Duration
}

func newTaskSetWatch(t *testing.T) *taskSetWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w := &taskSetWatch{seen: map[string]time.Duration{}}
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(env.Cluster.Dynamic, 0, env.Namespace, nil)
	inf := f.ForResource(wfv1.SchemeGroupVersion.WithResource("workflowtasksets")).Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
		o, ok := obj.(metav1.Object)
		if !ok {
			return
		}
		now := time.Since(submitted)
		key := string(o.GetUID())
		for _, ref := range o.GetOwnerReferences() {
			if ref.Kind == "Workflow" {
				key = string(ref.UID)
			}
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if _, ok := w.seen[key]; !ok {
			w.seen[key] = now
		}
	}}); err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("TaskSet watch did not sync")
	}
	return w
}

// all is when the n-th TaskSet was first seen (0: fewer seen).
func (w *taskSetWatch) all(n int) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return at(sortedDurations(w.seen), n-1)
}

// sortedDurations is the durations of seen, shortest first.
func sortedDurations(seen map[string]time.Duration) []time.Duration {
	d := make([]time.Duration, 0, len(seen))
	for _, v := range seen {
		d = append(d, v)
	}
	slices.Sort(d)
	return d
}

// toDriver is, for each workflow whose TaskSet ts saw and whose driver w
// saw, the time from the one to the other, sorted.
func toDriver(ts *taskSetWatch, w *podWatch) []time.Duration {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	var d []time.Duration
	for pod, uid := range w.workflow {
		if at, ok := ts.seen[uid]; ok {
			d = append(d, w.seen[pod]-at)
		}
	}
	slices.Sort(d)
	return d
}

// podWatch records when each pod of a run was first seen, and first seen
// running, since submitted, and the uid of the workflow of each Spark
// driver (its sparkplug.io/workflow-uid label).
type podWatch struct {
	mu       sync.Mutex
	seen     map[string]time.Duration
	running  map[string]bool
	workflow map[string]string
	stop     context.CancelFunc
}

func newPodWatch(t *testing.T, run string) *podWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &podWatch{seen: map[string]time.Duration{}, running: map[string]bool{}, workflow: map[string]string{}, stop: cancel}
	f := informers.NewSharedInformerFactoryWithOptions(env.Kube, 0, informers.WithNamespace(env.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = RunLabel + "=" + run }))
	inf := f.Core().V1().Pods().Informer()
	see := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		now := time.Since(submitted)
		w.mu.Lock()
		defer w.mu.Unlock()
		if _, ok := w.seen[p.Name]; !ok {
			w.seen[p.Name] = now
		}
		if uid := p.Labels[spark.LabelWorkflowUID]; uid != "" {
			w.workflow[p.Name] = uid
		}
		if p.Status.Phase == corev1.PodRunning {
			w.running[p.Name] = true
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: see, UpdateFunc: func(_, o any) { see(o) }}); err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("pod watch did not sync")
	}
	t.Cleanup(cancel)
	return w
}

func (w *podWatch) count() (seen, running int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.seen), len(w.running)
}

func (w *podWatch) created() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return sortedDurations(w.seen)
}

func (w *podWatch) waitCreated(t *testing.T, wf *wfv1.Workflow, n int, timeout time.Duration) {
	t.Helper()
	w.waitFor(t, wf, fmt.Sprintf("%d pods created", n), timeout, func(seen, _ int) bool { return seen >= n })
}

func (w *podWatch) waitRunning(t *testing.T, wf *wfv1.Workflow, n int, timeout time.Duration) {
	t.Helper()
	w.waitFor(t, wf, fmt.Sprintf("%d pods running", n), timeout, func(_, running int) bool { return running >= n })
}

// waitFor waits until done, failing at once if wf (nil: none) ends.
func (w *podWatch) waitFor(t *testing.T, wf *wfv1.Workflow, what string, timeout time.Duration, done func(seen, running int) bool) {
	t.Helper()
	checked := time.Now()
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if done(w.count()) {
			return true, nil
		}
		if wf != nil && time.Since(checked) > 2*time.Second {
			checked = time.Now()
			got, err := env.Workflows.ArgoprojV1alpha1().Workflows(wf.Namespace).Get(ctx, wf.Name, metav1.GetOptions{})
			if err == nil && got.Status.Phase.Completed() {
				return false, fmt.Errorf("workflow %s ended %s: %s", wf.Name, got.Status.Phase, got.Status.Message)
			}
		}
		return false, nil
	})
	if err != nil {
		seen, running := w.count()
		t.Fatalf("%s: not within %v (%d created, %d running): %v", what, timeout, seen, running, err)
	}
}
