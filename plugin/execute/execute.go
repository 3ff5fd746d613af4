package execute

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"

	"github.com/sparkplug-io/sparkplug/plugin/ack"
	"github.com/sparkplug-io/sparkplug/plugin/archive"
	"github.com/sparkplug-io/sparkplug/plugin/metrics"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/redact"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// ErrBadRequest marks a request that is not a template.execute request at
// all (the server answers 400). It is the acknowledger's (package ack):
// one rule for both.
var ErrBadRequest = ack.ErrBadRequest

// Core follows the Spark nodes of the workflows it serves: per listed node
// id, one run per incarnation, and the node's result written under its own
// id into the workflow's WorkflowTaskSet (reconcile.go). Its answer to the
// agent's template.execute is only an acknowledgement (Execute).
type Core struct {
	opts     Options
	clients  scope.Clients
	scopes   *scope.Registry
	builder  *objects.Builder
	log      *slog.Logger
	failures submissionFailures
	missing  missingSince
	recorder Recorder
	events   eventLog
	metrics  *metrics.Metrics
	// companions remembers the drivers whose owned objects are known to
	// exist.
	companions uidSet
	// discarded remembers the drivers of refused launches this process
	// deleted, which the cache may show for a while (gather skips them).
	discarded uidSet
	// forgeries are the objects taken for no run already named, launched
	// the drivers this process created (trust.go): its own count whatever
	// the clocks say (Argo may record a node's start after the TaskSet
	// listed it, when its Workflow update is made again).
	forgeries, launched boundedUIDs
	// submits are the spark-submit runs in flight.
	submits submitRuns
	// archives are the driver log uploads in flight, store what makes one.
	archives *archive.Jobs
	store    *archive.Store
	// progress is Spark's own progress of running drivers (nil: off).
	progress ProgressSource
	// reviews are the answers of the access reviews, by namespace.
	reviews accessReviews
	// positions are the queue positions Kueue's visibility API gave, by
	// LocalQueue (queue.go).
	positions queuePositions
	// sweeps are the sweeps of ending workflows in flight.
	sweeps sync.WaitGroup

	// queue holds the nodes to reconcile, as flowKey(workflow uid, node).
	queue workqueue.TypedRateLimitingInterface[string]
	mu    sync.Mutex
	flows map[string]*flow // by workflow uid
	// own is the workflow of the agent pod this process runs in, once
	// known (Pin): then requests start following no other.
	own string
	// ctx is the context of the flows' writers and reviews; stop ends it
	// when Run returns.
	ctx  context.Context
	stop context.CancelFunc
}

// New returns a Core. opts must have been validated; recorder may be nil
// (no Events). It registers itself for the registry's callbacks: changes
// of cached objects queue the nodes they concern, and an ending workflow
// has its drivers deleted. Run starts its work.
func New(opts Options, clients scope.Clients, scopes *scope.Registry, builder *objects.Builder, recorder Recorder, m *metrics.Metrics, log *slog.Logger) *Core {
	c := &Core{opts: opts, clients: clients, scopes: scopes, builder: builder, recorder: recorder, metrics: m, log: log,
		failures: submissionFailures{m: map[string]submissionFailure{}}, missing: missingSince{m: map[string]time.Time{}},
		submits:  submitRuns{now: opts.Now, max: opts.MaxSubmits},
		archives: archive.NewJobs(opts.Archive.Concurrency), store: &archive.Store{Kube: clients.Kube, Settings: opts.Archive},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "sparkplug-nodes"}),
		flows: map[string]*flow{}}
	c.ctx, c.stop = context.WithCancel(context.Background())
	c.progress = opts.Progress
	if c.progress == nil {
		c.progress = newProgressSource(opts.ProgressInterval)
	}
	scopes.OnEnding(c.OnWorkflowEnding)
	scopes.OnChange(c.onChange)
	scopes.OnRefused(c.onRefused)
	return c
}

// Execute answers one template.execute request. The request carries no
// node id, so it cannot say which node asks; the nodes' results go into
// the TaskSet under their own ids instead. So a spark template, valid or
// not, gets an acknowledgement: a node without a phase, which the agent
// never writes, and an explicit zero requeue, so that it never asks
// about the node again (the agent's reply struct is shared by its
// plugins: a field left out keeps another plugin's value). A template of
// another plugin gets {} (reply.Node nil), which passes it on. The one
// exception: where this process may not write the TaskSet's status, the
// reply fails the node and says which permission is missing.
//
// Which request is which is ack.Classify's rule, the acknowledger's too.
// The request's workflow is a hint: it starts following that workflow
// if this process did not know it from its own pod.
func (c *Core) Execute(ctx context.Context, args executor.ExecuteTemplateArgs) (executor.ExecuteTemplateReply, error) {
	var none executor.ExecuteTemplateReply
	kind, err := ack.Classify(ackRequest(args))
	if err != nil {
		return none, err
	}
	if kind != ack.Spark {
		return none, nil // another plugin's template
	}
	meta := args.Workflow.ObjectMeta
	fl, err := c.serveAsked(spark.WorkflowRef{Name: meta.Name, Namespace: meta.Namespace, UID: meta.UID})
	if err != nil {
		c.log.Info("request about a workflow this sidecar does not follow", "workflow", meta.Name, "uid", meta.UID, "error", err.Error())
		return executor.ExecuteTemplateReply{Node: &wfv1.NodeResult{Phase: wfv1.NodeFailed, Message: redact.Value(err.Error())}}, nil
	}
	if denied := fl.accessDenied(ctx, c.opts.AccessWait); denied != "" {
		return executor.ExecuteTemplateReply{Node: &wfv1.NodeResult{Phase: wfv1.NodeFailed, Message: redact.Value(denied)}}, nil
	}
	c.enqueueAll(fl)
	return Acknowledgement(), nil
}

