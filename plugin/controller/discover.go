package controller

import (
	"context"
	"log/slog"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/sparkplug-io/sparkplug/plugin/execute"
	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// annotationSpark marks, in the discovery cache only, a TaskSet that lists
// a Spark task (the cache keeps no tasks).
const annotationSpark = "sparkplug.io/spark-tasks"

// discoveryResync is how often every open TaskSet is offered again: a
// workflow released too early is followed again within it.
const discoveryResync = 5 * time.Minute

// follower is what discovery drives (execute.Core, through coreFollower).
type follower interface {
	Follow(wf spark.WorkflowRef)
	Following(uid string) bool
	Ended(ctx context.Context, uid string)
}

// coreFollower is the reconciler as discovery's follower.
type coreFollower struct{ *execute.Core }

func (f coreFollower) Follow(wf spark.WorkflowRef) { f.Serve(wf) }

// workflowOf is the workflow a TaskSet belongs to, and whether it lists
// a Spark task: Argo names the TaskSet after its Workflow, which owns it.
// A TaskSet without that owner is not followed.
func workflowOf(ts *wfv1.WorkflowTaskSet) (spark.WorkflowRef, bool) {
	uid := identity.WorkflowOwnerUID(ts.OwnerReferences, ts.Name, false)
	if uid == "" {
		return spark.WorkflowRef{}, false
	}
	return spark.WorkflowRef{Name: ts.Name, Namespace: ts.Namespace, UID: uid}, ts.Annotations[annotationSpark] == "true"
}

// slimTaskSet keeps of a TaskSet its metadata and whether it lists a
// Spark task: discovery needs no more, and the templates of the
// namespace's TaskSets are held once, in the shared caches the followed
// workflows read (scope.NewSharedRegistry).
func slimTaskSet(obj any) (any, error) {
	ts, ok := obj.(*wfv1.WorkflowTaskSet)
	if !ok {
		return obj, nil
	}
	out := &wfv1.WorkflowTaskSet{TypeMeta: ts.TypeMeta, ObjectMeta: *ts.ObjectMeta.DeepCopy()}
	out.ManagedFields = nil
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	if len(scope.SparkTasks(ts, nil)) > 0 {
		out.Annotations[annotationSpark] = "true"
	}
	return out, nil
}

// discover follows the Spark workflows of namespace until ctx is done;
// synced is closed once its first list has been offered.
func discover(ctx context.Context, argo wfclient.Interface, namespace string, f follower, log *slog.Logger) (synced cache.InformerSynced, err error) {
	open, _ := labels.NewRequirement(spark.ArgoLabelCompleted, selection.NotEquals, []string{"true"})
	selector := labels.NewSelector().Add(*open).String()
	sets := argo.ArgoprojV1alpha1().WorkflowTaskSets(namespace)
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			return sets.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return sets.Watch(ctx, o)
		},
	}, &wfv1.WorkflowTaskSet{}, discoveryResync, cache.Indexers{})
	if err := inf.SetTransform(slimTaskSet); err != nil {
		return nil, err
	}
	offer := func(obj any) {
		ts, ok := obj.(*wfv1.WorkflowTaskSet)
		if !ok {
			return
		}
		if wf, isSpark := workflowOf(ts); isSpark {
			f.Follow(wf)
		}
	}
	gone := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		ts, ok := obj.(*wfv1.WorkflowTaskSet)
		if !ok {
			return
		}
		// Finished (labelled completed, so out of the selector) or
		// deleted with its Workflow.
		if wf, _ := workflowOf(ts); wf.UID != "" && f.Following(wf.UID) {
			go f.Ended(ctx, wf.UID)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    offer,
		UpdateFunc: func(_, obj any) { offer(obj) },
		DeleteFunc: gone,
	}); err != nil {
		return nil, err
	}
	go inf.RunWithContext(ctx)
	log.Info("discovering Spark workflows", "namespace", namespace, "selector", selector)
	return inf.HasSynced, nil
}
