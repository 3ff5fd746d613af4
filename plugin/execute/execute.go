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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/archive"
	"github.com/sparkplug-io/sparkplug/plugin/metrics"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
	"github.com/sparkplug-io/sparkplug/plugin/step"
)

// Output parameter names every spark node reports.
const (
	OutputApplicationID = "application-id"
	OutputDriverPod     = "driver-pod"
	OutputSparkUI       = "spark-ui"
	OutputAttempt       = "attempt"
	// OutputHistoryUI is the application's page on the Spark History
	// Server, reported only when the step has one
	// (sparkplug.historyServerURL, or serve's --history-server-url): it
	// still answers once the driver, and with it the spark-ui, is gone.
	OutputHistoryUI = "history-ui"
)

// ErrBadRequest marks a request that is not a template.execute request at
// all (the server answers 400).
var ErrBadRequest = errors.New("bad request")

// Core answers template.execute requests.
type Core struct {
	opts     Options
	clients  scope.Clients
	scopes   *scope.Registry
	builder  *objects.Builder
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
	// archives are the driver log uploads in flight, store what makes one.
	archives *archive.Jobs
	store    *archive.Store
	// progress is Spark's own progress of running drivers (nil: off).
	progress ProgressSource
}

// New returns a Core. opts must have been validated; recorder may be nil
// (no Events). It registers itself for the registry's workflow-ending
// callback, to delete the drivers of stopped workflows.
func New(opts Options, clients scope.Clients, scopes *scope.Registry, builder *objects.Builder, recorder Recorder, m *metrics.Metrics, log *slog.Logger) *Core {
	c := &Core{opts: opts, clients: clients, scopes: scopes, builder: builder, recorder: recorder, metrics: m, log: log,
		failures: submissionFailures{m: map[string]submissionFailure{}}, missing: missingSince{m: map[string]time.Time{}},
		submits:  submitRuns{now: opts.Now, max: opts.MaxSubmits},
		archives: archive.NewJobs(opts.Archive.Concurrency), store: &archive.Store{Kube: clients.Kube, Settings: opts.Archive}}
	c.progress = opts.Progress
	if c.progress == nil {
		c.progress = newProgressSource(opts.ProgressInterval)
	}
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
	st, ok, err := step.Parse(args.Template, c.opts.defaults())
	if errors.Is(err, step.ErrMalformed) {
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
	if err != nil {
		log.Info("invalid spark step", "error", err.Error())
		return reply(invalid(err), nil, false, nil, c.opts), nil
	}
	log = log.With("key", st.Key)

	waitCtx, cancel := context.WithTimeout(ctx, c.opts.CacheWait)
	sc, err := c.scopes.Get(waitCtx, wf)
	cancel()
	if err != nil {
		return none, err
	}
	unlock := c.locks.lock(wf.UID + "/" + st.Key)
	defer unlock()

	r := &request{core: c, ctx: ctx, log: log, wf: wf, scope: sc, step: st, now: c.opts.Now()}
	r.policy = policy{body: st.Body, timeout: st.Timeout, notFoundGrace: c.opts.NotFoundGrace, handoutGrace: c.opts.HandoutGrace,
		progressInterval: c.opts.ProgressInterval}
	return r.answer()
}

// request is one Execute call after parsing: what act needs to carry out
// the plan.
type request struct {
	core   *Core
	ctx    context.Context
	log    *slog.Logger
	wf     spark.WorkflowRef
	scope  *scope.Scope
	step   *step.Step
	policy policy
	now    time.Time
}

// unanswered is a reply the agent does not record (its node has no phase)
// and asks again after: sparkplug cannot tell which of several identical
// nodes asks (identity.Decision.Ambiguous), and Argo would write any
// answer over a result it already recorded.
func unanswered(opts Options) executor.ExecuteTemplateReply {
	return executor.ExecuteTemplateReply{Node: &wfv1.NodeResult{}, Requeue: &metav1.Duration{Duration: opts.RequeuePending}}
}

// reply is the agent's answer for an outcome: with a driver, its outputs
// (the result a JSON string when json is set, for a loop's child); while
// the node runs, when to ask again.
func reply(o state.Outcome, driver *corev1.Pod, json bool, body *spec.SparkApplicationSpec, opts Options) executor.ExecuteTemplateReply {
	// Argo writes the message into the Workflow object: whatever grew it
	// (an API server's or spark-submit's words), it stays bounded.
	node := &wfv1.NodeResult{Phase: o.Phase, Message: spec.Truncate(o.Message(), spec.MaxMessageBytes)}
	if driver != nil {
		appID := driver.Labels[spark.LabelAppSelector]
		result := appID
		if json {
			// A JSON string: the loop's aggregated result is then the
			// list of application ids.
			result = strconv.Quote(appID)
		}
		node.Outputs = &wfv1.Outputs{
			Result: &result,
			Parameters: []wfv1.Parameter{
				{Name: OutputApplicationID, Value: wfv1.AnyStringPtr(appID)},
				{Name: OutputDriverPod, Value: wfv1.AnyStringPtr(driver.Name)},
				{Name: OutputSparkUI, Value: wfv1.AnyStringPtr(objects.SparkUIURL(body, driver))},
				{Name: OutputAttempt, Value: wfv1.AnyStringPtr(strconv.Itoa(attemptOf(driver)))},
			},
		}
		if u := spec.HistoryUIURL(body.HistoryServerURL(), appID); u != "" {
			node.Outputs.Parameters = append(node.Outputs.Parameters, wfv1.Parameter{Name: OutputHistoryUI, Value: wfv1.AnyStringPtr(u)})
		}
		if o.ExitCode != nil {
			// Argo puts it in scope as {{tasks.<name>.exitCode}} and
			// {{steps.<name>.exitCode}}, and the UI shows it.
			code := strconv.Itoa(int(*o.ExitCode))
			node.Outputs.ExitCode = &code
		}
	}
	r := executor.ExecuteTemplateReply{Node: node}
	switch o.Phase {
	case wfv1.NodePending:
		r.Requeue = &metav1.Duration{Duration: opts.RequeuePending}
	case wfv1.NodeRunning:
		r.Requeue = &metav1.Duration{Duration: opts.RequeueRunning}
	}
	return r
}
