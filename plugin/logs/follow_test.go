package logs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	kfake "k8s.io/client-go/kubernetes/fake"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// syncBuffer is a bytes.Buffer that a test reads while Run writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// following is Run with Follow in the background.
type following struct {
	out, notices syncBuffer
	done         chan error
}

func startFollow(t *testing.T, ctx context.Context, kube *kfake.Clientset, wfc *wffake.Clientset, o Options) *following {
	t.Helper()
	f := &following{done: make(chan error, 1)}
	o.Namespace, o.Workflow, o.Follow, o.Tail, o.Poll = "ns", "wf", true, -1, 10*time.Millisecond
	o.Notices = &f.notices
	go func() { f.done <- Run(ctx, kube, wfc, o, &f.out) }()
	// The fake's watch sees only what is created after it starts.
	eventually(t, "the pod watch", func() bool {
		for _, a := range kube.Actions() {
			if a.GetVerb() == "watch" {
				return true
			}
		}
		return false
	})
	return f
}

func (f *following) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-f.done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("follow did not end; output %q, notices %q", f.out.String(), f.notices.String())
		return nil
	}
}

func (f *following) running(t *testing.T) {
	t.Helper()
	select {
	case err := <-f.done:
		t.Fatalf("follow ended early: %v; output %q", err, f.out.String())
	case <-time.After(100 * time.Millisecond):
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%s: timed out", what)
		}
	}
}

func setPhase(t *testing.T, wfc *wffake.Clientset, wf *wfv1.Workflow, id string, phase wfv1.NodePhase, wfPhase wfv1.WorkflowPhase) {
	t.Helper()
	n := wf.Status.Nodes[id]
	n.Phase = phase
	wf.Status.Nodes[id] = n
	wf.Status.Phase = wfPhase
	_, err := wfc.ArgoprojV1alpha1().Workflows("ns").Update(context.Background(), wf, metav1.UpdateOptions{})
	must(t, err)
}

// With -f and no driver yet, the driver is waited for, and for its
// container to start; the follow ends when the node has finished and the
// log ended.
func TestFollowWaitsForTheDriver(t *testing.T) {
	wf := testWorkflow()
	addNode(wf, "wf-1", "wf.spark", "spark", "spark", wfv1.NodeTypePlugin, wfv1.NodeRunning, 1)
	kube, wfc := fakes(wf)
	f := startFollow(t, context.Background(), kube, wfc, Options{Node: "spark"})
	f.running(t)
	d := driverPod(wf, "wf-1", 1)
	d.Status = pendingStatus(spark.DriverContainerName, "ContainerCreating")
	_, err := kube.CoreV1().Pods("ns").Create(context.Background(), d, metav1.CreateOptions{})
	must(t, err)
	eventually(t, "the pending notice", func() bool { return strings.Contains(f.notices.String(), "(ContainerCreating)") })
	if len(logRequests(kube)) != 0 {
		t.Fatal("the log of a driver not started was asked for")
	}
	d.Status = startedStatus(spark.DriverContainerName)
	_, err = kube.CoreV1().Pods("ns").UpdateStatus(context.Background(), d, metav1.UpdateOptions{})
	must(t, err)
	eventually(t, "the log", func() bool { return f.out.String() == "fake logs" })
	f.running(t) // the node runs on
	setPhase(t, wfc, wf, "wf-1", wfv1.NodeSucceeded, wfv1.WorkflowRunning)
	if err := f.wait(t); err != nil {
		t.Fatal(err)
	}
	if opts := logRequests(kube)[spark.DriverContainerName]; opts == nil || !opts.Follow {
		t.Errorf("log options %+v, want follow", opts)
	}
	for _, want := range []string{"waiting for the driver of node wf.spark", "following driver " + d.Name} {
		if !strings.Contains(f.notices.String(), want) {
			t.Errorf("notices lack %q:\n%s", want, f.notices.String())
		}
	}
}

// Following the latest attempt follows the next one when the node runs
// its driver again, without prefixes: they come one after the other.
func TestFollowTakesTheNextAttempt(t *testing.T) {
	wf := testWorkflow()
	addNode(wf, "wf-1", "wf.spark", "spark", "spark", wfv1.NodeTypePlugin, wfv1.NodeRunning, 1)
	a1 := driverPod(wf, "wf-1", 1)
	kube, wfc := fakes(wf, a1)
	f := startFollow(t, context.Background(), kube, wfc, Options{Node: "spark"})
	eventually(t, "the first attempt", func() bool { return f.out.String() == "fake logs" })
	a2 := driverPod(wf, "wf-1", 2)
	_, err := kube.CoreV1().Pods("ns").Create(context.Background(), a2, metav1.CreateOptions{})
	must(t, err)
	eventually(t, "the second attempt", func() bool { return f.out.String() == "fake logsfake logs" })
	setPhase(t, wfc, wf, "wf-1", wfv1.NodeFailed, wfv1.WorkflowFailed)
	if err := f.wait(t); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.notices.String(), "following driver "+a2.Name+" of node wf.spark (attempt 2)") {
		t.Errorf("notices %q", f.notices.String())
	}
}

