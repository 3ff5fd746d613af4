package scope

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/kueue"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Clients are the API clients a Scope lists, watches and writes with.
type Clients struct {
	Kube      kubernetes.Interface
	Workflows wfclient.Interface
	// Dynamic creates the objects of kinds sparkplug has no Go types for
	// (a batch scheduler's PodGroup). It may be nil where none are made.
	Dynamic dynamic.Interface
}

// mutationTTL is how long a write of ours overrides an older cached copy.
const mutationTTL = 15 * time.Second

// Scope is the cache of one workflow: its Workflow, and the TaskSet and
// run objects of its runCaches that carry its uid.
type Scope struct {
	Workflow spark.WorkflowRef

	*runCaches
	workflows cache.Store
	cancel    context.CancelFunc
	synced    chan struct{}
}

// Registry holds the scopes of the workflows this process serves.
type Registry struct {
	clients Clients
	resync  time.Duration
	log     *slog.Logger

	// onEnding is called (from an informer goroutine) when a scope's
	// Workflow is ending, as the function ending says.
	onEnding func(*Scope, *wfv1.Workflow)
	ending   func(*wfv1.Workflow) bool
	// onChange is called (from an informer goroutine) when an object of a
	// scope changes: with the node id a run's object names, or "" when
	// the TaskSet or the Workflow changed (any node may be concerned).
	onChange func(s *Scope, node string)
	// onRefused is called (from an informer goroutine) once per
	// workflow and reason when its nodes are refused (refused.go);
	// refused are the workflows told, by uid, with why.
	onRefused func(*wfv1.Workflow, string)
	refusedMu sync.Mutex
	refused   map[types.UID]string

	mu     sync.Mutex
	scopes map[string]*Scope // by workflow uid
	named  map[string]*Scope // by namespace/name

	// shared are the namespaces' shared caches (NewSharedRegistry), nil
	// in a registry whose scopes watch alone (a sidecar's).
	sharedMu     sync.Mutex
	shared       map[string]*runCaches
	sharedCtx    context.Context
	sharedCancel context.CancelFunc
}

// OnChange sets the function called when a cached object changes. Set it
// before the first scope starts.
func (r *Registry) OnChange(f func(s *Scope, node string)) { r.onChange = f }

// OnEnding sets the function called when the Workflow of a scope is
// ending, as the function ending says (cleanup.Ending: nothing it
// launched should run on). Set it before the first Get.
func (r *Registry) OnEnding(ending func(*wfv1.Workflow) bool, f func(*Scope, *wfv1.Workflow)) {
	r.ending, r.onEnding = ending, f
}

// WorkflowObject returns the cached Workflow, nil when there is none.
func (s *Scope) WorkflowObject() *wfv1.Workflow {
	obj, ok, err := s.workflows.GetByKey(s.Workflow.Namespace + "/" + s.Workflow.Name)
	if err != nil || !ok {
		return nil
	}
	return obj.(*wfv1.Workflow)
}

// lister is what a typed client of one resource offers.
type lister[L runtime.Object] interface {
	List(ctx context.Context, opts metav1.ListOptions) (L, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// listWatch lists and watches with the options narrowed by set.
func listWatch[L runtime.Object](c lister[L], set func(*metav1.ListOptions)) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			set(&o)
			return c.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			set(&o)
			return c.Watch(ctx, o)
		},
	}
}

// NewRegistry returns an empty registry whose scopes each watch their
// own workflow's objects, by its uid: one workflow per process (the
// sidecar), where a namespace's other workflows are none of its business.
func NewRegistry(clients Clients, log *slog.Logger) *Registry {
	return &Registry{clients: clients, log: log, scopes: map[string]*Scope{}, named: map[string]*Scope{}, refused: map[types.UID]string{}}
}

// Ensure returns the workflow's scope, starting it if it has none; it
// does not wait for the cache to sync (Synced says when it has).
func (r *Registry) Ensure(wf spark.WorkflowRef) *Scope {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.scopes[wf.UID]
	if !ok {
		s = r.start(wf)
		r.scopes[wf.UID] = s
		r.named[wf.Namespace+"/"+wf.Name] = s
	}
	return s
}

