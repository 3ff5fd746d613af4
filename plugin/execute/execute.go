package execute

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/sparkplug-io/sparkplug/plugin/archive"
	"github.com/sparkplug-io/sparkplug/plugin/cleanup"
	"github.com/sparkplug-io/sparkplug/plugin/metrics"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Core follows the Spark nodes of the workflows it serves: per listed node
// id, one run per incarnation, and the node's result written under its own
// id into the workflow's WorkflowTaskSet (reconcile.go). The sidecar's
// answer to the agent's template.execute (package request) only starts
// following a workflow and asks for passes over its nodes, through Serve,
// AccessDenied and PassAll.
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
	// kueuePositions are the positions Kueue's visibility API gave, by
	// LocalQueue (kueue.go).
	kueuePositions kueuePositions
	// cleaner deletes what was launched once nothing needs it.
	cleaner *cleanup.Cleaner

	// work holds the nodes due a pass, as flowKey(workflow uid, node): a
	// client-go workqueue, which has nothing to do with Kueue.
	work  workqueue.TypedRateLimitingInterface[string]
	mu    sync.Mutex
	flows map[string]*flow // by workflow uid
	// ctx is the context of the flows' writers and reviews; stop ends it
	// when Run returns.
	ctx  context.Context
	stop context.CancelFunc
}

// New returns a Core. opts must have been validated; recorder may be nil
// (no Events). It registers itself for the registry's callbacks: changes
// of cached objects ask for passes over the nodes they concern, and an ending workflow
// has its drivers deleted (Cleaner). Run starts its work.
func New(opts Options, clients scope.Clients, scopes *scope.Registry, builder *objects.Builder, recorder Recorder, m *metrics.Metrics, log *slog.Logger) *Core {
	c := &Core{opts: opts, clients: clients, scopes: scopes, builder: builder, recorder: recorder, metrics: m, log: log,
		failures: submissionFailures{m: map[string]submissionFailure{}}, missing: missingSince{m: map[string]time.Time{}},
		submits:  submitRuns{now: opts.Now, max: opts.MaxSubmits},
		archives: archive.NewJobs(opts.Archive.Concurrency), store: &archive.Store{Kube: clients.Kube, Settings: opts.Archive},
		work: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "sparkplug-nodes"}),
		flows: map[string]*flow{}}
	c.ctx, c.stop = context.WithCancel(context.Background())
	c.progress = opts.Progress
	if c.progress == nil {
		c.progress = newProgressSource(opts.ProgressInterval)
	}
	c.cleaner = cleanup.New(cleanup.Config{Kube: clients.Kube, Dynamic: clients.Dynamic,
		Workflow: cleanup.TypedWorkflows(clients.Workflows), Recorder: recorder, Now: opts.Now, Log: log,
		Deleted: func(reason string) { m.Driver("deleted", reason) }})
	scopes.OnEnding(cleanup.Ending, c.onEnding)
	scopes.OnChange(c.onChange)
	scopes.OnRefused(c.onRefused)
	return c
}

// Serve starts following workflow wf, if this process does not already:
// its cache (package scope), its TaskSet writer and the check of the
// writer's permission. It returns at once.
func (c *Core) Serve(wf spark.WorkflowRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.flows[wf.UID]; ok {
		return
	}
	sc := c.scopes.Ensure(wf)
	fl := c.newFlow(sc)
	c.flows[wf.UID] = fl
	c.log.Info("following workflow", "workflow", wf.Name, "namespace", wf.Namespace, "uid", wf.UID)
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

// Flows is how many workflows this process follows (the request path
// bounds those requests named, request.MaxFlows).
func (c *Core) Flows() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.flows)
}

// AccessDenied waits up to Options.AccessWait for the review of this
// process's permission to patch the status of the TaskSet of the followed
// workflow with uid, and returns the permission it found missing: "" when
// allowed, not known in time, or the workflow is not followed.
func (c *Core) AccessDenied(ctx context.Context, uid string) string {
	fl := c.flowOf(uid)
	if fl == nil {
		return ""
	}
	return fl.accessDenied(ctx, c.opts.AccessWait)
}

// PassAll asks for a pass over every Spark node the TaskSet of the
// followed workflow with uid lists (nothing when it is not followed).
func (c *Core) PassAll(uid string) {
	if fl := c.flowOf(uid); fl != nil {
		c.passAll(fl)
	}
}

// flowOf is the flow of the workflow with uid, nil when none.
func (c *Core) flowOf(uid string) *flow {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flows[uid]
}

// onChange is the scope registry's callback: a cached object of sc
// changed; ask for a pass over the node it concerns, or every node.
func (c *Core) onChange(sc *scope.Scope, node string) {
	fl := c.flowOf(sc.Workflow.UID)
	if fl == nil {
		return
	}
	if node == "" {
		c.passAll(fl)
		return
	}
	c.work.Add(flowKey(sc.Workflow.UID, node))
}
