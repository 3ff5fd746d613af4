package execute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/build"
	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/metrics"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
)

// Output parameter names every spark node reports.
const (
	OutputApplicationID = "application-id"
	OutputDriverPod     = "driver-pod"
	OutputSparkUI       = "spark-ui"
	OutputAttempt       = "attempt"
)

// Options tune the request core. Zero values are replaced by defaults in
// Validate.
type Options struct {
	// RequeuePending is the requeue while a driver is being submitted or
	// waits to start; RequeueRunning while it runs.
	RequeuePending, RequeueRunning time.Duration
	// NotFoundGrace is how long a driver missing from the cache is
	// tolerated after its creation before the attempt fails.
	NotFoundGrace time.Duration
	// HandoutGrace is how long a result handed to one of several identical
	// nodes may take to show in the TaskSet before it counts as lost.
	HandoutGrace time.Duration
	// CacheWait is how long a request waits for a new workflow's cache to
	// sync before answering 503.
	CacheWait time.Duration
	// Now is the clock.
	Now func() time.Time
}

// Validate fills defaults and rejects nonsense.
func (o *Options) Validate() error {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.RequeuePending, 5*time.Second)
	def(&o.RequeueRunning, 15*time.Second)
	def(&o.NotFoundGrace, 30*time.Second)
	def(&o.HandoutGrace, time.Minute)
	def(&o.CacheWait, 10*time.Second)
	if o.Now == nil {
		o.Now = time.Now
	}
	for name, d := range map[string]time.Duration{
		"requeue-pending": o.RequeuePending, "requeue-running": o.RequeueRunning,
		"not-found-grace": o.NotFoundGrace, "handout-grace": o.HandoutGrace, "cache-wait": o.CacheWait,
	} {
		if d < 0 {
			return fmt.Errorf("--%s must not be negative, got %s", name, d)
		}
	}
	return nil
}

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
}

// New returns a Core. opts must have been validated; recorder may be nil
// (no Events). It registers itself for the registry's workflow-ending
// callback, to delete the drivers of stopped workflows.
func New(opts Options, clients scope.Clients, scopes *scope.Registry, builder *build.Builder, recorder Recorder, m *metrics.Metrics, log *slog.Logger) *Core {
	c := &Core{opts: opts, clients: clients, scopes: scopes, builder: builder, recorder: recorder, metrics: m, log: log,
		failures: submissionFailures{m: map[string]submissionFailure{}}, missing: missingSince{m: map[string]time.Time{}}}
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
	wf := scope.Workflow{Name: meta.Name, Namespace: meta.Namespace, UID: meta.UID}
	log := c.log.With("workflow", wf.Name, "namespace", wf.Namespace, "template", args.Template.Name)

	body, err := spec.Parse(raw)
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
	wf    scope.Workflow
	scope *scope.Scope
	body  *spec.SparkApplicationSpec
	key   string
	// timeout is the template's timeout over the whole run; 0 is none.
	timeout time.Duration
	now     time.Time
}

