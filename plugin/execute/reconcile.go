package execute

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/nodestatus"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
	"github.com/sparkplug-io/sparkplug/plugin/step"
)

// flow is one followed workflow: its cache, its TaskSet writer, its
// parsed steps, and whether this process may write its TaskSet's status.
type flow struct {
	scope  *scope.Scope
	writer *nodestatus.Writer
	// cancel stops the writer (Release).
	cancel context.CancelFunc

	mu    sync.Mutex
	steps map[string]parsed // by node id: a node's template never changes
	spark map[string]bool   // by node id: is it a spark task (scope.SparkTasks)

	// listed is when a pass first saw each node listed (listedFor).
	listed map[string]time.Time
	// removed is when a pass first saw each node's final entry gone
	// (removedFor).
	removed map[string]time.Time

	// access is closed once denied is known.
	access chan struct{}
	denied string
}

// parsed is a node's step, or why its template cannot run.
type parsed struct {
	step *step.Step
	err  error
}

// flowKey names one node of one workflow in the work due (Core.work).
func flowKey(uid, node string) string { return uid + "\x00" + node }

func splitKey(key string) (uid, node string) {
	uid, node, _ = strings.Cut(key, "\x00")
	return uid, node
}

func (c *Core) newFlow(sc *scope.Scope) *flow {
	wf := sc.Workflow
	fl := &flow{scope: sc, steps: map[string]parsed{}, spark: map[string]bool{}, listed: map[string]time.Time{}, removed: map[string]time.Time{}, access: make(chan struct{})}
	wo := nodestatus.DefaultOptions()
	wo.ProgressInterval, wo.MinGap, wo.Hold, wo.Now = c.opts.ProgressInterval, c.opts.WriteGap, c.opts.HoldVanished, c.opts.Now
	wo.InterimHold = c.opts.InterimHold
	fl.writer = nodestatus.New(c.clients.Workflows.ArgoprojV1alpha1().WorkflowTaskSets(wf.Namespace), wf.Name, wf.UID,
		sc.TaskSet, sc.WorkflowObject, wo, c.log.With("workflow", wf.Name, "namespace", wf.Namespace), c.wroteResult(wf))
	ctx, cancel := context.WithCancel(c.ctx)
	fl.cancel = cancel
	go fl.writer.Run(ctx)
	go func() {
		fl.denied = c.reviewAccess(wf)
		close(fl.access)
		if fl.denied != "" {
			c.log.Error("sparkplug cannot report results: every spark node it is asked about fails", "workflow", wf.Name, "why", fl.denied)
		}
	}()
	go func() {
		// The first pass once the cache holds the TaskSet and the runs.
		select {
		case <-sc.Synced():
			c.passAll(fl)
		case <-c.ctx.Done():
		}
	}()
	return fl
}

// listedFor is how long node has been seen listed, by the passes over it
// since the first.
func (fl *flow) listedFor(node string, now time.Time) time.Duration {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	since, ok := fl.listed[node]
	if !ok {
		fl.listed[node] = now
		return 0
	}
	return now.Sub(since)
}

// removedFor is how long node's final entry has been seen gone, by the
// passes since the first that saw it gone; gone false forgets it (the
// entry is back, or was never final).
func (fl *flow) removedFor(node string, gone bool, now time.Time) time.Duration {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	since, ok := fl.removed[node]
	switch {
	case !gone:
		delete(fl.removed, node)
		return 0
	case !ok:
		fl.removed[node] = now
		return 0
	}
	return now.Sub(since)
}

// accessDenied waits up to wait for the access review, and returns what
// it found missing ("" when allowed or not known in time).
func (fl *flow) accessDenied(ctx context.Context, wait time.Duration) string {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-fl.access:
		return fl.denied
	case <-t.C:
	case <-ctx.Done():
	}
	return ""
}

// reviewAccess asks the API server whether this process may patch the
// status of the workflow's TaskSet, which is how every result reaches
// Argo; it returns the missing permission, or "" when allowed (or when
// the review itself fails: the writes then say).
//
// The answer is kept per namespace for accessReviewTTL: a controller
// following a thousand workflows of a namespace asks once, not once per
// workflow (RBAC grants the permission per namespace; a Role that names
// single TaskSets is not supported).
func (c *Core) reviewAccess(wf spark.WorkflowRef) string {
	if denied, ok := c.reviews.get(wf.Namespace, c.opts.Now()); ok {
		return denied
	}
	denied, known := c.askAccess(wf)
	if known {
		c.reviews.set(wf.Namespace, denied, c.opts.Now())
	}
	return denied
}

// askAccess is one SelfSubjectAccessReview for reviewAccess; known is
// false when the review itself failed.
func (c *Core) askAccess(wf spark.WorkflowRef) (denied string, known bool) {
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	r, err := c.clients.Kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: wf.Namespace, Verb: "patch", Group: "argoproj.io", Resource: "workflowtasksets", Subresource: "status", Name: wf.Name,
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		c.log.Info("cannot review sparkplug's own permissions; going on", "error", err.Error())
		return "", false
	}
	if r.Status.Allowed {
		return "", true
	}
	return fmt.Sprintf("sparkplug may not patch workflowtasksets/status in namespace %s, where it writes each Spark node's result: "+
		"grant its ServiceAccount that permission (manifests/rbac.yaml and the Helm chart do)", wf.Namespace), true
}

