package logs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// follow streams the logs of the chosen nodes' drivers (and executors) as
// they appear, until what it follows is over: the node finished (with
// --attempt N, also that attempt's log ended), or without a node the
// workflow finished; and every stream ended. Pods come from a watch of the
// workflow's pods; nodes from a Get of the Workflow every o.Poll (a user
// may read workflows without watching them). A pod is streamed once its
// container has started, at most MaxStreams at once; the others wait.
func follow(ctx context.Context, kube kubernetes.Interface, wfc wfclient.Interface, o Options, wf *wfv1.Workflow, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := &follower{kube: kube, wfc: wfc, o: o, wf: wf, output: NewOutput(out),
		pods: map[types.UID]*corev1.Pod{}, changed: make(chan struct{}, 1), synced: make(chan struct{}),
		errc: make(chan error, 1), done: make(chan streamEnd), started: map[types.UID]bool{}, said: map[string]bool{}}
	sel := labels.Set{spark.LabelWorkflowUID: string(wf.UID)}
	if !o.Executors {
		sel[spark.LabelRole] = spark.RoleDriver
	}
	go f.watch(ctx, sel.String())
	select {
	case <-f.synced:
	case err := <-f.errc:
		return err
	case <-ctx.Done():
		return nil
	}
	if o.Node != "" {
		n, err := FindNode(wf, SparkNodes(wf, Drivers(wf, f.snapshot())), o.Node)
		if err != nil {
			return err
		}
		f.nodeID = n.ID
	}
	return f.run(ctx, cancel)
}

type follower struct {
	kube   kubernetes.Interface
	wfc    wfclient.Interface
	o      Options
	wf     *wfv1.Workflow
	nodeID string // the one node followed; empty: every Spark node
	output *Output

	mu      sync.Mutex
	pods    map[types.UID]*corev1.Pod
	changed chan struct{} // a pod changed (buffered 1: one pending poke is enough)
	synced  chan struct{} // closed after the first List
	errc    chan error    // the watch cannot go on (refused)

	done     chan streamEnd
	active   int
	queue    []Target
	started  map[types.UID]bool // pods queued or streamed, never twice
	streamed int                // streams begun
	problems []error            // of streams
	current  []error            // of nodes, as the latest plan found them
	said     map[string]bool    // notices and problems said once
}

type streamEnd struct {
	t   Target
	err error
}

// several: lines need their pod's name. One node's drivers are followed
// one after the other (a new attempt starts after the last ended), so
// only several nodes, every attempt at once, or executors need it.
func (f *follower) several() bool {
	return f.nodeID == "" || f.o.Attempt == AllAttempts || f.o.Executors
}

func (f *follower) run(ctx context.Context, cancel context.CancelFunc) error {
	poll := f.o.Poll
	if poll <= 0 {
		poll = 2 * time.Second
	}
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	rechecked := false
	for {
		f.plan()
		f.startReady(ctx)
		if f.over() {
			if !rechecked {
				// The watch may lag the Workflow: list once more before
				// deciding nothing else will come.
				rechecked = true
				if err := f.relist(ctx); err != nil {
					return f.stop(cancel, err)
				}
				continue
			}
			f.dropUnstarted()
			return f.stop(cancel, summarize(append(f.problems, f.current...), f.streamed > 0, f.o.Notices))
		}
		rechecked = false
		select {
		case <-ctx.Done():
			return f.stop(cancel, nil)
		case err := <-f.errc:
			return f.stop(cancel, err)
		case <-f.changed:
		case end := <-f.done:
			f.active--
			if end.err != nil {
				if fatal(ctx, end.err) {
					return f.stop(cancel, end.err)
				}
				f.problem(end.err)
			}
		case <-ticker.C:
			if err := f.refresh(ctx); err != nil {
				return f.stop(cancel, err)
			}
		}
	}
}

// stop ends every stream and returns err once they have ended; an
// interrupted follow (ctx ended from outside) is no error.
func (f *follower) stop(cancel context.CancelFunc, err error) error {
	cancel()
	for ; f.active > 0; f.active-- {
		<-f.done
	}
	if werr := f.output.Err(); werr != nil {
		return werr
	}
	return err
}

// plan queues the pods the selection names that are not queued yet.
func (f *follower) plan() {
	pods := f.snapshot()
	drivers := Drivers(f.wf, pods)
	nodes := SparkNodes(f.wf, drivers)
	if f.nodeID != "" {
		var one []Node
		for _, n := range nodes {
			if n.ID == f.nodeID {
				one = append(one, n)
			}
		}
		nodes = one
	}
	targets, problems, _ := Plan(nodes, drivers, f.o.Selection, func(*corev1.Pod) ([]*corev1.Pod, error) { return pods, nil })
	for _, p := range problems {
		var nl *NotLaunchedError
		if errors.As(p, &nl) && !nl.Finished {
			f.notice(fmt.Sprintf("waiting for the driver of node %s", nl.Node))
		}
	}
	// A node's problems count as they are when the follow ends: a driver
	// reported before the watch showed it is not gone.
	f.current = problems
	for _, t := range targets {
		if !f.started[t.Pod.UID] {
			f.started[t.Pod.UID] = true
			f.queue = append(f.queue, t)
		}
	}
}