func (r *request) answer() (executor.ExecuteTemplateReply, error) {
	tasks, err := r.tasks(r.scope.TaskSet())
	if err != nil {
		return executor.ExecuteTemplateReply{}, err
	}
	runs := r.runs(tasks)
	d := identity.Resolve(tasks, r.views(runs), r.now, r.core.opts.HandoutGrace)
	if d.Unlisted {
		// The cache may lag behind a node the controller just added.
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
	if d.Answer == "" {
		return r.reply(wfv1.NodeRunning, "RUNNING: waiting for an identical step's driver to finish", nil), nil
	}
	return r.report(runs[d.Answer], d.Record)
}

// report answers from one run, advancing its restart policy.
func (r *request) report(run *run, record identity.Mode) (executor.ExecuteTemplateReply, error) {
	head := run.head()
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
	} else if !v.Final && !run.ghost && run.tomb == nil {
		if err := r.ensureCompanions(run); err != nil {
			return executor.ExecuteTemplateReply{}, err
		}
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

// verdict assesses a run's newest attempt, applies the time limits and the
// restart policy, and says which limit, if any, ended the attempt.
func (r *request) verdict(run *run) (Verdict, limit) {
	head := run.head()
	if run.tomb != nil {
		return r.tombVerdict(run)
	}
	a := state.Assess(state.Observed{
		Driver:        run.observedHead(),
		Executors:     r.executors(head),
		Expected:      expectedExecutors(r.body),
		Dynamic:       r.body.DynamicAllocation != nil && r.body.DynamicAllocation.Enabled,
		SubmittedAt:   submittedAt(run),
		Now:           r.now,
		NotFoundGrace: r.core.opts.NotFoundGrace,
	})
	pending := r.body.PendingTimeout()
	a, l := limits(a, run.observedHead(), runStart(run), r.now, r.timeout, pending)
	ended := endedAt(head, r.now)
	switch {
	case l == limitTimeout:
		return Verdict{Final: true, Phase: a.Phase(), Message: a.Message() + attemptSuffix(run.attempt(), r.body.RestartPolicy), ended: a}, l
	case l == limitPending:
		ended = head.CreationTimestamp.Add(pending)
	case l == limitCannotStart:
		ended = head.CreationTimestamp.Time
	case run.ghost:
		ended = run.missingSince.Add(r.core.opts.NotFoundGrace)
	}
	return judge(a, run.attempt(), r.body.RestartPolicy, ended, r.now), l
}

// tombVerdict is the verdict of a run whose newest driver sparkplug
// stopped: what the tombstone recorded, with the restart policy applied
// again (a stopped attempt may still be followed by another).
func (r *request) tombVerdict(run *run) (Verdict, limit) {
	ann := run.tomb.Annotations
	l := limit(ann[spark.AnnotationStopped])
	a := state.Assessment{State: spark.StateFailing, Done: true, Reason: ann[spark.AnnotationStoppedReason], Detail: ann[spark.AnnotationStoppedDetail]}
	if l == limitTimeout {
		return Verdict{Final: true, Phase: a.Phase(), Message: a.Message() + attemptSuffix(run.attempt(), r.body.RestartPolicy)}, limitNone
	}
	stoppedAt, err := time.Parse(time.RFC3339, ann[spark.AnnotationStoppedAt])
	if err != nil {
		stoppedAt = run.tomb.CreationTimestamp.Time
	}
	return judge(a, run.attempt(), r.body.RestartPolicy, stoppedAt, r.now), limitNone
}

// runStart is when the run's first driver that still exists was created.
func runStart(rn *run) time.Time {
	if rn.ghost && len(rn.attempts) == 1 {
		return rn.missingSince
	}
	return rn.attempts[0].CreationTimestamp.Time
}

// stop ends a run's newest driver that a limit ended. It first turns the
// driver's ConfigMap into a tombstone (owned by the Workflow instead of the
// driver, annotated with what happened and with the run's bookkeeping), so
// the run is remembered once the pod is gone; then it deletes the pod, and
// with it, through ownership, the Service and the executors.
func (r *request) stop(rn *run, l limit, a state.Assessment) error {
	head := rn.head()
	if rn.ghost || rn.tomb != nil {
		return nil
	}
	ann := map[string]any{
		spark.AnnotationStopped:       string(l),
		spark.AnnotationStoppedAt:     r.now.UTC().Format(time.RFC3339),
		spark.AnnotationStoppedReason: a.Reason,
		spark.AnnotationStoppedDetail: a.Detail,
		spark.AnnotationDriver:        head.Name,
	}
	for _, k := range []string{spark.AnnotationReported, spark.AnnotationReportedMode, spark.AnnotationAdoptedBy} {
		if v, ok := head.Annotations[k]; ok {
			ann[k] = v
		}
	}
	owner := build.WorkflowOwner(build.WorkflowRef{Name: r.wf.Name, Namespace: r.wf.Namespace, UID: r.wf.UID})
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations":     ann,
		"ownerReferences": []metav1.OwnerReference{owner},
	}})
	if err != nil {
		return fmt.Errorf("encode tombstone patch: %w", err)
	}
	cmName := build.ConfigMapName(head.Name)
	cm, err := r.core.clients.Kube.CoreV1().ConfigMaps(head.Namespace).Patch(r.ctx, cmName, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("write tombstone on configmap %s: %w", cmName, err)
	}
	r.scope.Wrote(cm)
	if head.DeletionTimestamp == nil {
		uid := head.UID
		err = r.core.clients.Kube.CoreV1().Pods(head.Namespace).Delete(r.ctx, head.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("stop driver pod %s: %w", head.Name, err)
		}
	}
	r.log.Info("driver stopped", "node", rn.nodeID, "driver", head.Name, "limit", string(l), "detail", a.Detail)
	r.core.metrics.Driver("deleted", string(l))
	stand := head.DeepCopy()
	for k, v := range ann {
		stand.Annotations[k] = v.(string)
	}
	rn.attempts[len(rn.attempts)-1] = stand
	rn.tomb = cm
	return nil
}

