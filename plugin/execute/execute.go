package execute

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/build"
	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/metrics"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// Output parameter names every spark node reports.
const (
	OutputApplicationID = "application-id"
	OutputDriverPod     = "driver-pod"
	OutputSparkUI       = "spark-ui"
	OutputAttempt       = "attempt"
)

// ErrBadRequest marks a request that is not a template.execute request at
// all (the server answers 400).
var ErrBadRequest = errors.New("bad request")

// Core answers template.execute requests.
type Core struct {
	opts     Options
	clients  scope.Clients
	scopes   *scope.Registry
	builder  *build.Builder
	log      *slog.Logger
	locks    keyedMutex
	failures submissionFailures
	missing  missingSince
	recorder Recorder
	events   eventLog
	metrics  *metrics.Metrics
	// companions remembers the drivers whose owned objects are known to
	// exist.
	companions uidSet
	// discarded remembers the drivers of refused launches this process
	// deleted, which the cache may show for a while (runs skips them).
	discarded uidSet
	// submits are the spark-submit runs in flight.
	submits submitRuns
}

// New returns a Core. opts must have been validated; recorder may be nil
// (no Events). It registers itself for the registry's workflow-ending
// callback, to delete the drivers of stopped workflows.
func New(opts Options, clients scope.Clients, scopes *scope.Registry, builder *build.Builder, recorder Recorder, m *metrics.Metrics, log *slog.Logger) *Core {
	c := &Core{opts: opts, clients: clients, scopes: scopes, builder: builder, recorder: recorder, metrics: m, log: log,
		failures: submissionFailures{m: map[string]submissionFailure{}}, missing: missingSince{m: map[string]time.Time{}},
		submits: submitRuns{now: opts.Now}}
	scopes.OnEnding(c.OnWorkflowEnding)
	return c
}

