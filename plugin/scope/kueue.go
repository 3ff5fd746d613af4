package scope

import (
	"context"
	"sync"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/kueue"
)

// Kueue's part of the cache: the Workloads sparkplug creates for the
// attempts of steps queued with Kueue (package kueue says what they are,
// package execute creates and deletes them), watched in the workflow's
// namespace by the same selector as the runs' pods and indexed by node
// and workflow, so a change to one brings a pass over its node.

// kueueCache is the cache of the runs' Kueue Workloads, started the
// first time a queued step asks for it: most installs have no Kueue, and
// an informer of a resource the API server does not serve would fail and
// retry for as long as the process runs.
type kueueCache struct {
	once  sync.Once
	start func() (cache.MutationCache, cache.InformerSynced)

	mu     sync.Mutex
	store  cache.MutationCache
	synced cache.InformerSynced
}

// newKueueCache is the lazily started Kueue Workload cache of
// newRunCaches;
// nil without a dynamic client.
func (r *Registry) newKueueCache(ctx context.Context, namespace string, bySelector func(*metav1.ListOptions), route func(*metav1.ObjectMeta) *Scope) *kueueCache {
	if r.clients.Dynamic == nil {
		return nil
	}
	return &kueueCache{start: func() (cache.MutationCache, cache.InformerSynced) {
		res := r.clients.Dynamic.Resource(kueue.WorkloadResource).Namespace(namespace)
		inf := r.newInformer(listWatch(res, bySelector), &unstructured.Unstructured{})
		r.watchNodes(route, inf)
		go inf.RunWithContext(ctx)
		r.log.Info("watching Kueue Workloads", "namespace", namespace)
		return cache.NewIntegerResourceVersionMutationCache(logr.FromSlogHandler(r.log.Handler()), inf.GetStore(), inf.GetIndexer(), mutationTTL, true), inf.HasSynced
	}}
}

// started starts the cache once and returns it, with whether it synced.
func (w *kueueCache) started() (cache.MutationCache, bool) {
	if w == nil {
		return nil, false
	}
	w.once.Do(func() {
		store, synced := w.start()
		w.mu.Lock()
		w.store, w.synced = store, synced
		w.mu.Unlock()
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.store, w.synced()
}

// KueueWorkloadsOfNode returns the cached Kueue Workloads labelled with
// the node's hash (the caller tells nodes with the same hash apart by the
// node-id annotation), starting the cache on first use; synced is false
// until it holds what the API server has, and the list is then
// incomplete.
func (s *Scope) KueueWorkloadsOfNode(nodeID string) (objs []*unstructured.Unstructured, synced bool) {
	store, synced := s.kueueWorkloads.started()
	if store == nil {
		return nil, false
	}
	return mine(s, indexed[*unstructured.Unstructured](store, byNode, identity.NodeHash(nodeID))), synced
}

// KueueWorkloads returns every cached Kueue Workload of the workflow;
// none when no queued step started the cache.
func (s *Scope) KueueWorkloads() []*unstructured.Unstructured {
	if s.kueueWorkloads == nil {
		return nil
	}
	s.kueueWorkloads.mu.Lock()
	store := s.kueueWorkloads.store
	s.kueueWorkloads.mu.Unlock()
	if store == nil {
		return nil
	}
	return indexed[*unstructured.Unstructured](store, byWorkflow, s.Workflow.UID)
}

// wroteKueueWorkload folds a Kueue Workload this process wrote into the
// cache, if it runs.
func (s *Scope) wroteKueueWorkload(obj *unstructured.Unstructured) {
	if store, _ := s.kueueWorkloads.started(); store != nil {
		store.Mutation(obj)
	}
}