// Every node: new nodes' drivers are taken as they come, prefixed, until
// the workflow has finished.
func TestFollowEveryNodeUntilTheWorkflowEnds(t *testing.T) {
	wf, early, late := twoNodes()
	kube, wfc := fakes(wf, early)
	f := startFollow(t, context.Background(), kube, wfc, Options{})
	eventually(t, "the first node", func() bool { return f.out.String() == early.Name+": fake logs\n" })
	f.running(t)
	_, err := kube.CoreV1().Pods("ns").Create(context.Background(), late, metav1.CreateOptions{})
	must(t, err)
	eventually(t, "the second node", func() bool { return strings.Count(f.out.String(), "\n") == 2 })
	setPhase(t, wfc, wf, "wf-2", wfv1.NodeSucceeded, wfv1.WorkflowSucceeded)
	if err := f.wait(t); err != nil {
		t.Fatal(err)
	}
	if want := early.Name + ": fake logs\n" + late.Name + ": fake logs\n"; f.out.String() != want {
		t.Errorf("%q, want %q", f.out.String(), want)
	}
}

// An interrupted follow ends without an error.
func TestFollowEndsWhenInterrupted(t *testing.T) {
	wf, _, _ := twoNodes()
	kube, wfc := fakes(wf)
	ctx, cancel := context.WithCancel(context.Background())
	f := startFollow(t, ctx, kube, wfc, Options{})
	f.running(t)
	cancel()
	if err := f.wait(t); err != nil {
		t.Errorf("%v", err)
	}
}

// A driver deleted before it started is said, at the end.
func TestFollowADriverDeletedBeforeItStarted(t *testing.T) {
	wf, _, late := twoNodes()
	late.Status = pendingStatus(spark.DriverContainerName, "ImagePullBackOff")
	kube, wfc := fakes(wf, late)
	f := startFollow(t, context.Background(), kube, wfc, Options{Node: "late"})
	eventually(t, "the pending notice", func() bool { return strings.Contains(f.notices.String(), "ImagePullBackOff") })
	must(t, kube.CoreV1().Pods("ns").Delete(context.Background(), late.Name, metav1.DeleteOptions{}))
	setPhase(t, wfc, wf, "wf-2", wfv1.NodeFailed, wfv1.WorkflowFailed)
	err := f.wait(t)
	if err == nil || !strings.Contains(err.Error(), "driver "+late.Name+" of node wf.late (attempt 1) was deleted before it started") {
		t.Errorf("%v", err)
	}
}

// blockingLogs replaces openLog: every log stays open until released, and
// the most open at once is counted.
type blockingLogs struct {
	mu       sync.Mutex
	open     int
	most     int
	opened   int
	released chan struct{}
}

func (b *blockingLogs) openLog(ctx context.Context, _ kubernetes.Interface, _, pod string, _ *corev1.PodLogOptions) (io.ReadCloser, error) {
	b.mu.Lock()
	b.open++
	b.opened++
	b.most = max(b.most, b.open)
	b.mu.Unlock()
	r, w := io.Pipe()
	go func() {
		select {
		case <-b.released:
		case <-ctx.Done():
		}
		// Two writes per line: whole lines must still come out whole.
		fmt.Fprintf(w, "%s says", pod)
		fmt.Fprintf(w, " hello\n")
		b.mu.Lock()
		b.open--
		b.mu.Unlock()
		w.Close()
	}()
	return r, nil
}

// At most MaxStreams logs are followed at once; the others wait and are
// followed when streams end.
func TestFollowStreamsAtMostMaxStreams(t *testing.T) {
	const nodes = MaxStreams + 8
	wf := testWorkflow()
	var pods []*corev1.Pod
	for i := 0; i < nodes; i++ {
		id := fmt.Sprintf("wf-%d", i)
		addNode(wf, id, "wf.s"+id, "s"+id, "spark", wfv1.NodeTypePlugin, wfv1.NodeRunning, i)
		pods = append(pods, driverPod(wf, id, 1))
	}
	wf.Status.Phase = wfv1.WorkflowSucceeded
	b := &blockingLogs{released: make(chan struct{})}
	saved := openLog
	openLog = b.openLog
	defer func() { openLog = saved }()
	kube, wfc := fakes(wf, pods...)
	f := startFollow(t, context.Background(), kube, wfc, Options{})
	eventually(t, "MaxStreams streams", func() bool { b.mu.Lock(); defer b.mu.Unlock(); return b.opened == MaxStreams })
	f.running(t)
	b.mu.Lock()
	opened := b.opened
	b.mu.Unlock()
	if opened != MaxStreams {
		t.Fatalf("%d logs opened at once, want %d", opened, MaxStreams)
	}
	if !strings.Contains(f.notices.String(), "the others wait for one to end") {
		t.Errorf("notices %q", f.notices.String())
	}
	close(b.released)
	if err := f.wait(t); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(f.out.String(), "\n"), "\n")
	if len(lines) != nodes || b.most != MaxStreams {
		t.Fatalf("%d lines (want %d), %d streams at most", len(lines), nodes, b.most)
	}
	for _, l := range lines {
		pod, rest, _ := strings.Cut(l, ": ")
		if rest != pod+" says hello" {
			t.Errorf("line %q", l)
		}
	}
}