func (r *request) reply(phase wfv1.NodePhase, message string, driver *corev1.Pod) executor.ExecuteTemplateReply {
	node := &wfv1.NodeResult{Phase: phase, Message: message}
	if driver != nil {
		appID := driver.Labels[spark.LabelAppSelector]
		svc, port := build.ServiceName(driver.Name), int32(spark.UIPort)
		if o := r.body.SparkUIOptions; o != nil {
			svc = build.UIServiceName(driver.Name)
			if o.ServicePort != nil {
				port = *o.ServicePort
			}
		}
		node.Outputs = &wfv1.Outputs{
			Result: &appID,
			Parameters: []wfv1.Parameter{
				{Name: OutputApplicationID, Value: wfv1.AnyStringPtr(appID)},
				{Name: OutputDriverPod, Value: wfv1.AnyStringPtr(driver.Name)},
				{Name: OutputSparkUI, Value: wfv1.AnyStringPtr(fmt.Sprintf("http://%s.%s.svc:%d", svc, driver.Namespace, port))},
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
	var out []identity.Task
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
		out = append(out, t)
	}
	return out, nil
}

// run is every attempt launched for one node, newest last.
type run struct {
	nodeID   string
	attempts []*corev1.Pod
	// ghost: the newest driver is gone from the cluster. Its name and
	// attempt come from the result the agent recorded in the TaskSet, and
	// missingSince from when this process first missed it.
	ghost        bool
	missingSince time.Time
	// tomb: the newest driver was stopped by sparkplug; head is a stand-in
	// built from its tombstone ConfigMap, which carries the bookkeeping.
	tomb *corev1.ConfigMap
}

func (rn *run) head() *corev1.Pod { return rn.attempts[len(rn.attempts)-1] }

// newest is the attempt with the highest number (attempts may not be
// sorted yet while runs are being gathered).
func (rn *run) newest() *corev1.Pod {
	n := rn.attempts[0]
	for _, p := range rn.attempts[1:] {
		if attemptOf(p) > attemptOf(n) {
			n = p
		}
	}
	return n
}
func (rn *run) attempt() int { return attemptOf(rn.head()) }

// observedHead is the newest driver as observed: nil for a ghost or a
// tombstone.
func (rn *run) observedHead() *corev1.Pod {
	if rn.ghost || rn.tomb != nil {
		return nil
	}
	return rn.head()
}

func attemptOf(p *corev1.Pod) int {
	n, err := strconv.Atoi(p.Labels[spark.LabelAttempt])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// runs groups the cached driver pods with the request's key by node, and
// adds a ghost run for every listed node whose recorded result names a
// driver the cluster no longer has (deleted by someone else): its node
// must not silently start over.
func (r *request) runs(tasks []identity.Task) map[string]*run {
	out := map[string]*run{}
	for _, p := range r.scope.Pods() {
		if p.Labels[spark.LabelRole] != spark.RoleDriver || p.Labels[spark.LabelTemplate] != r.key {
			continue
		}
		node := p.Annotations[spark.AnnotationNodeID]
		if node == "" {
			continue
		}
		rn := out[node]
		if rn == nil {
			rn = &run{nodeID: node}
			out[node] = rn
		}
		rn.attempts = append(rn.attempts, p)
	}
	for _, cm := range r.scope.ConfigMaps() {
		if cm.Labels[spark.LabelTemplate] != r.key || cm.Annotations[spark.AnnotationStopped] == "" {
			continue
		}
		node := cm.Annotations[spark.AnnotationNodeID]
		rn := out[node]
		if rn != nil && attemptOf(rn.newest()) >= attemptOf(&corev1.Pod{ObjectMeta: cm.ObjectMeta}) {
			continue // the stopped pod is still visible, or a later attempt exists
		}
		if rn == nil {
			rn = &run{nodeID: node}
			out[node] = rn
		}
		stand := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name: cm.Annotations[spark.AnnotationDriver], Namespace: cm.Namespace,
			Labels: cm.Labels, Annotations: cm.Annotations, CreationTimestamp: cm.CreationTimestamp,
		}}
		rn.attempts = append(rn.attempts, stand)
		rn.tomb = cm
	}
	for _, rn := range out {
		sort.Slice(rn.attempts, func(i, j int) bool { return attemptOf(rn.attempts[i]) < attemptOf(rn.attempts[j]) })
		if rn.tomb != nil && rn.head().Name != rn.tomb.Annotations[spark.AnnotationDriver] {
			rn.tomb = nil // a later attempt supersedes the tombstone
		}
	}
	for _, t := range tasks {
		driver, attempt := recordedDriver(t.Recorded)
		if driver == "" {
			continue
		}
		if rn := out[t.NodeID]; rn != nil && attemptOf(rn.newest()) >= attempt {
			continue
		}
		ghost := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name: driver, Namespace: r.wf.Namespace,
			Labels:      map[string]string{spark.LabelAttempt: strconv.Itoa(attempt), spark.LabelAppSelector: recordedParam(t.Recorded, OutputApplicationID)},
			Annotations: map[string]string{spark.AnnotationNodeID: t.NodeID},
		}}
		rn := out[t.NodeID]
		if rn == nil {
			rn = &run{nodeID: t.NodeID}
			out[t.NodeID] = rn
		}
		rn.attempts = append(rn.attempts, ghost)
		rn.ghost = true
		rn.missingSince = r.core.missing.since(r.wf.UID+"/"+driver, r.now)
	}
	return out
}

