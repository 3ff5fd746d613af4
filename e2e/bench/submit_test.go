//go:build bench

package bench

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"
)

var runSeq int

func runID(kind string, n int) string {
	runSeq++
	return fmt.Sprintf("%s-%d-%d-%d", kind, n, runSeq, time.Now().Unix())
}

// submitted is when the workflow of the current run was created.
var submitted time.Time

func submit(t *testing.T, text string) *wfv1.Workflow {
	t.Helper()
	var wf wfv1.Workflow
	if err := yaml.UnmarshalStrict([]byte(text), &wf); err != nil {
		t.Fatalf("workflow: %v", err)
	}
	submitted = time.Now()
	created, err := env.Workflows.ArgoprojV1alpha1().Workflows(env.Namespace).Create(context.Background(), &wf, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	return created
}

// submitAll creates the workflows of texts at once, sixteen at a time
// (as the operator's SparkApplications), as a CronWorkflow's runs that
// fall due together.
func submitAll(t *testing.T, texts []string) {
	t.Helper()
	wfs := make([]*wfv1.Workflow, len(texts))
	for i, text := range texts {
		wfs[i] = new(wfv1.Workflow)
		if err := yaml.UnmarshalStrict([]byte(text), wfs[i]); err != nil {
			t.Fatalf("workflow: %v", err)
		}
	}
	client := env.Workflows.ArgoprojV1alpha1().Workflows(env.Namespace)
	submitted = time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(wfs))
	next := make(chan *wfv1.Workflow)
	for range 16 {
		wg.Go(func() {
			for wf := range next {
				if _, err := client.Create(context.Background(), wf, metav1.CreateOptions{}); err != nil {
					errs <- err
				}
			}
		})
	}
	for _, wf := range wfs {
		next <- wf
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("submit: %v", err)
	}
}

// waitWorkflow waits until wf succeeded and returns when, since submitted.
func waitWorkflow(t *testing.T, wf *wfv1.Workflow, timeout time.Duration) time.Duration {
	t.Helper()
	var last *wfv1.Workflow
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		got, err := env.Workflows.ArgoprojV1alpha1().Workflows(wf.Namespace).Get(ctx, wf.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = got
		return got.Status.Phase.Completed(), nil
	})
	if err != nil {
		t.Fatalf("workflow %s not done within %v", wf.Name, timeout)
	}
	if last.Status.Phase != wfv1.WorkflowSucceeded {
		t.Fatalf("workflow %s: %s %q", wf.Name, last.Status.Phase, last.Status.Message)
	}
	return time.Since(submitted)
}

// waitWorkflows waits until the n workflows of run succeeded and returns
// when, since submitted.
func waitWorkflows(t *testing.T, run string, n int, timeout time.Duration) time.Duration {
	t.Helper()
	sel := metav1.ListOptions{LabelSelector: RunLabel + "=" + run}
	phases := map[wfv1.WorkflowPhase]int{}
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := env.Workflows.ArgoprojV1alpha1().Workflows(env.Namespace).List(ctx, sel)
		if err != nil {
			return false, nil
		}
		phases = map[wfv1.WorkflowPhase]int{}
		done := 0
		for _, wf := range list.Items {
			phases[wf.Status.Phase]++
			if wf.Status.Phase.Completed() {
				done++
			}
		}
		return done >= n, nil
	})
	if err != nil || phases[wfv1.WorkflowSucceeded] != n {
		t.Fatalf("workflows of run %s: %v, phases %v; want all %d Succeeded", run, err, phases, n)
	}
	return time.Since(submitted)
}

// cleanup deletes the workflow (nil: the run's workflows, by its label)
// and the run's pods at once (the garbage collector would take minutes
// for 1,000) and waits until they are gone, and with them the agent pods
// (and their played processes).
func cleanup(t *testing.T, wf *wfv1.Workflow, run string) {
	t.Helper()
	ctx := context.Background()
	policy := metav1.DeletePropagationBackground
	sel := metav1.ListOptions{LabelSelector: RunLabel + "=" + run}
	wfs := env.Workflows.ArgoprojV1alpha1().Workflows(env.Namespace)
	if wf != nil {
		_ = wfs.Delete(ctx, wf.Name, metav1.DeleteOptions{PropagationPolicy: &policy})
	} else {
		_ = wfs.DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &policy}, sel)
	}
	_ = env.Kube.CoreV1().Pods(env.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, sel)
	agents := metav1.ListOptions{LabelSelector: "workflows.argoproj.io/component=agent"}
	_ = env.Kube.CoreV1().Pods(env.Namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, agents)
	err := wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := env.Kube.CoreV1().Pods(env.Namespace).List(ctx, sel)
		if err != nil || len(pods.Items) > 0 {
			return false, nil
		}
		ags, err := env.Kube.CoreV1().Pods(env.Namespace).List(ctx, agents)
		if err != nil || len(ags.Items) > 0 {
			return false, nil
		}
		left, err := wfs.List(ctx, sel)
		return err == nil && len(left.Items) == 0 && len(env.Sidecars.Of(env.Namespace, "")) == 0, nil
	})
	if err != nil {
		t.Fatalf("the workflows, pods and agents of run %s are not gone after 10m", run)
	}
}