// Synced is closed once the scope's cache has synced.
func (s *Scope) Synced() <-chan struct{} { return s.synced }

// Scopes returns the workflows with a running scope.
func (r *Registry) Scopes() []*Scope {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Scope, 0, len(r.scopes))
	for _, s := range r.scopes {
		out = append(out, s)
	}
	return out
}

// Run waits until ctx is done, then stops watching in every scope. A
// scope lives until Release or as long as the process (a sidecar serves
// one workflow).
func (r *Registry) Run(ctx context.Context) {
	<-ctx.Done()
	// Stop watching but keep the scopes: the shutdown sweep reads their
	// last cached state.
	r.mu.Lock()
	for _, s := range r.scopes {
		s.cancel()
	}
	r.mu.Unlock()
	if r.sharedCancel != nil {
		r.sharedCancel()
	}
}

// Release stops watching for the workflow with uid and forgets its scope;
// Ensure starts a new one.
func (r *Registry) Release(uid string) {
	r.mu.Lock()
	s, ok := r.scopes[uid]
	delete(r.scopes, uid)
	if ok && r.named[s.Workflow.Namespace+"/"+s.Workflow.Name] == s {
		delete(r.named, s.Workflow.Namespace+"/"+s.Workflow.Name)
	}
	r.mu.Unlock()
	if ok {
		s.cancel()
	}
}

func (r *Registry) start(wf spark.WorkflowRef) *Scope {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Scope{Workflow: wf, cancel: cancel, synced: make(chan struct{})}
	argo := r.clients.Workflows.ArgoprojV1alpha1()
	byName := func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", wf.Name).String()
	}
	var runs *runCaches
	if r.shared != nil {
		runs = r.namespaceCaches(wf.Namespace)
	} else {
		selector := labels.Set{spark.LabelWorkflowUID: wf.UID}.AsSelector().String()
		runs = r.newRunCaches(ctx, wf.Namespace, selector, func(*metav1.ObjectMeta) *Scope { return s })
		tsInf := r.newInformer(listWatch(argo.WorkflowTaskSets(wf.Namespace), byName), &wfv1.WorkflowTaskSet{})
		r.watchWhole(tsInf, func(any) *Scope { return s })
		go tsInf.RunWithContext(ctx)
		runs.taskSets = tsInf.GetStore()
		runs.synced = append(runs.synced, tsInf.HasSynced)
	}
	s.runCaches = runs
	if r.shared != nil {
		// The namespace's Workflows are shared too (namespaceCaches).
		s.workflows = runs.workflows
		hasSynced := slices.Clone(runs.synced)
		go func() {
			if cache.WaitForCacheSync(ctx.Done(), hasSynced...) {
				close(s.synced)
				// A workflow that ended before it was followed: its
				// informer's event came before the scope existed.
				if w := s.WorkflowObject(); w != nil && r.onEnding != nil && string(w.UID) == wf.UID && r.ending(w) {
					r.onEnding(s, w)
				}
			}
		}()
		return s
	}
	wfInf := r.newInformer(listWatch(argo.Workflows(wf.Namespace), byName), &wfv1.Workflow{})
	r.watchEnding(wfInf, func(any) *Scope { return s })
	r.watchRefused(wfInf)
	r.watchWhole(wfInf, func(any) *Scope { return s })
	s.workflows = wfInf.GetStore()
	go wfInf.RunWithContext(ctx)

	hasSynced := append(slices.Clone(runs.synced), wfInf.HasSynced)
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), hasSynced...) {
			close(s.synced)
			r.log.Info("workflow cache synced", "workflow", wf.Name, "namespace", wf.Namespace)
		}
	}()
	r.log.Info("starting workflow cache", "workflow", wf.Name, "namespace", wf.Namespace, "shared", r.shared != nil)
	return s
}

