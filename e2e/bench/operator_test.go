//go:build bench

package bench

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkplug-io/sparkplug/e2e/cluster"
	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/operator"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
)

// The Spark operator's controller is started on first use in an
// environment by startOperator (hack/operator.sh builds it) and stopped
// with the environment (stopOperator).
var (
	operatorEnv  *framework.Env
	operatorProc *cluster.Process
)

func startOperator(t *testing.T) {
	t.Helper()
	if operatorEnv == env {
		return
	}
	ctx := context.Background()
	binDir, sparkHome, err := operator.Build(ctx, env.RepoRoot)
	if err != nil {
		t.Fatalf("Spark operator: %v", err)
	}
	p, err := operator.Start(ctx, env.Cluster, binDir, sparkHome, env.Namespace)
	if err != nil {
		t.Fatalf("Spark operator: %v", err)
	}
	operatorEnv, operatorProc = env, p
	t.Logf("Spark operator %s runs (log %s)", operator.Version(ctx, binDir), p.LogPath())
}

// stopOperator stops the operator of the current environment, if it runs.
func stopOperator() {
	if operatorProc != nil {
		_ = operatorProc.Stop()
	}
	operatorEnv, operatorProc = nil, nil
}

// runOperator creates n SparkApplications at once, as n Argo resource
// steps would (without the pod each of those needs), and follows them to
// COMPLETED.
func runOperator(t *testing.T, n int) Result {
	startOperator(t)
	ctx := context.Background()
	run := runID("operator", n)
	apps := env.Cluster.Dynamic.Resource(operator.SparkApplicationResource).Namespace(env.Namespace)
	objs := make([]*unstructured.Unstructured, n)
	ann := sim.Succeed(driverRun(n)).Annotations()
	for i := range objs {
		app := operator.SparkApplication(fmt.Sprintf("%s-%d", run, i), env.Namespace, ann)
		// As the Spark steps: their own argument, the run's label on the
		// driver and the application, no executors until asked for.
		_ = unstructured.SetNestedSlice(app.Object, []any{fmt.Sprint(i)}, "spec", "arguments")
		_ = unstructured.SetNestedStringMap(app.Object, map[string]string{RunLabel: run}, "spec", "driver", "labels")
		unstructured.RemoveNestedField(app.Object, "spec", "executor", "instances")
		_ = unstructured.SetNestedMap(app.Object, map[string]any{"enabled": true, "initialExecutors": int64(0), "minExecutors": int64(0), "maxExecutors": int64(2)}, "spec", "dynamicAllocation")
		app.SetLabels(map[string]string{RunLabel: run})
		objs[i] = app
	}
	w := newPodWatch(t, run)
	api0 := apiRequests(t)
	submitted = time.Now()
	// Sixteen at a time, as many as an agent's workers.
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan *unstructured.Unstructured)
	for range 16 {
		wg.Go(func() {
			for app := range next {
				if _, err := apps.Create(ctx, app, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		})
	}
	for _, app := range objs {
		next <- app
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("create SparkApplication: %v", err)
	}
	w.waitCreated(t, nil, n, 15*time.Minute)
	r := Result{Kind: KindOperator, N: n, Created: w.created(), APIRequests: apiRequests(t) - api0, OwnRequests: -1, WorkflowWrites: -1, TaskSetWrites: -1}

	sel := metav1.ListOptions{LabelSelector: RunLabel + "=" + run}
	var states map[string]int
	err := wait.PollUntilContextTimeout(ctx, time.Second, driverRun(n)+15*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := apps.List(ctx, sel)
		if err != nil {
			return false, nil
		}
		states = map[string]int{}
		done := 0
		for i := range list.Items {
			states[operator.State(&list.Items[i])]++
			if operator.Terminal(&list.Items[i]) {
				done++
			}
		}
		return done == n, nil
	})
	if err != nil || states[operator.StateCompleted] != n {
		t.Fatalf("SparkApplications of run %s: %v, states %v; want all %d %s", run, err, states, n, operator.StateCompleted)
	}
	r.Done = time.Since(submitted)

	// The drivers outlive their applications (spark-submit sets no owner
	// on them): cleanup deletes the run's pods.
	if err := apps.DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("delete the SparkApplications: %v", err)
	}
	cleanup(t, nil, run)
	return r
}