// recordedDriver reads the driver and attempt sparkplug reported for a node.
func recordedDriver(res *wfv1.NodeResult) (string, int) {
	driver := recordedParam(res, OutputDriverPod)
	attempt, err := strconv.Atoi(recordedParam(res, OutputAttempt))
	if err != nil || attempt < 1 {
		attempt = 1
	}
	return driver, attempt
}

func recordedParam(res *wfv1.NodeResult, name string) string {
	if res == nil || res.Outputs == nil {
		return ""
	}
	for _, p := range res.Outputs.Parameters {
		if p.Name == name && p.Value != nil {
			return p.Value.String()
		}
	}
	return ""
}

func submittedAt(rn *run) time.Time {
	if rn.ghost {
		return rn.missingSince
	}
	return rn.head().CreationTimestamp.Time
}

func (r *request) views(runs map[string]*run) []identity.Run {
	out := make([]identity.Run, 0, len(runs))
	for _, rn := range runs {
		h := rn.head()
		v := identity.Run{
			NodeID:    rn.nodeID,
			Final:     finalOf(r.verdict(rn)),
			Reported:  identity.Mode(h.Annotations[spark.AnnotationReportedMode]),
			AdoptedBy: h.Annotations[spark.AnnotationAdoptedBy],
		}
		if at, err := time.Parse(time.RFC3339, h.Annotations[spark.AnnotationReported]); err == nil {
			v.ReportedAt = at
		}
		out = append(out, v)
	}
	return out
}

// executors are the cached executor pods of a driver.
func (r *request) executors(driver *corev1.Pod) []*corev1.Pod {
	appID := driver.Labels[spark.LabelAppSelector]
	var out []*corev1.Pod
	for _, p := range r.scope.Pods() {
		if p.Labels[spark.LabelRole] == spark.RoleExecutor && p.Labels[spark.LabelAppSelector] == appID {
			out = append(out, p)
		}
	}
	return out
}

func expectedExecutors(s *spec.SparkApplicationSpec) int32 {
	if s.DynamicAllocation != nil && s.DynamicAllocation.Enabled {
		return 0
	}
	if s.Executor.Instances == nil {
		return 1
	}
	return *s.Executor.Instances
}

// endedAt is when the driver's attempt ended: its container's finish time,
// else the time the pod was marked for deletion, else now.
func endedAt(p *corev1.Pod, now time.Time) time.Time {
	var latest time.Time
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.FinishedAt.After(latest) {
			latest = t.FinishedAt.Time
		}
	}
	if !latest.IsZero() {
		return latest
	}
	if p.DeletionTimestamp != nil {
		return p.DeletionTimestamp.Time
	}
	return now
}

