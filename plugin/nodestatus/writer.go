package nodestatus

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	argov1 "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/typed/workflow/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Options tune a Writer.
type Options struct {
	Rules
	// MinGap is the least time between two patches of one TaskSet: every
	// patch is an event the controller answers with a Workflow update.
	MinGap time.Duration
	// Tries bounds the patches of one batch that meet a conflict.
	Tries int
	// Timeout bounds one patch or read: a request the API server (or
	// the network) leaves hanging must not hold up every later result of
	// the workflow; the batch is tried again at the next tick.
	Timeout time.Duration
	Now     func() time.Time
}

// DefaultOptions are a Writer's defaults, from the node-identity design.
func DefaultOptions() Options {
	return Options{Rules: Rules{ProgressInterval: 30 * time.Second, Hold: 10 * time.Second, InterimHold: DefaultInterimHold},
		MinGap: time.Second, Tries: 3, Timeout: 5 * time.Second, Now: time.Now}
}

// DefaultInterimHold is Rules.InterimHold's default: a driver on a node
// that has its image starts within a few seconds, Kueue admits a Workload
// that fits at once, and a driver's log is stored in seconds; a wait
// longer than this is worth showing.
const DefaultInterimHold = 10 * time.Second

// Writer writes the results of one workflow's Spark nodes into its
// WorkflowTaskSet's status.nodes, where Argo's controller reads them
// whoever wrote them. Results are offered with Set at any time; Run
// batches them into at most one patch per MinGap.
type Writer struct {
	tasksets argov1.WorkflowTaskSetInterface
	name     string
	uid      string
	// view and workflow read the cached TaskSet and Workflow.
	view     func() *wfv1.WorkflowTaskSet
	workflow func() *wfv1.Workflow
	opts     Options
	log      *slog.Logger
	// written is called with what each successful patch wrote.
	written func(node string, res wfv1.NodeResult)

	kick chan struct{}
	// flushing is held by the one Flush that runs.
	flushing sync.Mutex

	mu     sync.Mutex
	want   map[string]Want
	mem    Memory
	latest *wfv1.WorkflowTaskSet
	// incarnation is the Workflow's startedAt the memory is of: argo
	// retry starts the nodes it resets over.
	incarnation string
	// limit is the most one patch carries (Fit): MaxPatchBytes, halved
	// each time the API server refuses a batch of several nodes for its
	// size.
	limit int
	// oversized are the nodes whose result is written as TooLarge's
	// failure, with why; abandoned those of which the API server refused
	// even that: nothing more of them is tried. Both are of the
	// incarnation.
	oversized map[string]string
	abandoned map[string]bool
}

// New returns the writer of the TaskSet name (the workflow's name) of
// the workflow with uid, reading views from view and workflow.
func New(tasksets argov1.WorkflowTaskSetInterface, name, uid string, view func() *wfv1.WorkflowTaskSet, workflow func() *wfv1.Workflow,
	opts Options, log *slog.Logger, written func(string, wfv1.NodeResult)) *Writer {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Tries < 1 {
		opts.Tries = 1
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultOptions().Timeout
	}
	return &Writer{tasksets: tasksets, name: name, uid: uid, view: view, workflow: workflow, opts: opts, log: log, written: written,
		kick: make(chan struct{}, 1), want: map[string]Want{}, mem: Memory{Terminal: map[string]bool{}, Vanished: map[string]time.Time{}},
		limit: MaxPatchBytes, oversized: map[string]string{}, abandoned: map[string]bool{}}
}

