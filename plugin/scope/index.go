package scope

import (
	"fmt"
	"slices"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// The caches' indexes beyond the namespace's: a request reads only its
// step's runs and a run's executors, whatever else the workflow has.
const (
	// byTemplate indexes drivers and tombstones by their step's template
	// key (spark.LabelTemplate).
	byTemplate = "template"
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

// TasksOfTemplate returns the ids, sorted, of ts's plugin tasks whose
// template key is want. The index by key is built once per TaskSet
// version (its uid and resourceVersion; every time for one without), so a
// request reads only its own step's tasks however many the workflow has.
func (s *Scope) TasksOfTemplate(ts *wfv1.WorkflowTaskSet, want string, key func(*wfv1.Template) (string, error)) ([]string, error) {
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	version := string(ts.UID) + "/" + ts.ResourceVersion
	if ts.ResourceVersion == "" || s.tasksByKey == nil || s.tasksOf != version {
		idx := map[string][]string{}
		for id, tmpl := range ts.Spec.Tasks {
			if tmpl.Plugin == nil {
				continue
			}
			k, err := s.templateKey(id, &tmpl, key)
			if err != nil {
				return nil, fmt.Errorf("key of task %s: %w", id, err)
			}
			idx[k] = append(idx[k], id)
		}
		for _, ids := range idx {
			slices.Sort(ids)
		}
		s.tasksByKey, s.tasksOf = idx, version
	}
	return s.tasksByKey[want], nil
}