// watchEnding tells onEnding when the Workflow of the scope route gives
// is ending (OnEnding).
func (r *Registry) watchEnding(inf cache.SharedIndexInformer, route func(any) *Scope) {
	if r.onEnding == nil {
		return
	}
	notify := func(obj any) {
		w, ok := obj.(*wfv1.Workflow)
		if !ok || !r.ending(w) {
			return
		}
		if s := route(obj); s != nil && w.UID == types.UID(s.Workflow.UID) {
			r.onEnding(s, w)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: notify, UpdateFunc: func(_, obj any) { notify(obj) }})
}

// runCaches hold the objects of runs (pods, ConfigMaps, Services,
// Ingresses) and the TaskSets: a sidecar's of its one workflow, a
// controller's of a whole namespace, shared by its workflows' scopes,
// which read only their own workflow's objects of them.
type runCaches struct {
	pods, configMaps, services cache.MutationCache
	// ingresses are watched too, but a scope is ready without them
	// (ingressesSynced): see newRunCaches.
	ingresses       cache.MutationCache
	ingressesSynced cache.InformerSynced
	taskSets        cache.Store
	// workflows are a namespace's Workflows, in shared caches only (a
	// sidecar watches its one Workflow by name).
	workflows cache.Store
	// kueueWorkloads are the runs' Kueue Workloads, watched once a queued
	// step asks (kueue.go); nil without a dynamic client.
	kueueWorkloads *kueueCache
	synced         []cache.InformerSynced
}

// newInformer is an informer of obj's kind, its objects slimmed, with the
// indexes a pass reads.
func (r *Registry) newInformer(lw *cache.ListWatch, obj runtime.Object) cache.SharedIndexInformer {
	inf := cache.NewSharedIndexInformer(lw, obj, r.resync, cache.Indexers{
		byWorkflow: labelIndex(spark.LabelWorkflowUID),
		byNode:     labelIndex(spark.LabelNode),
		byApp:      labelIndex(spark.LabelAppSelector),
	})
	_ = inf.SetTransform(slim) // fails only once the informer runs
	return inf
}

// newRunCaches watches the runs' objects of namespace that selector
// selects until ctx is done; route says which scope an object's change
// concerns (nil: none).
func (r *Registry) newRunCaches(ctx context.Context, namespace, selector string, route func(*metav1.ObjectMeta) *Scope) *runCaches {
	kube := r.clients.Kube.CoreV1()
	bySelector := func(o *metav1.ListOptions) { o.LabelSelector = selector }
	podInf := r.newInformer(listWatch(kube.Pods(namespace), bySelector), &corev1.Pod{})
	cmInf := r.newInformer(listWatch(kube.ConfigMaps(namespace), bySelector), &corev1.ConfigMap{})
	svcInf := r.newInformer(listWatch(kube.Services(namespace), bySelector), &corev1.Service{})
	ingInf := r.newInformer(listWatch(r.clients.Kube.NetworkingV1().Ingresses(namespace), bySelector), &networkingv1.Ingress{})
	r.watchNodes(route, podInf, cmInf)
	mutation := func(inf cache.SharedIndexInformer) cache.MutationCache {
		return cache.NewIntegerResourceVersionMutationCache(logr.FromSlogHandler(r.log.Handler()), inf.GetStore(), inf.GetIndexer(), mutationTTL, true)
	}
	c := &runCaches{pods: mutation(podInf), configMaps: mutation(cmInf), services: mutation(svcInf),
		ingresses: mutation(ingInf), ingressesSynced: ingInf.HasSynced,
		kueueWorkloads: r.newKueueCache(ctx, namespace, bySelector, route)}
	for _, inf := range []cache.SharedIndexInformer{podInf, cmInf, svcInf, ingInf} {
		go inf.RunWithContext(ctx)
		// Ready without the Ingresses, which only the runs of bodies
		// with an Ingress have: an install whose Role predates them (it
		// may not list Ingresses) keeps serving every other step, and
		// Cached says an Ingress is unknown until they sync.
		if inf != ingInf {
			c.synced = append(c.synced, inf.HasSynced)
		}
	}
	return c
}