// Set offers the result node should show now, derived in incarnation
// (Incarnation of the Workflow the pass read): a result of another
// incarnation than the Workflow's when the batch is picked is never
// written (a pass that read the Workflow before `argo retry`). The node
// is in the result's state since this call, unless the result offered
// before was in the same state (Want.Since, Rules.InterimHold).
func (w *Writer) Set(node, incarnation string, res wfv1.NodeResult) {
	now := w.opts.Now()
	w.mu.Lock()
	old, ok := w.want[node]
	changed := !ok || !Same(old.Result, res) || old.Incarnation != incarnation
	if changed {
		written, since := old.Written, old.Since
		if old.Incarnation != incarnation {
			written = time.Time{}
		}
		if !ok || old.Incarnation != incarnation || !inSameState(old.Result, res) {
			since = now
		}
		w.want[node] = Want{Result: res, Written: written, Incarnation: incarnation, Since: since}
	}
	w.mu.Unlock()
	if changed {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

// Wanted returns the result last offered for node.
func (w *Writer) Wanted(node string) (wfv1.NodeResult, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	x, ok := w.want[node]
	return x.Result, ok
}

// SawFinal says whether this writer wrote or saw node's entry final in
// incarnation (a Workflow's startedAt, Incarnation). Argo removes a
// fulfilled node's entry a moment before its Workflow shows the node
// fulfilled; a run that ended before it made anything that stays (a
// Kueue wait ended by the template's timeout, a Workload Kueue can never
// admit) leaves nothing else to say the node is done.
func (w *Writer) SawFinal(node, incarnation string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.incarnation == incarnation && w.mem.Terminal[node]
}

// Run writes until ctx is done: when a result is offered, and every
// second for the results that had to wait.
func (w *Writer) Run(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		case <-tick.C:
		}
		if gap := w.opts.MinGap - w.opts.Now().Sub(last); gap > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(gap):
			}
		}
		if w.Flush(ctx) {
			last = w.opts.Now()
		}
	}
}

// Flush writes one batch now, if there is anything to write; it reports
// whether it patched. One Flush runs at a time; Set is never held up by
// its API calls.
func (w *Writer) Flush(ctx context.Context) bool {
	w.flushing.Lock()
	defer w.flushing.Unlock()
	patched := false
	var fresh *wfv1.WorkflowTaskSet // read after a conflict
	for try := 0; try < w.opts.Tries; try++ {
		now := w.opts.Now()
		view, batch, withdraw := w.pick(fresh, now)
		if len(batch) == 0 && len(withdraw) == 0 {
			return patched
		}
		body, err := Patch(view.ResourceVersion, batch, withdraw...)
		if err != nil {
			w.log.Error("cannot encode node results", "error", err.Error())
			return patched
		}
		callCtx, cancel := context.WithTimeout(ctx, w.opts.Timeout)
		got, err := w.tasksets.Patch(callCtx, w.name, types.MergePatchType, body, metav1.PatchOptions{}, "status")
		cancel()
		switch {
		case err == nil:
			w.wrote(got, batch, now)
			w.log.Debug("node results written", "nodes", len(batch), "withdrawn", len(withdraw), "resource_version", got.ResourceVersion)
			return true
		case apierrors.IsConflict(err):
			// The TaskSet changed since the view: read it, and decide
			// again on what it holds now.
			getCtx, cancel := context.WithTimeout(ctx, w.opts.Timeout)
			fresh, err = w.tasksets.Get(getCtx, w.name, metav1.GetOptions{})
			cancel()
			if err != nil {
				w.log.Info("cannot read the task set after a conflict; trying again later", "error", err.Error())
				return patched
			}
		case IsTooLarge(err):
			// Never the same again: a smaller batch, or the node's
			// failure, is tried next (refused).
			w.refused(batch, len(body), err)
			return patched
		case apierrors.IsNotFound(err):
			// Argo re-creates a deleted TaskSet; the next view is it.
			w.mu.Lock()
			w.latest = nil
			w.mu.Unlock()
			return patched
		default:
			w.log.Info("cannot write node results; trying again later", "error", err.Error())
			return patched
		}
	}
	return patched
}

