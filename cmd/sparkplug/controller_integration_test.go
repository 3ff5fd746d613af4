//go:build integration

package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/sparkplug-io/sparkplug/plugin/controller"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// syncBuffer is a log both a controller and the test use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// replica is one controller replica run in-process.
type replica struct {
	log  *syncBuffer
	stop func() // as SIGTERM: it releases the Lease
}

// startController runs a controller replica named id over the env's
// namespace, as its plugin ServiceAccount, with a short Lease.
func (e *env) startController(id string) *replica {
	e.t.Helper()
	c := controller.DefaultConfig()
	c.Monitor.Namespaces = []string{e.ns}
	c.Monitor.LeaderElectionNamespace = e.ns
	c.Monitor.Identity = id
	c.Monitor.Kubeconfig = e.kubeconfig
	c.Monitor.MetricsAddr, c.Monitor.HealthAddr = "127.0.0.1:0", "127.0.0.1:0"
	c.Monitor.LeaseDuration, c.Monitor.RenewDeadline, c.Monitor.RetryPeriod = 3*time.Second, 2*time.Second, 500*time.Millisecond
	c.Monitor.TTLInterval = time.Second
	c.Core.Resync, c.Core.WriteGap, c.Core.NotFoundGrace = time.Second, 100*time.Millisecond, notFoundGrace
	if err := c.Validate(); err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{log: &syncBuffer{}}
	done := make(chan error, 1)
	go func() {
		done <- controller.Run(ctx, c, slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug})))
	}()
	var once sync.Once
	r.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				e.t.Errorf("controller %s: %v", id, err)
			}
		})
	}
	e.t.Cleanup(func() {
		r.stop()
		if e.t.Failed() {
			e.t.Logf("controller %s log:\n%s", id, tail(r.log.String(), 40))
		}
	})
	return r
}

// newControllerEnv is a namespace, its Workflow and the controller's
// ServiceAccount with the Roles manifests/modes/controller gives it, with
// no plugin server: the controller, acting as that account (the env's
// kubeconfig), is the only sparkplug.
func newControllerEnv(t testing.TB, name string) *env {
	t.Helper()
	e, dir := newWorkflow(t, name)
	rbac, err := os.ReadFile("../../manifests/modes/controller/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := testCluster.Apply(ctx, withNamespace(t, rbac, e.ns)); err != nil {
		t.Fatalf("apply manifests/modes/controller/rbac.yaml: %v", err)
	}
	e.kubeconfig = filepath.Join(dir, "controller-kubeconfig")
	if err := testCluster.WriteServiceAccountKubeconfig(ctx, e.ns, "sparkplug-controller", e.kubeconfig); err != nil {
		t.Fatal(err)
	}
	return e
}

// succeeded: a result is the node's Succeeded.
func succeeded(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded }

// finishDriver makes node's one driver exit 0, as a kubelet would.
func (e *env) finishDriver(node string) {
	e.t.Helper()
	e.setDriverStatus(e.driverOfNode(node).Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
}

// waitDriverOf waits until node has a driver.
func (e *env) waitDriverOf(node string) {
	e.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		for _, d := range e.drivers() {
			if d.Annotations[spark.AnnotationNodeID] == node {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("no driver of node %s: %v", node, err)
	}
}

// The controller runs a workflow's Spark node with no request from any
// agent: it finds the workflow by its TaskSet, launches the driver,
// writes the node's result into the TaskSet under its id, and lets the
// workflow go once it finished (its TaskSet labelled completed).
func TestControllerRunsANodeWithoutARequestAndLetsTheWorkflowGo(t *testing.T) {
	t.Parallel()
	e := newControllerEnv(t, "controller-runs")
	r := e.startController("only")
	e.setTasks(map[string]*wfv1.Template{"spark-pi-1": template(t, "pi", sparkPi)})
	e.waitDriverOf("spark-pi-1")
	e.finishDriver("spark-pi-1")
	res := e.eventuallyNode("spark-pi-1", "Succeeded", succeeded)
	if param(res, spark.OutputDriverPod) != e.driverOfNode("spark-pi-1").Name {
		t.Errorf("result %s does not name the node's driver", describe(res))
	}

	// Argo finishes the workflow: phase Succeeded, and the TaskSet
	// labelled completed (its taskset.go).
	e.updateWorkflow(func(wf *wfv1.Workflow) {
		wf.Status.Phase = wfv1.WorkflowSucceeded
		wf.Status.FinishedAt = metav1.Now()
		n := wf.Status.Nodes["spark-pi-1"]
		n.Phase = wfv1.NodeSucceeded
		wf.Status.Nodes["spark-pi-1"] = n
	})
	e.labelTaskSetCompleted()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return strings.Contains(r.log.String(), "no longer following workflow"), nil
	})
	if err != nil {
		t.Fatal("the controller still follows a finished workflow")
	}
	if n := len(e.drivers()); n != 1 {
		t.Errorf("%d drivers, want the one", n)
	}
}

// labelTaskSetCompleted labels the TaskSet as Argo does once its workflow
// is fulfilled.
func (e *env) labelTaskSetCompleted() {
	e.t.Helper()
	sets := e.wfc.ArgoprojV1alpha1().WorkflowTaskSets(e.ns)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		ts, err := sets.Get(context.Background(), e.wf.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ts.Labels == nil {
			ts.Labels = map[string]string{}
		}
		ts.Labels["workflows.argoproj.io/completed"] = "true"
		_, err = sets.Update(context.Background(), ts, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// Two replicas: the leader launches; when it stops (SIGTERM, which
// releases the Lease) the other takes over from what the cluster holds,
// launches what was listed meanwhile, and reports every node, each with
// one driver of its own.
func TestControllerHandoverLosesAndDuplicatesNothing(t *testing.T) {
	t.Parallel()
	e := newControllerEnv(t, "controller-handover")
	a := e.startController("a")
	waitLeader(t, a)
	b := e.startController("b")
	tasks := map[string]*wfv1.Template{}
	for _, id := range []string{"spark-pi-1", "spark-pi-2", "spark-pi-3"} {
		tasks[id] = template(t, "pi-"+id, strings.Replace(sparkPi, `["1000"]`, `["`+id+`"]`, 1))
	}
	e.setTasks(tasks)
	for id := range tasks {
		e.waitDriverOf(id)
	}
	e.finishDriver("spark-pi-1")
	e.eventuallyNode("spark-pi-1", "Succeeded", succeeded)

	a.stop()
	tasks["spark-pi-4"] = template(t, "pi-4", strings.Replace(sparkPi, `["1000"]`, `["spark-pi-4"]`, 1))
	e.setTasks(tasks)
	waitLeader(t, b)
	e.waitDriverOf("spark-pi-4")
	for _, id := range []string{"spark-pi-2", "spark-pi-3", "spark-pi-4"} {
		e.finishDriver(id)
	}
	for id := range tasks {
		e.eventuallyNode(id, "Succeeded", succeeded)
		e.driverOfNode(id) // exactly one driver each
	}
	if n := len(e.drivers()); n != len(tasks) {
		t.Errorf("%d drivers for %d nodes", n, len(tasks))
	}
	if strings.Contains(b.log.String(), "level=ERROR") {
		t.Errorf("the new leader logged errors:\n%s", tail(b.log.String(), 20))
	}
}

// waitLeader waits until replica r leads and follows the namespace.
func waitLeader(t *testing.T, r *replica) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return strings.Contains(r.log.String(), "following the Spark workflows of the namespaces"), nil
	})
	if err != nil {
		t.Fatalf("replica never led:\n%s", tail(r.log.String(), 20))
	}
}