// TaskSet returns the cached WorkflowTaskSet, nil when there is none.
func (s *Scope) TaskSet() *wfv1.WorkflowTaskSet {
	obj, ok, err := s.taskSets.GetByKey(s.Workflow.Namespace + "/" + s.Workflow.Name)
	if err != nil || !ok {
		return nil
	}
	return obj.(*wfv1.WorkflowTaskSet)
}

// Pods returns the cached pods of the workflow (drivers and executors).
func (s *Scope) Pods() []*corev1.Pod {
	return indexed[*corev1.Pod](s.pods, byWorkflow, s.Workflow.UID)
}

// PodsOfNode returns the cached pods labelled with the node's hash
// (spark.LabelNode): its drivers and their executors, and any other
// node's with the same hash, which the caller tells apart by the node-id
// annotation.
func (s *Scope) PodsOfNode(nodeID string) []*corev1.Pod {
	return mine(s, indexed[*corev1.Pod](s.pods, byNode, identity.NodeHash(nodeID)))
}

// PodsOfApp returns the cached pods labelled with application id appID.
func (s *Scope) PodsOfApp(appID string) []*corev1.Pod {
	return mine(s, indexed[*corev1.Pod](s.pods, byApp, appID))
}

// Pod returns the cached pod called name, nil when there is none.
func (s *Scope) Pod(name string) *corev1.Pod {
	obj, ok, err := s.pods.GetByKey(s.Workflow.Namespace + "/" + name)
	if err != nil || !ok {
		return nil
	}
	p, _ := obj.(*corev1.Pod)
	if p == nil || !s.owns(p) {
		return nil
	}
	return p
}

// ConfigMapsOfNode returns the cached ConfigMaps labelled with the
// node's hash (tombstones among them), as PodsOfNode.
func (s *Scope) ConfigMapsOfNode(nodeID string) []*corev1.ConfigMap {
	return mine(s, indexed[*corev1.ConfigMap](s.configMaps, byNode, identity.NodeHash(nodeID)))
}

// owns: o carries the scope's workflow uid. A sidecar's caches hold no
// other; a namespace's shared caches hold every workflow's, and a scope
// reads only its own, as if it watched alone.
func (s *Scope) owns(o metav1.Object) bool {
	return o.GetLabels()[spark.LabelWorkflowUID] == s.Workflow.UID
}

// mine keeps of objs the scope's own.
func mine[T metav1.Object](s *Scope, objs []T) []T {
	return slices.DeleteFunc(objs, func(o T) bool { return !s.owns(o) })
}

// Cached is the cached object of o's kind (ConfigMap, Service, Ingress)
// and name, nil when none is cached; other kinds are never cached. Before
// the Ingresses have synced, no Ingress is known. It is slimmed (no
// ConfigMap data): what the cache shows of an object sparkplug did not
// make is only its metadata.
func (s *Scope) Cached(o metav1.Object) metav1.Object {
	var c cache.MutationCache
	switch o.(type) {
	case *corev1.ConfigMap:
		c = s.configMaps
	case *corev1.Service:
		c = s.services
	case *networkingv1.Ingress:
		if !s.ingressesSynced() {
			return nil
		}
		c = s.ingresses
	default:
		return nil
	}
	obj, ok, err := c.GetByKey(s.Workflow.Namespace + "/" + o.GetName())
	if err != nil || !ok {
		return nil
	}
	m, _ := obj.(metav1.Object)
	if m == nil || !s.owns(m) {
		return nil
	}
	return m
}

// Wrote folds an object this process created or updated into the cache,
// slimmed as the informers keep it: a copy, so the caller's object (which
// may be a cached one) is left as it is.
func (s *Scope) Wrote(obj runtime.Object) {
	obj = obj.DeepCopyObject()
	_, _ = slim(obj)
	switch o := obj.(type) {
	case *corev1.Pod:
		s.pods.Mutation(obj)
	case *corev1.ConfigMap:
		s.configMaps.Mutation(obj)
	case *corev1.Service:
		s.services.Mutation(obj)
	case *networkingv1.Ingress:
		s.ingresses.Mutation(obj)
	case *unstructured.Unstructured:
		if o.GetKind() == kueue.WorkloadKind {
			s.wroteKueueWorkload(o)
		}
	}
}