// launch creates attempt n of the node's run: driver pod, then its
// ConfigMap and Service owned by it. A driver that already exists (a
// repeated call, a restarted plugin) is taken as it is.
func (r *request) launch(node string, attempt int, previous *corev1.Pod) (*run, *executor.ExecuteTemplateReply) {
	br := build.Run{
		Workflow:    build.WorkflowRef{Name: r.wf.Name, Namespace: r.wf.Namespace, UID: r.wf.UID},
		NodeID:      node,
		TemplateKey: r.key,
		Attempt:     attempt,
	}
	objs, err := r.core.builder.Cluster(r.body, br)
	if err != nil {
		reply := failed(fmt.Sprintf("SUBMISSION_FAILED: build driver objects: %s", err))
		return nil, &reply
	}
	if previous != nil {
		// Carry the run's bookkeeping to the new head.
		for _, k := range []string{spark.AnnotationAdoptedBy} {
			if v, ok := previous.Annotations[k]; ok {
				objs.Driver.Annotations[k] = v
			}
		}
	}
	pods := r.core.clients.Kube.CoreV1().Pods(r.wf.Namespace)
	failKey := r.wf.UID + "/" + node + "/" + strconv.Itoa(attempt)
	if wait, blocked := r.core.failures.backoff(failKey, r.body.RestartPolicy, r.now); blocked {
		f := r.core.failures.get(failKey)
		reply := r.reply(wfv1.NodePending, fmt.Sprintf("SUBMISSION_FAILED: retry %d%s in %s: %s", f.count+1, submissionMax(r.body.RestartPolicy), wait.Round(time.Second), f.message), nil)
		return nil, &reply
	}
	created, err := pods.Create(r.ctx, objs.Driver, metav1.CreateOptions{})
	switch {
	case err == nil:
		r.log.Info("driver pod created", "node", node, "driver", created.Name, "attempt", attempt)
		r.core.metrics.Driver("launched", "")
	case apierrors.IsAlreadyExists(err):
		created, err = pods.Get(r.ctx, objs.Driver.Name, metav1.GetOptions{})
		if err != nil {
			return nil, r.transient("get existing driver pod %s: %s", objs.Driver.Name, err)
		}
		r.log.Info("driver pod already existed; continuing with it", "node", node, "driver", created.Name)
	case isTransient(err):
		return nil, r.transient("create driver pod %s: %s", objs.Driver.Name, err)
	default:
		r.core.failures.record(failKey, apiMessage(err), r.now)
		f := r.core.failures.get(failKey)
		if f.count <= int(deref32(r.body.RestartPolicy.OnSubmissionFailureRetries, 0)) && r.body.RestartPolicy.Type != spec.RestartNever {
			reply := r.reply(wfv1.NodePending, fmt.Sprintf("SUBMISSION_FAILED: retry %d%s soon: %s", f.count, submissionMax(r.body.RestartPolicy), f.message), nil)
			return nil, &reply
		}
		r.log.Info("driver submission failed", "node", node, "error", f.message)
		reply := failed("SUBMISSION_FAILED: " + f.message)
		return nil, &reply
	}
	r.core.failures.clear(failKey)
	r.scope.Wrote(created)
	rn := &run{nodeID: node, attempts: []*corev1.Pod{created}}
	if err := r.companions(objs, created); err != nil {
		return nil, r.transient("%s", err)
	}
	return rn, nil
}

// ensureCompanions recreates the ConfigMap or Service of a live driver when
// the cache does not have them (the plugin stopped between creating the
// pod and them). In steady state it makes no API request.
func (r *request) ensureCompanions(rn *run) error {
	head := rn.head()
	if head.UID == "" {
		return nil
	}
	cm, svc := build.ConfigMapName(head.Name), build.ServiceName(head.Name)
	uiReady := r.body.SparkUIOptions == nil || r.scope.HasService(build.UIServiceName(head.Name))
	if r.scope.HasConfigMap(cm) && r.scope.HasService(svc) && uiReady {
		return nil
	}
	objs, err := r.core.builder.Cluster(r.body, build.Run{
		Workflow:    build.WorkflowRef{Name: r.wf.Name, Namespace: r.wf.Namespace, UID: r.wf.UID},
		NodeID:      rn.nodeID,
		TemplateKey: r.key,
		Attempt:     rn.attempt(),
	})
	if err != nil {
		return fmt.Errorf("rebuild objects of %s: %w", head.Name, err)
	}
	return r.companions(objs, head)
}

func (r *request) companions(objs *build.Objects, driver *corev1.Pod) error {
	build.OwnedBy(objs, driver)
	if !r.scope.HasConfigMap(objs.ConfigMap.Name) {
		cm, err := r.core.clients.Kube.CoreV1().ConfigMaps(r.wf.Namespace).Create(r.ctx, objs.ConfigMap, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create configmap %s: %w", objs.ConfigMap.Name, err)
		}
		if err == nil {
			r.scope.Wrote(cm)
		}
	}
	services := []*corev1.Service{objs.Service}
	for _, o := range objs.Extra {
		svc, ok := o.(*corev1.Service)
		if !ok {
			return fmt.Errorf("the builder asked for a %T, which sparkplug does not create", o)
		}
		services = append(services, svc)
	}
	for _, want := range services {
		if r.scope.HasService(want.Name) {
			continue
		}
		svc, err := r.core.clients.Kube.CoreV1().Services(r.wf.Namespace).Create(r.ctx, want, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create service %s: %w", want.Name, err)
		}
		if err == nil {
			r.scope.Wrote(svc)
		}
	}
	return nil
}

