package scope

import (
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"k8s.io/client-go/tools/cache"
)

// OnRefused sets the function called when a Workflow's nodes are refused
// (Refused): once per workflow and reason, followed or not, from an
// informer goroutine. Set it before the first scope starts.
func (r *Registry) OnRefused(f func(wf *wfv1.Workflow, why string)) { r.onRefused = f }

// watchRefused tells onRefused about the Workflows of inf whose nodes
// were refused, once per workflow and reason.
func (r *Registry) watchRefused(inf cache.SharedIndexInformer) {
	seen := func(obj any) {
		w, ok := obj.(*wfv1.Workflow)
		if !ok {
			return
		}
		why := Refused(w)
		r.refusedMu.Lock()
		if why == "" || r.refused[w.UID] == why {
			if why == "" {
				delete(r.refused, w.UID)
			}
			r.refusedMu.Unlock()
			return
		}
		r.refused[w.UID] = why
		r.refusedMu.Unlock()
		r.log.Warn("workflow refused: its nodes are not read, its Spark steps not run",
			"workflow", w.Name, "namespace", w.Namespace, "why", why)
		if r.onRefused != nil {
			r.onRefused(w, why)
		}
	}
	gone := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if w, ok := obj.(*wfv1.Workflow); ok {
			r.refusedMu.Lock()
			delete(r.refused, w.UID)
			r.refusedMu.Unlock()
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: seen, UpdateFunc: func(_, obj any) { seen(obj) }, DeleteFunc: gone,
	})
}
