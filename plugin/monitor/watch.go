package monitor

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// workflowsResource are Argo's Workflows; the monitor reads only their
// metadata (Argo keeps their state in labels), a fraction of their size.
var workflowsResource = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "workflows"}

// indexUID indexes Workflows by uid: pods name their workflow by uid
// (executors carry no name of it), and a Workflow of the same name made
// again is another workflow.
const indexUID = "uid"

func byUID(obj any) ([]string, error) { return []string{string(obj.(metav1.Object).GetUID())}, nil }

// watch is one leadership's informers: per namespace, the metadata of its
// Workflows, sparkplug's driver and executor pods, and the Events of
// failed submissions on Workflows. They are made anew each leadership,
// so a replica that does not lead holds nothing in memory.
type watch struct {
	namespaces []string
	workflows  map[string]cache.SharedIndexInformer
	pods       map[string]cache.SharedIndexInformer
	events     map[string]cache.SharedIndexInformer
}

func newWatch(kube kubernetes.Interface, meta metadata.Interface, namespaces []string) *watch {
	w := &watch{namespaces: namespaces, workflows: map[string]cache.SharedIndexInformer{},
		pods: map[string]cache.SharedIndexInformer{}, events: map[string]cache.SharedIndexInformer{}}
	sparkPods := labels.NewSelector()
	managed, _ := labels.NewRequirement(spark.LabelManagedBy, selection.Equals, []string{spark.ManagedByValue})
	role, _ := labels.NewRequirement(spark.LabelRole, selection.In, []string{spark.RoleDriver, spark.RoleExecutor})
	sparkPods = sparkPods.Add(*managed, *role)
	failedSubmissions := fields.AndSelectors(
		fields.OneTermEqualSelector("involvedObject.kind", "Workflow"),
		fields.OneTermEqualSelector("reason", spark.ReasonSubmissionFailed)).String()
	for _, ns := range namespaces {
		wf := metadatainformer.NewFilteredMetadataInformer(meta, workflowsResource, ns, 0, cache.Indexers{indexUID: byUID}, nil).Informer()
		pods := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sparkPods.String() })).Core().V1().Pods().Informer()
		events := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(ns),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = failedSubmissions })).Core().V1().Events().Informer()
		for _, inf := range []cache.SharedIndexInformer{wf, pods, events} {
			_ = inf.SetTransform(slim) // fails only once the informer runs
		}
		w.workflows[ns], w.pods[ns], w.events[ns] = wf, pods, events
	}
	return w
}

// slim drops what the monitor never reads from what it caches: managed
// fields of everything, and a pod's spec (a driver's env and volumes are
// most of its size).
func slim(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	if p, ok := obj.(*corev1.Pod); ok {
		p.Spec = corev1.PodSpec{}
	}
	return obj, nil
}

// start runs the informers until ctx is done: the Workflows first, synced
// before any pod or Event is handled so that their series find the
// template of their workflow; then pods and Events with their handlers.
// It returns once all are synced (false: ctx ended first); wait waits for
// them to stop.
func (w *watch) start(ctx context.Context, t *tracker, log *slog.Logger) (synced bool, wait func()) {
	var wg sync.WaitGroup
	run := func(infs map[string]cache.SharedIndexInformer) []cache.InformerSynced {
		var out []cache.InformerSynced
		for _, inf := range infs {
			wg.Add(1)
			go func() { defer wg.Done(); inf.RunWithContext(ctx) }()
			out = append(out, inf.HasSynced)
		}
		return out
	}
	if !waitSynced(ctx, log, "workflows", run(w.workflows)) {
		return false, wg.Wait
	}
	for _, inf := range w.pods {
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { t.pod(obj.(*corev1.Pod)) },
			UpdateFunc: func(_, obj any) { t.pod(obj.(*corev1.Pod)) },
			DeleteFunc: func(obj any) { t.podGone(uidOf(obj)) },
		})
	}
	for _, inf := range w.events {
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { t.event(obj.(*corev1.Event)) },
			UpdateFunc: func(_, obj any) { t.event(obj.(*corev1.Event)) },
			DeleteFunc: func(obj any) { t.eventGone(uidOf(obj)) },
		})
	}
	synced = waitSynced(ctx, log, "pods and events", append(run(w.pods), run(w.events)...))
	return synced, wg.Wait
}

// uidOf is the uid of a deleted object, also of one whose deletion the
// informer missed (a tombstone).
func uidOf(obj any) types.UID {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if m, ok := obj.(metav1.Object); ok {
		return m.GetUID()
	}
	return ""
}

// syncWarnAfter is how long a cache may take to fill before the monitor
// says so: a namespace it may not list (a Role missing) never fills.
const syncWarnAfter = 30 * time.Second

// waitSynced waits for the caches, saying which are slow.
func waitSynced(ctx context.Context, log *slog.Logger, what string, synced []cache.InformerSynced) bool {
	warn := time.NewTimer(syncWarnAfter)
	defer warn.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		done := true
		for _, s := range synced {
			done = done && s()
		}
		if done {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-warn.C:
			log.Warn("the cache of "+what+" has not filled yet: can the monitor list and watch them in every namespace?", "after", syncWarnAfter.String())
		case <-tick.C:
		}
	}
}

// workflow is the metadata of the Workflow of uid in namespace ns, as the
// cache has it; nil when the cache has none.
func (w *watch) workflow(ns, uid string) *metav1.ObjectMeta {
	inf := w.workflows[ns]
	if inf == nil || uid == "" {
		return nil
	}
	objs, err := inf.GetIndexer().ByIndex(indexUID, uid)
	if err != nil || len(objs) == 0 {
		return nil
	}
	m := objs[0].(*metav1.PartialObjectMetadata).ObjectMeta
	return &m
}

// drivers are the driver pods of namespace ns in the cache, by name.
func (w *watch) drivers(ns string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, obj := range w.pods[ns].GetStore().List() {
		if p := obj.(*corev1.Pod); p.Labels[spark.LabelRole] == spark.RoleDriver {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