// Decode reads one template.execute request from r into Argo's types, as
// the sidecar's server does before Execute (one JSON value; what follows
// it is not read): ack.Decode's counterpart, which reads into the
// acknowledger's lighter types. Its error is a body that is no request
// (the server answers 400, or 413 when r says the body is too long).
func Decode(r io.Reader) (executor.ExecuteTemplateArgs, error) {
	var args executor.ExecuteTemplateArgs
	err := json.NewDecoder(r).Decode(&args)
	return args, err
}

// ackRequest is the part of args package ack's rule reads.
func ackRequest(args executor.ExecuteTemplateArgs) ack.Request {
	var r ack.Request
	if w := args.Workflow; w != nil {
		m := w.ObjectMeta
		r.Workflow = &ack.Workflow{Metadata: ack.Metadata{Name: m.Name, Namespace: m.Namespace, UID: string(m.UID)}}
	}
	if t := args.Template; t != nil {
		r.Template = &ack.Template{}
		if t.Plugin != nil {
			r.Template.Plugin = &ack.Plugin{Value: t.Plugin.Value}
		}
	}
	return r
}

// Acknowledgement is the reply to every spark template: a node with no
// phase (the agent writes nothing) and a zero requeue (it never asks
// again).
func Acknowledgement() executor.ExecuteTemplateReply {
	return executor.ExecuteTemplateReply{Node: &wfv1.NodeResult{}, Requeue: &metav1.Duration{}}
}

// Serve starts following workflow wf, if this process does not already:
// its cache (package scope), its TaskSet writer and the check of the
// writer's permission. It returns at once.
func (c *Core) Serve(wf spark.WorkflowRef) *flow {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fl, ok := c.flows[wf.UID]; ok {
		return fl
	}
	sc := c.scopes.Ensure(wf)
	fl := c.newFlow(sc)
	c.flows[wf.UID] = fl
	c.log.Info("following workflow", "workflow", wf.Name, "namespace", wf.Namespace, "uid", wf.UID)
	return fl
}

// Release stops following the workflow with uid: its TaskSet writer, its
// cache and what this process remembers of its nodes. A process that
// follows many workflows (the controller) calls it once a workflow has
// finished or is gone and its drivers were swept; a workflow followed
// again later starts afresh from the cluster, as after a restart.
func (c *Core) Release(uid string) {
	c.mu.Lock()
	fl, ok := c.flows[uid]
	delete(c.flows, uid)
	c.mu.Unlock()
	if !ok {
		return
	}
	fl.cancel()
	c.scopes.Release(uid)
	c.failures.forget(uid)
	c.missing.forget(uid)
	c.log.Info("no longer following workflow", "workflow", fl.scope.Workflow.Name, "namespace", fl.scope.Workflow.Namespace, "uid", uid)
}

// Following reports whether this process follows the workflow with uid.
func (c *Core) Following(uid string) bool { return c.flowOf(uid) != nil }

// MaxFlows bounds the workflows one process follows because requests
// named them (a sidecar that does not know its own agent pod).
const MaxFlows = 64

// Pin follows workflow wf, the one of the agent pod this process runs
// in, and from then on no other a request names.
func (c *Core) Pin(wf spark.WorkflowRef) {
	c.mu.Lock()
	c.own = wf.UID
	c.mu.Unlock()
	c.Serve(wf)
}

// serveAsked is Serve for a workflow a request names: refused for
// another workflow than the pinned one, or beyond MaxFlows.
func (c *Core) serveAsked(wf spark.WorkflowRef) (*flow, error) {
	c.mu.Lock()
	fl, known := c.flows[wf.UID]
	own, n := c.own, len(c.flows)
	c.mu.Unlock()
	switch {
	case known:
		return fl, nil
	case own != "" && own != wf.UID:
		return nil, fmt.Errorf("this sparkplug sidecar serves the workflow of its own agent pod (uid %s), not %s/%s (uid %s)", own, wf.Namespace, wf.Name, wf.UID)
	case n >= MaxFlows:
		return nil, fmt.Errorf("this sparkplug process follows %d workflows already, the most it does", n)
	}
	return c.Serve(wf), nil
}

// flowOf is the flow of the workflow with uid, nil when none.
func (c *Core) flowOf(uid string) *flow {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flows[uid]
}

// onChange is the scope registry's callback: a cached object of sc
// changed; queue the node it concerns, or every node.
func (c *Core) onChange(sc *scope.Scope, node string) {
	fl := c.flowOf(sc.Workflow.UID)
	if fl == nil {
		return
	}
	if node == "" {
		c.enqueueAll(fl)
		return
	}
	c.queue.Add(flowKey(sc.Workflow.UID, node))
}