// pick chooses a batch, and the applied entries to withdraw, from the
// newest view (fresh, when a read after a conflict gave one), under the
// writer's lock.
func (w *Writer) pick(fresh *wfv1.WorkflowTaskSet, now time.Time) (*wfv1.WorkflowTaskSet, map[string]wfv1.NodeResult, []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if fresh != nil {
		w.latest = fresh
	}
	if len(w.want) == 0 {
		return nil, nil, nil
	}
	view, wf := w.newest(), w.workflow()
	if wf != nil {
		inc := Incarnation(wf)
		if inc != w.incarnation {
			w.incarnation = inc
			w.mem = Memory{Terminal: map[string]bool{}, Vanished: map[string]time.Time{}}
			w.oversized, w.abandoned = map[string]string{}, map[string]bool{}
		}
		for id, x := range w.want {
			if x.Incarnation != inc {
				delete(w.want, id) // derived before `argo retry`: never written
			}
		}
	}
	if ok, why := MayWrite(view, wf, w.uid); !ok {
		w.log.Debug("not writing node results", "why", why)
		return nil, nil, nil
	}
	for id := range w.abandoned {
		delete(w.want, id)
	}
	v := Pick(view, wf, w.want, &w.mem, w.opts.Rules, now)
	for _, id := range v.Drop {
		delete(w.want, id)
	}
	if len(v.Batch) == 0 {
		return view, nil, v.Withdraw
	}
	batch, replaced := Fit(v.Batch, w.oversized, w.limit)
	for id, why := range replaced {
		if _, ok := w.oversized[id]; !ok {
			w.log.Warn("node result too large for the task set; written as a failure", "node", id, "why", why)
			w.oversized[id] = why
		}
	}
	return view, batch, v.Withdraw
}

// refused takes the API server's refusal of a batch for its size (size:
// the patch's bytes): a batch of several nodes is cut smaller from now on
// (limit halved); a node's result alone is written as TooLarge's failure
// next; a node whose failure was refused too is abandoned. So every node
// gets a bounded number of tries, never the same patch forever.
func (w *Writer) refused(batch map[string]wfv1.NodeResult, size int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(batch) > 1 {
		w.limit = max(size/2, 1)
		w.log.Warn("node results too large for one patch; writing them in smaller ones", "nodes", len(batch), "bytes", size, "limit", w.limit, "error", err.Error())
		return
	}
	for id := range batch {
		if _, ok := w.oversized[id]; ok {
			w.log.Error("node result not written: the API server refuses even its failure for size; the node is left to the workflow's own limits", "node", id, "bytes", size, "error", err.Error())
			w.abandoned[id] = true
			delete(w.want, id)
			continue
		}
		w.oversized[id] = fmt.Sprintf("the API server refused its %d-byte patch: %s", size, err.Error())
	}
}

// wrote records a batch the TaskSet took.
func (w *Writer) wrote(got *wfv1.WorkflowTaskSet, batch map[string]wfv1.NodeResult, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.latest = got
	for id, res := range batch {
		if x, ok := w.want[id]; ok {
			x.Written = now
			w.want[id] = x
		}
		if res.Phase.Completed() {
			// Its final entry, once it vanishes while the node is listed,
			// is Argo's removal: held (Rules.Hold).
			w.mem.Terminal[id] = true
		}
		if w.written != nil {
			w.written(id, res)
		}
	}
}

// newest is the newest TaskSet known: the cached one, or the one a patch
// or read returned, whichever has the higher resourceVersion (of one
// object: a re-created TaskSet's cache view wins).
func (w *Writer) newest() *wfv1.WorkflowTaskSet {
	cached := w.view()
	switch {
	case w.latest == nil:
		return cached
	case cached == nil:
		return w.latest
	case cached.UID != w.latest.UID:
		return cached
	}
	a, errA := strconv.ParseUint(cached.ResourceVersion, 10, 64)
	b, errB := strconv.ParseUint(w.latest.ResourceVersion, 10, 64)
	if errA != nil || errB != nil || a >= b {
		return cached
	}
	return w.latest
}

// Incarnation is a Workflow's incarnation: its status.startedAt, which
// `argo retry` renews, in RFC 3339.
func Incarnation(wf *wfv1.Workflow) string {
	return wf.Status.StartedAt.UTC().Format(time.RFC3339)
}