// Execute answers one request. A nil reply node means "not a spark
// template". Errors wrapping scope.ErrNotReady deserve a 503, ErrBadRequest
// a 400; any other error is a transient failure (503) as well.
func (c *Core) Execute(ctx context.Context, args executor.ExecuteTemplateArgs) (executor.ExecuteTemplateReply, error) {
	var none executor.ExecuteTemplateReply
	if args.Template == nil || args.Workflow == nil {
		return none, fmt.Errorf("%w: the request needs workflow and template", ErrBadRequest)
	}
	raw, ok, err := spec.BodyOf(args.Template)
	if err != nil {
		return none, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	if !ok {
		return none, nil // another plugin's template
	}
	meta := args.Workflow.ObjectMeta
	if meta.Name == "" || meta.Namespace == "" || meta.UID == "" {
		return none, fmt.Errorf("%w: workflow.metadata needs name, namespace and uid", ErrBadRequest)
	}
	wf := spark.WorkflowRef{Name: meta.Name, Namespace: meta.Namespace, UID: meta.UID}
	log := c.log.With("workflow", wf.Name, "namespace", wf.Namespace, "template", args.Template.Name)

	body, err := spec.ParseWith(raw, c.opts.defaults())
	if err != nil {
		log.Info("invalid spark body", "error", err.Error())
		return failed(err.Error()), nil
	}
	timeout, err := parseTimeout(args.Template.Timeout)
	if err != nil {
		return failed(err.Error()), nil
	}
	key, err := identity.Key(args.Template)
	if err != nil {
		return none, fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	log = log.With("key", key)

	waitCtx, cancel := context.WithTimeout(ctx, c.opts.CacheWait)
	sc, err := c.scopes.Get(waitCtx, wf)
	cancel()
	if err != nil {
		return none, err
	}
	unlock := c.locks.lock(wf.UID + "/" + key)
	defer unlock()

	req := &request{core: c, ctx: ctx, log: log, wf: wf, scope: sc, body: body, key: key, timeout: timeout, now: c.opts.Now()}
	return req.answer()
}

// request is the state of one Execute call after parsing.
type request struct {
	core  *Core
	ctx   context.Context
	log   *slog.Logger
	wf    spark.WorkflowRef
	scope *scope.Scope
	body  *spec.SparkApplicationSpec
	key   string
	// timeout is the template's timeout over the whole run; 0 is none.
	timeout time.Duration
	now     time.Time
	// jsonResult: a node with this template is a loop's child, whose
	// outputs.result Argo decodes as JSON (set by tasks and report).
	jsonResult bool
}

func (r *request) answer() (executor.ExecuteTemplateReply, error) {
	tasks, err := r.tasks(r.scope.TaskSet())
	if err != nil {
		return executor.ExecuteTemplateReply{}, err
	}
	runs := r.runs(tasks)
	d := identity.Resolve(tasks, r.views(runs), r.now, r.core.opts.HandoutGrace)
	if d.Closed {
		// No open node in the cache: it may lag behind a node the
		// controller just added (the agent can ask within milliseconds),
		// and an old node's result must never answer a new one. Read the
		// TaskSet afresh. Steady-state polls always see their own open
		// node and never come here.
		ts, err := r.core.clients.Workflows.ArgoprojV1alpha1().WorkflowTaskSets(r.wf.Namespace).Get(r.ctx, r.wf.Name, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return executor.ExecuteTemplateReply{}, fmt.Errorf("get workflowtaskset %s/%s: %w", r.wf.Namespace, r.wf.Name, err)
		}
		if err == nil {
			if tasks, err = r.tasks(ts); err != nil {
				return executor.ExecuteTemplateReply{}, err
			}
			runs = r.runs(tasks)
			d = identity.Resolve(tasks, r.views(runs), r.now, r.core.opts.HandoutGrace)
		}
	}
	if d.Unlisted {
		r.log.Info("template not listed in the workflow's task set")
		return r.reply(wfv1.NodePending, "SUBMITTED: waiting for the workflow's task set to list this step", nil), nil
	}
	if d.Repeat != nil {
		return executor.ExecuteTemplateReply{Node: d.Repeat}, nil
	}

	for _, node := range d.Launch {
		run, failure := r.launch(node, 1, nil)
		if failure != nil {
			return *failure, nil
		}
		runs[node] = run
		if d.Answer == "" {
			d.Answer = node
		}
	}
	for from, to := range d.Adopt {
		if err := r.annotate(runs[from], map[string]string{spark.AnnotationAdoptedBy: to}); err != nil {
			return executor.ExecuteTemplateReply{}, err
		}
		r.log.Info("run adopted by an identical node", "run_node", from, "node", to)
	}
	// Every live driver of this template gets its ConfigMap and Services
	// back if a restart cut its launch short, not only the one answering
	// (identical nodes answer through one run at a time). Known-complete
	// drivers are skipped in memory, so this costs nothing in steady state.
	for _, rn := range runs {
		if rn.ghost || rn.tomb != nil || finished(rn.head()) {
			continue
		}
		if err := r.ensureCompanions(rn); err != nil {
			var refused *refusedError
			if !errors.As(err, &refused) {
				return executor.ExecuteTemplateReply{}, err
			}
			if head := rn.head(); head.Status.Phase == corev1.PodRunning {
				// It started with what it needed; it runs on.
				r.core.event(r.wf, corev1.EventTypeWarning, "SparkObjectRefused",
					fmt.Sprintf("%s of running driver %s not made again", refused.Error(), head.Name))
				r.core.companions.add(head.UID)
				continue
			}
			// A driver whose ConfigMap or Service cannot be made would
			// never start: its attempt is a refused submission.
			r.discard(rn.head())
			return *r.rejected(r.failKey(rn.nodeID, rn.attempt()), rn.nodeID, refused.Error()), nil
		}
	}
	if d.Answer == "" {
		return r.reply(wfv1.NodeRunning, "RUNNING: waiting for an identical step's driver to finish", nil), nil
	}
	return r.report(runs[d.Answer], d.Record)
}

// report answers from one run, advancing its restart policy.
func (r *request) report(run *run, record identity.Mode) (executor.ExecuteTemplateReply, error) {
	head := run.head()
	if w := r.scope.WorkflowObject(); w != nil && !r.jsonResult {
		// No node with the template listed (the agent asks again about
		// a node already done): the run's own node, or its adopter, says.
		for _, id := range []string{run.nodeID, head.Annotations[spark.AnnotationAdoptedBy]} {
			if loop, _ := identity.InLoop(w.Status.Nodes, id); loop {
				r.jsonResult = true
			}
		}
	}
	v, l := r.verdict(run)
	if l != limitNone && (v.Relaunch || v.Final) {
		// The attempt was ended by a limit, not by Spark: stop its driver.
		if err := r.stop(run, l, v.ended); err != nil {
			return executor.ExecuteTemplateReply{}, err
		}
	}
	if v.Relaunch {
		next, failure := r.launch(run.nodeID, run.attempt()+1, head)
		if failure != nil {
			return *failure, nil
		}
		run = next
		head = run.head()
		v, _ = r.verdict(run)
	}
	if v.Final && record != identity.ModeNone && (identity.Mode(head.Annotations[spark.AnnotationReportedMode]) != record || record == identity.ModeShared) {
		if err := r.annotate(run, map[string]string{
			spark.AnnotationReported:     r.now.UTC().Format(time.RFC3339),
			spark.AnnotationReportedMode: string(record),
		}); err != nil {
			return executor.ExecuteTemplateReply{}, err
		}
		r.log.Info("final result handed out", "node", run.nodeID, "driver", head.Name, "mode", record, "phase", v.Phase, "message", v.Message)
	}
	r.core.stateEvent(r.wf, run.nodeID, head.Name, v.Message)
	return r.reply(v.Phase, v.Message, head), nil
}

func (r *request) reply(phase wfv1.NodePhase, message string, driver *corev1.Pod) executor.ExecuteTemplateReply {
	node := &wfv1.NodeResult{Phase: phase, Message: message}
	if driver != nil {
		appID := driver.Labels[spark.LabelAppSelector]
		result := appID
		if r.jsonResult {
			// A JSON string: the loop's aggregated result is then the
			// list of application ids.
			result = strconv.Quote(appID)
		}
		node.Outputs = &wfv1.Outputs{
			Result: &result,
			Parameters: []wfv1.Parameter{
				{Name: OutputApplicationID, Value: wfv1.AnyStringPtr(appID)},
				{Name: OutputDriverPod, Value: wfv1.AnyStringPtr(driver.Name)},
				{Name: OutputSparkUI, Value: wfv1.AnyStringPtr(build.SparkUIURL(r.body, driver))},
				{Name: OutputAttempt, Value: wfv1.AnyStringPtr(strconv.Itoa(attemptOf(driver)))},
			},
		}
	}
	reply := executor.ExecuteTemplateReply{Node: node}
	switch phase {
	case wfv1.NodePending:
		reply.Requeue = &metav1.Duration{Duration: r.core.opts.RequeuePending}
	case wfv1.NodeRunning:
		reply.Requeue = &metav1.Duration{Duration: r.core.opts.RequeueRunning}
	}
	return reply
}

// tasks lists the TaskSet's nodes whose template has the request's key.
func (r *request) tasks(ts *wfv1.WorkflowTaskSet) ([]identity.Task, error) {
	if ts == nil {
		return nil, nil
	}
	// Argo drops a fulfilled node's TaskSet status before its task: for a
	// moment the node looks open again. The Workflow's own node status
	// says it is done.
	var nodes wfv1.Nodes
	if w := r.scope.WorkflowObject(); w != nil {
		nodes = w.Status.Nodes
	}
	var out []identity.Task
	r.jsonResult = false
	for id, tmpl := range ts.Spec.Tasks {
		if tmpl.Plugin == nil {
			continue
		}
		k, err := r.scope.TemplateKey(id, &tmpl, identity.Key)
		if err != nil {
			return nil, fmt.Errorf("key of task %s: %w", id, err)
		}
		if k != r.key {
			continue
		}
		t := identity.Task{NodeID: id}
		if res, ok := ts.Status.Nodes[id]; ok {
			res := res
			t.Recorded = &res
		}
		if n, ok := nodes[id]; ok && n.Phase.Completed() && (t.Recorded == nil || !t.Recorded.Phase.Completed()) {
			t.Recorded = &wfv1.NodeResult{Phase: n.Phase, Message: n.Message, Outputs: n.Outputs}
		}
		// Identical nodes share runs, and which of them a reply reaches
		// is unknown (a done one too, when the agent asks again): one
		// loop child among them makes the result JSON, since a plain one
		// would fail the loop.
		if loop, _ := identity.InLoop(nodes, id); loop {
			r.jsonResult = true
		}
		out = append(out, t)
	}
	return out, nil
}