// wroteResult is the writer's callback: one line per result it wrote.
func (c *Core) wroteResult(wf spark.WorkflowRef) func(string, wfv1.NodeResult) {
	return func(node string, res wfv1.NodeResult) {
		c.metrics.Result(string(res.Phase))
		level := c.log.Debug
		if res.Phase.Completed() {
			level = c.log.Info
		}
		level("node result written", "workflow", wf.Name, "node", node, "phase", res.Phase, "message", res.Message)
	}
}

// passAll asks for a pass over every spark node the workflow's TaskSet
// lists.
func (c *Core) passAll(fl *flow) {
	fl.mu.Lock()
	ids := scope.SparkTasks(fl.scope.TaskSet(), fl.spark)
	fl.mu.Unlock()
	for _, id := range ids {
		c.work.Add(flowKey(fl.scope.Workflow.UID, id))
	}
}

// Run does the Core's work until ctx is done: Options.Workers reconcile
// the nodes due a pass, and every Options.Resync every listed node is due
// again (time limits and backoffs need no event). The periodic cleanup is
// the process's, run once (Cleaner, cleanup.Run).
func (c *Core) Run(ctx context.Context) {
	defer c.stop() // the flows' writers and reviews
	var wg sync.WaitGroup
	for range c.opts.Workers {
		wg.Go(func() {
			for c.processNext(ctx) {
			}
		})
	}
	resync := time.NewTicker(c.opts.Resync)
	defer func() {
		resync.Stop()
		c.work.ShutDown()
		wg.Wait()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-resync.C:
			for _, fl := range c.allFlows() {
				c.passAll(fl)
			}
		}
	}
}

func (c *Core) allFlows() []*flow {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*flow, 0, len(c.flows))
	for _, fl := range c.flows {
		out = append(out, fl)
	}
	return out
}

// processNext reconciles one node due a pass; false once the work shut
// down.
func (c *Core) processNext(ctx context.Context) bool {
	key, shutdown := c.work.Get()
	if shutdown {
		return false
	}
	defer c.work.Done(key)
	uid, node := splitKey(key)
	fl := c.flowOf(uid)
	if fl == nil {
		c.work.Forget(key)
		return true
	}
	if err := c.reconcile(ctx, fl, node); err != nil {
		c.log.Info("node not reconciled; trying again", "workflow", fl.scope.Workflow.Name, "node", node, "error", err.Error())
		c.work.AddRateLimited(key)
		return true
	}
	c.work.Forget(key)
	return true
}

// reconcile is one pass over one node: gather its snapshot, decide
// (package decide), act on the plan and offer its result to the writer.
// A node the TaskSet does not list, or a workflow that may no longer be
// written (rule R3), gets nothing: an ending workflow's drivers are the
// sweep's (package cleanup).
func (c *Core) reconcile(ctx context.Context, fl *flow, node string) error {
	sc := fl.scope
	select {
	case <-sc.Synced():
	default:
		return nil // the first pass comes when it syncs
	}
	select {
	case <-fl.access:
		if fl.denied != "" {
			return nil // nothing could be reported: every reply fails the node instead
		}
	default:
	}
	ts, wf := sc.TaskSet(), sc.WorkflowObject()
	if ts == nil || wf == nil {
		return nil
	}
	tmpl, listed := ts.Spec.Tasks[node]
	if !listed {
		return nil
	}
	if ok, _ := nodestatus.MayWrite(ts, wf, sc.Workflow.UID); !ok {
		return nil
	}
	st, ok, err := fl.step(node, &tmpl, c.opts, func(st *step.Step) error { return c.admit(st, sc.Workflow, node) })
	if !ok {
		return nil // another plugin's task
	}
	if why := scope.Refused(wf); why != "" {
		// Its nodes were not read (the registry said so, once): decide
		// says when the node fails (and the writer never writes over a
		// final entry, nor one it saw vanish). A driver launched before is
		// left to the sweep of the ending workflow.
		c.offer(fl, node, wf, decide.Unread(why, fl.listedFor(node, c.opts.Now()), c.opts.HoldVanished))
		return nil
	}
	log := c.log.With("workflow", sc.Workflow.Name, "namespace", sc.Workflow.Namespace, "node", node)
	if err != nil {
		// Checked once per node, said once.
		if _, said := fl.writer.Wanted(node); !said {
			log.Info("invalid spark step", "error", err.Error())
		}
		c.offer(fl, node, wf, decide.Unrunnable(err))
		return nil
	}
	if wf.Status.StartedAt.IsZero() {
		return nil // not started: no incarnation to launch in yet (R4)
	}
	r := c.newPass(ctx, fl, node, st, wf, log.With("template", tmpl.Name))
	snap := r.gather(ts, wf)
	for passes := 1; ; passes++ {
		pl := decide.Decide(snap, r.policy)
		changes := pl.Launch > 0 || pl.Stop != decide.LimitNone || pl.Abandon || pl.Archive || pl.KueueEnqueue > 0 || len(pl.KueueDequeue) > 0 || pl.Refuse > 0 || pl.Discard != nil ||
			(pl.Report && snap.EntryPhase != pl.Outcome.Phase)
		if changes && c.log.Enabled(ctx, slog.LevelDebug) {
			// What a pass that changes something saw and chose; passes that
			// change nothing (most: every --resync) say nothing.
			r.log.Debug("pass", "incarnation", r.incarnation, "entry", entryPhase(snap.EntryPhase), "fulfilled", snap.Fulfilled,
				"run", runSummary(snap.Run), "launch", pl.Launch, "stop", string(pl.Stop), "abandon", pl.Abandon, "refuse", pl.Refuse, "report", pl.Report, "phase", pl.Outcome.Phase)
		}
		befell, err := r.act(snap, pl)
		if err != nil || befell == nil {
			return err
		}
		if passes == maxChained {
			// decide asked for actions after actions beyond any it plans
			// (a refusal counted, a launch under drawn names): a bug, not
			// a reason to spin.
			return fmt.Errorf("%d passes in a row each befell something; the last: %s %s", passes, befell.Kind, befell.Message)
		}
		// What befell an action is the next pass's to decide, at once:
		// on the snapshot this pass saw and acted on, with what it
		// recorded (a refusal is counted in memory) and what it planned.
		snap.Befell, snap.Acted, snap.Failures = befell, &pl, r.core.failures.of(r.wf.UID, r.node)
	}
}