// annotate merges annotations into a run's newest driver pod.
func (r *request) annotate(rn *run, ann map[string]string) error {
	if rn.ghost {
		return nil // nothing left to write on; the recorded result stands for it
	}
	head := rn.head()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	if err != nil {
		return fmt.Errorf("encode annotation patch: %w", err)
	}
	if rn.tomb != nil {
		cm, err := r.core.clients.Kube.CoreV1().ConfigMaps(rn.tomb.Namespace).Patch(r.ctx, rn.tomb.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil {
			return fmt.Errorf("annotate tombstone %s: %w", rn.tomb.Name, err)
		}
		r.scope.Wrote(cm)
		rn.tomb = cm
		stand := head.DeepCopy()
		for k, v := range ann {
			stand.Annotations[k] = v
		}
		rn.attempts[len(rn.attempts)-1] = stand
		return nil
	}
	updated, err := r.core.clients.Kube.CoreV1().Pods(head.Namespace).Patch(r.ctx, head.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("annotate driver pod %s: %w", head.Name, err)
	}
	r.scope.Wrote(updated)
	rn.attempts[len(rn.attempts)-1] = updated
	return nil
}

func (r *request) transient(format string, args ...any) *executor.ExecuteTemplateReply {
	msg := fmt.Sprintf(format, args...)
	r.log.Info("transient error; the agent will ask again", "error", msg)
	reply := r.reply(wfv1.NodePending, "SUBMITTED: retrying after a transient API error: "+msg, nil)
	return &reply
}

func failed(message string) executor.ExecuteTemplateReply {
	return executor.ExecuteTemplateReply{Node: &wfv1.NodeResult{Phase: wfv1.NodeFailed, Message: message}}
}

func isTransient(err error) bool {
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err) ||
		errors.Is(err, context.DeadlineExceeded) || isConnectionError(err)
}

func isConnectionError(err error) bool {
	s := err.Error()
	return strings.Contains(s, "connection refused") || strings.Contains(s, "connection reset") || strings.Contains(s, "EOF")
}

// apiMessage is the API server's own message for a rejected request.
func apiMessage(err error) string {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return status.Status().Message
	}
	return err.Error()
}

func submissionMax(p spec.RestartPolicy) string {
	return fmt.Sprintf("/%d", deref32(p.OnSubmissionFailureRetries, 0))
}

// keyedMutex serialises requests for one (workflow, template key): the
// identity decision reads and writes the same runs.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyedEntry
}

type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyedEntry{}
	}
	e := k.locks[key]
	if e == nil {
		e = &keyedEntry{}
		k.locks[key] = e
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		e.refs--
		if e.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}

// submissionFailures counts rejected driver submissions per attempt. It is
// the one piece of state kept only in memory: a failed submission leaves
// nothing in the cluster to write it on. A restarted plugin starts the
// count again, so a submission may be tried a few more times, never fewer.
type submissionFailures struct {
	mu sync.Mutex
	m  map[string]submissionFailure
}

type submissionFailure struct {
	count   int
	at      time.Time
	message string
}

func (s *submissionFailures) record(key, message string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.m[key]
	f.count++
	f.at, f.message = now, message
	s.m[key] = f
}

func (s *submissionFailures) get(key string) submissionFailure {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key]
}

func (s *submissionFailures) clear(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
}

// backoff says whether a new submission must still wait after failures.
func (s *submissionFailures) backoff(key string, p spec.RestartPolicy, now time.Time) (time.Duration, bool) {
	f := s.get(key)
	if f.count == 0 {
		return 0, false
	}
	interval := time.Duration(deref64(p.OnSubmissionFailureRetryInterval, 5)) * time.Second
	at := f.at.Add(time.Duration(f.count) * interval)
	if now.Before(at) {
		return at.Sub(now), true
	}
	return 0, false
}

// missingSince remembers when this process first missed a driver the
// TaskSet says exists, so "driver pod not found" waits out a grace period.
type missingSince struct {
	mu sync.Mutex
	m  map[string]time.Time
}

func (m *missingSince) since(key string, now time.Time) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.m[key]; ok {
		return t
	}
	m.m[key] = now
	return now
}

func finalOf(v Verdict, _ limit) bool { return v.Final }
