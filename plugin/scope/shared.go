package scope

import (
	"context"
	"log/slog"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// NewSharedRegistry returns an empty registry whose scopes share, per
// namespace, one cache of each kind of run object and of the TaskSets and
// Workflows, each scope reading only its own workflow's: a process that
// follows every workflow of a namespace (the controller) then makes a
// watch per kind and namespace instead of six per workflow.
func NewSharedRegistry(clients Clients, log *slog.Logger) *Registry {
	r := NewRegistry(clients, log)
	r.shared = map[string]*runCaches{}
	r.sharedCtx, r.sharedCancel = context.WithCancel(context.Background())
	return r
}

// namespaceCaches are the shared caches of namespace, started on first
// use; they run until the registry's Run ends.
func (r *Registry) namespaceCaches(namespace string) *runCaches {
	r.sharedMu.Lock()
	defer r.sharedMu.Unlock()
	if c, ok := r.shared[namespace]; ok {
		return c
	}
	// Every run object sparkplug labels with a workflow's uid; a
	// change concerns the scope of that uid, if this process follows it.
	selector := spark.LabelWorkflowUID
	byUID := func(m *metav1.ObjectMeta) *Scope { return r.scopeOf(m.Labels[spark.LabelWorkflowUID]) }
	c := r.newRunCaches(r.sharedCtx, namespace, selector, byUID)
	// Every TaskSet of the namespace: a workflow's is named after it.
	tsInf := r.newInformer(listWatch(r.clients.Workflows.ArgoprojV1alpha1().WorkflowTaskSets(namespace), func(*metav1.ListOptions) {}), &wfv1.WorkflowTaskSet{})
	r.watchWhole(tsInf, func(obj any) *Scope {
		ts, ok := obj.(*wfv1.WorkflowTaskSet)
		if !ok {
			return nil
		}
		return r.scopeNamed(ts.Namespace, ts.Name)
	})
	go tsInf.RunWithContext(r.sharedCtx)
	c.taskSets = tsInf.GetStore()
	// Every Workflow of the namespace, slimmed to what a pass reads (its
	// phase, shutdown and plugin nodes; of a Workflow without a Spark
	// step hardly more than its name): the cost of following all of them
	// is a watch, not one per workflow, and a Workflow whose nodes are
	// refused (nodes.go) is told once.
	wfInf := r.newInformer(listWatch(r.clients.Workflows.ArgoprojV1alpha1().Workflows(namespace), func(*metav1.ListOptions) {}), &wfv1.Workflow{})
	workflowScope := func(obj any) *Scope {
		w, ok := obj.(*wfv1.Workflow)
		if !ok {
			return nil
		}
		return r.scopeOf(string(w.UID))
	}
	r.watchEnding(wfInf, workflowScope)
	r.watchRefused(wfInf)
	r.watchWhole(wfInf, workflowScope)
	go wfInf.RunWithContext(r.sharedCtx)
	c.workflows = wfInf.GetStore()
	c.synced = append(c.synced, tsInf.HasSynced, wfInf.HasSynced)
	r.shared[namespace] = c
	r.log.Info("starting the namespace's shared caches", "namespace", namespace, "selector", selector)
	return c
}

// scopeOf is the scope of the workflow with uid, nil when none.
func (r *Registry) scopeOf(uid string) *Scope {
	if uid == "" {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.scopes[uid]
}

// scopeNamed is the scope of the workflow namespace/name, nil when none.
func (r *Registry) scopeNamed(namespace, name string) *Scope {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.named[namespace+"/"+name]
}
