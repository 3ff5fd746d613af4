package scope

import (
	"slices"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/step"
)

// The caches' indexes beyond the namespace's: a request reads only its
// step's runs and a run's executors, whatever else the workflow has.
const (
	// byWorkflow indexes run objects by their workflow's uid
	// (spark.LabelWorkflowUID): a scope's own among a namespace's.
	byWorkflow = "workflow"
	// byNode indexes drivers, executors and tombstones by their node's
	// hash (spark.LabelNode).
	byNode = "node"
	// byApp indexes drivers and executors by application id
	// (spark.LabelAppSelector).
	byApp = "app"
)

// labelIndex indexes an object by the value of one of its labels.
func labelIndex(label string) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, nil
		}
		if v, ok := m.GetLabels()[label]; ok {
			return []string{v}, nil
		}
		return nil, nil
	}
}

// indexed returns the objects of type T that c holds under value in
// index.
func indexed[T any](c cache.MutationCache, index, value string) []T {
	objs, err := c.ByIndex(index, value)
	if err != nil {
		return nil
	}
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// SparkTasks returns the ids of ts's tasks that are spark steps, sorted,
// by whether their template's plugin value has the spark key (whether the
// body is valid is the caller's to find out). known, when not nil,
// remembers the answer by id and is asked first: a node's template never
// changes, and deciding decodes the template's whole plugin value, which
// for a TaskSet of 1,000 tasks on every request and change was most of
// the sidecar's CPU.
func SparkTasks(ts *wfv1.WorkflowTaskSet, known map[string]bool) []string {
	if ts == nil {
		return nil
	}
	var out []string
	for id := range ts.Spec.Tasks {
		spark, seen := known[id]
		if !seen {
			tmpl := ts.Spec.Tasks[id]
			spark = isSpark(&tmpl)
			if known != nil {
				known[id] = spark
			}
		}
		if spark {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// isSpark: the template is a plugin template whose value names the spark
// plugin.
func isSpark(t *wfv1.Template) bool {
	_, ok, err := step.BodyOf(t)
	return ok && err == nil
}

// watchNodes tells onChange about a change of an object of infs, with
// the node id it names, for the scope route gives (none: no call).
func (r *Registry) watchNodes(route func(*metav1.ObjectMeta) *Scope, infs ...cache.SharedIndexInformer) {
	if r.onChange == nil {
		return
	}
	node := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return
		}
		id := m.GetAnnotations()[spark.AnnotationNodeID]
		if id == "" {
			return
		}
		if s := route(&metav1.ObjectMeta{Labels: m.GetLabels()}); s != nil {
			r.onChange(s, id)
		}
	}
	for _, inf := range infs {
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: node, UpdateFunc: func(_, o any) { node(o) }, DeleteFunc: node})
	}
}

// watchWhole tells onChange about every change of an object of inf (the
// TaskSet, the Workflow: any node may be concerned), for the scope route
// gives.
func (r *Registry) watchWhole(inf cache.SharedIndexInformer, route func(any) *Scope) {
	if r.onChange == nil {
		return
	}
	all := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if s := route(obj); s != nil {
			r.onChange(s, "")
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: all, UpdateFunc: func(_, o any) { all(o) }, DeleteFunc: all})
}