// startReady streams the queued pods whose container has started, while
// there are free streams; a queued pod deleted before it started has no
// log at all.
func (f *follower) startReady(ctx context.Context) {
	var waiting []Target
	for _, t := range f.queue {
		p := f.pod(t.Pod.UID)
		if p == nil {
			f.problem(fmt.Errorf("%s was deleted before it started: it wrote no log", t.what()))
			continue
		}
		t.Pod = p
		if reason := notStarted(p, t.Container); reason != "" {
			f.notice(fmt.Sprintf("waiting for %s to start (%s)", t.what(), reason))
			waiting = append(waiting, t)
			continue
		}
		if f.active >= MaxStreams {
			f.notice(fmt.Sprintf("following %d logs, the most at once: the others wait for one to end", MaxStreams))
			waiting = append(waiting, t)
			continue
		}
		f.active++
		f.streamed++
		if !t.Executor && !f.several() {
			fmt.Fprintf(f.o.Notices, "sparkplug: following %s\n", t.what())
		}
		w := f.output.Stream(prefixOf(t, f.several()))
		go func(t Target) {
			f.done <- streamEnd{t, printLog(ctx, f.kube, f.o, t, true, w)}
		}(t)
	}
	f.queue = waiting
}

// over: nothing more will be followed. The node followed has finished
// (with --attempt N: or that attempt was streamed), or, following every
// node, the workflow has; and no stream runs or waits for a free one.
func (f *follower) over() bool {
	if f.active > 0 {
		return false
	}
	for _, t := range f.queue {
		if notStarted(t.Pod, t.Container) == "" {
			return false // waits for a free stream only
		}
	}
	if f.nodeID == "" {
		return f.wf.Status.Phase.Completed()
	}
	if f.o.Attempt > 0 && f.streamed > 0 && len(f.queue) == 0 {
		return true
	}
	n, ok := f.wf.Status.Nodes[f.nodeID]
	return !ok || n.Fulfilled()
}

// dropUnstarted: what is over leaves pods that never started; they have
// no log.
func (f *follower) dropUnstarted() {
	for _, t := range f.queue {
		f.problem(&PendingError{What: t.what() + ", whose node finished,", Reason: notStarted(t.Pod, t.Container)})
	}
	f.queue = nil
}

// refresh reads the Workflow again. One deleted, or replaced by another
// of its name, ends the follow.
func (f *follower) refresh(ctx context.Context) error {
	wf, err := f.wfc.ArgoprojV1alpha1().Workflows(f.o.Namespace).Get(ctx, f.o.Workflow, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) || err == nil && wf.UID != f.wf.UID:
		return fmt.Errorf("workflow %s was deleted while its logs were followed", f.o.Workflow)
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		return apiError(err, "get workflow "+f.o.Workflow, f.o.Namespace)
	case err != nil:
		return nil // read again at the next tick
	}
	f.wf = wf
	return nil
}

func (f *follower) problem(err error) {
	if !f.said["problem: "+err.Error()] {
		f.said["problem: "+err.Error()] = true
		f.problems = append(f.problems, err)
	}
}

func (f *follower) notice(msg string) {
	if !f.said[msg] {
		f.said[msg] = true
		fmt.Fprintf(f.o.Notices, "sparkplug: %s\n", msg)
	}
}

func (f *follower) snapshot() []*corev1.Pod {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]*corev1.Pod, 0, len(f.pods))
	for _, p := range f.pods {
		out = append(out, p)
	}
	return out
}

func (f *follower) pod(uid types.UID) *corev1.Pod {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pods[uid]
}

func (f *follower) poke() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// watch keeps f.pods: a List, then a Watch from its resourceVersion, and
// again when the watch ends. A refusal, or a first List that fails, ends
// it (on errc); later errors are retried every second.
func (f *follower) watch(ctx context.Context, selector string) {
	client := f.kube.CoreV1().Pods(f.o.Namespace)
	first := true
	for ctx.Err() == nil {
		list, err := client.List(ctx, metav1.ListOptions{LabelSelector: selector})
		var w watch.Interface
		if err == nil {
			f.replace(list.Items)
			if first {
				first = false
				close(f.synced)
			}
			w, err = client.Watch(ctx, metav1.ListOptions{LabelSelector: selector, ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
		}
		if err != nil {
			if first || apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
				f.errc <- apiError(err, "list and watch pods", f.o.Namespace)
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		f.consume(ctx, w)
		w.Stop()
	}
}

// consume applies a watch's events until it ends.
func (f *follower) consume(ctx context.Context, w watch.Interface) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return
			}
			p, isPod := ev.Object.(*corev1.Pod)
			if !isPod {
				continue
			}
			f.mu.Lock()
			if ev.Type == watch.Deleted {
				delete(f.pods, p.UID)
			} else if ev.Type != watch.Bookmark {
				f.pods[p.UID] = p
			}
			f.mu.Unlock()
			f.poke()
		}
	}
}

func (f *follower) replace(items []corev1.Pod) {
	f.mu.Lock()
	f.pods = make(map[types.UID]*corev1.Pod, len(items))
	for i := range items {
		f.pods[items[i].UID] = &items[i]
	}
	f.mu.Unlock()
	f.poke()
}

// relist reads the pods afresh, past the watch.
func (f *follower) relist(ctx context.Context) error {
	sel := labels.Set{spark.LabelWorkflowUID: string(f.wf.UID)}
	if !f.o.Executors {
		sel[spark.LabelRole] = spark.RoleDriver
	}
	list, err := f.kube.CoreV1().Pods(f.o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return apiError(err, "list pods", f.o.Namespace)
	}
	f.replace(list.Items)
	return nil
}