// maxChained bounds the passes one reconcile runs at once, each on what
// befell the one before: a companion refused or a name held is decided
// (a driver kept, or deleted and its refusal counted; a launch under
// drawn names), what that befalls is decided, and a counted refusal is
// reported.
const maxChained = 5

// offer gives the writer the result of a plan made without a pass
// (decide.Unread, decide.Unrunnable): no driver, nothing else to do.
func (c *Core) offer(fl *flow, node string, wf *wfv1.Workflow, pl decide.Plan) {
	if pl.Report {
		fl.writer.Set(node, nodestatus.Incarnation(wf), c.result(pl.Outcome, nil, pl.JSON, nil, nil))
	}
}

// newPass is a pass over node, of step st, in the incarnation of wf (the
// Workflow the pass reads).
func (c *Core) newPass(ctx context.Context, fl *flow, node string, st *step.Step, wf *wfv1.Workflow, log *slog.Logger) *pass {
	sc := fl.scope
	r := &pass{core: c, ctx: ctx, log: log, wf: sc.Workflow, scope: sc, flow: fl, node: node, step: st,
		now: c.opts.Now(), incarnation: nodestatus.Incarnation(wf)}
	r.policy = decide.Policy{Body: st.Body, Timeout: st.Timeout, NotFoundGrace: c.opts.NotFoundGrace, ProgressInterval: c.opts.ProgressInterval, KueueQueue: st.KueueQueue,
		SparkSubmit: st.Body.LauncherFor(c.opts.Launcher) == spec.LauncherSparkSubmit}
	return r
}

// entryPhase and runSummary describe a snapshot in the debug log.
func entryPhase(p state.Phase) string {
	if p == "" {
		return "none"
	}
	return string(p)
}

func runSummary(rn *decide.Run) string {
	if rn == nil {
		return "none"
	}
	var b strings.Builder
	for i, p := range rn.Attempts {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(p.Name + "@" + p.Annotations[spark.AnnotationIncarnation])
	}
	switch {
	case rn.Ghost:
		b.WriteString(" (ghost)")
	case rn.Tomb != nil:
		b.WriteString(" (tombstone)")
	}
	return b.String()
}

// step is the node's parsed step, parsed and admitted once: ok is false
// for another plugin's template; err says why a spark template cannot run.
func (fl *flow) step(node string, tmpl *wfv1.Template, opts Options, admit func(*step.Step) error) (*step.Step, bool, error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if p, ok := fl.steps[node]; ok {
		return p.step, true, p.err
	}
	st, ok, err := step.Parse(tmpl, opts.defaults())
	if !ok {
		return nil, false, nil
	}
	if err == nil {
		st.SetKueueQueue(opts.KueueQueue)
		err = admit(st)
	}
	fl.steps[node] = parsed{step: st, err: err}
	return st, true, err
}

// pass is one reconcile of one node: what act needs to carry out the
// plan.
type pass struct {
	core   *Core
	ctx    context.Context
	log    *slog.Logger
	wf     spark.WorkflowRef
	scope  *scope.Scope
	flow   *flow
	node   string
	step   *step.Step
	policy decide.Policy
	now    time.Time
	// incarnation is the Workflow's startedAt: the runs of this node's
	// current incarnation carry it (objects.Run.Incarnation).
	incarnation string
	// record is what the node's entry records of its driver, and started
	// when Argo started the node, as gathered (trust.go).
	record  entryRecord
	started time.Time
}

// afterDone is how long after a background job (a spark-submit run, a
// log upload) returns its node is due a pass again: the job is marked done
// just after its function returns.
const afterDone = 100 * time.Millisecond
