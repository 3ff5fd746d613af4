//go:build e2e

package kueue

import (
	"regexp"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
)

// The ends of a wait in Kueue's queue other than admission: the
// template's timeout, and a Workload Kueue can never admit.

// TestKueueTimeoutEndsAQueuedStep: a step (a DAG task) with the template's `timeout:
// 20s` waits behind a step that holds the queue's whole quota; once 20 s
// from its node's start have passed it fails, saying it timed out while
// queued and in which LocalQueue, its Workload is withdrawn, and no
// driver of it was ever made.
func TestKueueTimeoutEndsAQueuedStep(t *testing.T) {
	t.Parallel()
	q := newQueue(t, queueSpec{CPU: appCPU, Memory: appMemoryRoom})
	wls := watchWorkloads(t, q.LocalQueue)
	pods := watchSparkPods(t)
	label := map[string]string{labelQueueName: q.LocalQueue}

	holder := Given(t).Workflow(workflow(t, "kueue-holder-", app{name: "pi", labels: label, driver: sim.Driver{Forever: true}})).
		When().SubmitWorkflow().WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING`))
	late := Given(t).Workflow(dagWorkflow(t, "kueue-timeout-", app{name: "pi", labels: label, driver: sim.Succeed(runLong), timeout: "20s"})).
		When().SubmitWorkflow().WaitForNode("pi", framework.NodeMessage(`^QUEUED: `))
	lateWl := ownedWorkload(t, wls, late.Workflow().UID)

	want := regexp.MustCompile(`^FAILED: timed out after 20s \(the template's timeout\) while queued in LocalQueue ` + regexp.QuoteMeta(q.LocalQueue))
	late.WaitForWorkflow(framework.ToBeFailed, time.Minute).Then().
		ExpectNode("pi", func(t *testing.T, n *wfv1.NodeStatus) {
			if n.Phase != wfv1.NodeFailed || !want.MatchString(n.Message) {
				t.Errorf("node: %s %q, want Failed matching %s", n.Phase, n.Message, want)
			}
			// Resync and writes add seconds, not the queue's whole wait.
			if took := n.FinishedAt.Sub(n.StartedAt.Time); took < 20*time.Second || took > 45*time.Second {
				t.Errorf("node ended %v after it started, want 20 s and a little more", took)
			}
		})
	waitFor(t, "Workload "+lateWl+" to be deleted", func() bool { _, ok := wls.DeletedAt(lateWl); return ok }, wls.String)
	if d := driverNames(pods, late.Workflow().UID); len(d) != 0 {
		t.Errorf("the step that timed out while queued launched drivers %v", d)
	}

	holder.Terminate().WaitForWorkflow(framework.ToBeCompleted)
	waitNoWorkload(t, wls)
}

// TestKueueStepThatCanNeverFitFails: a step whose executors alone ask
// more CPU than its ClusterQueue's whole quota (4 executors of 1 core,
// a quota of 3) fails at once, in Kueue's words: the pod set, the
// resource and the maximum capacity; no driver is made and no Workload
// is left.
func TestKueueStepThatCanNeverFitFails(t *testing.T) {
	t.Parallel()
	q := newQueue(t, queueSpec{CPU: appCPU, Memory: "64Gi"})
	wls := watchWorkloads(t, q.LocalQueue)
	pods := watchSparkPods(t)

	w := Given(t).Workflow(workflow(t, "kueue-never-",
		app{name: "pi", labels: map[string]string{labelQueueName: q.LocalQueue}, driver: sim.Succeed(runLong),
			edit: func(body map[string]any) { body["executor"].(map[string]any)["instances"] = 4 }},
	)).When().SubmitWorkflow()
	start := time.Now()
	w.WaitForWorkflow(framework.ToBeFailed, time.Minute).Then().
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			for _, part := range []string{"FAILED: Kueue can never admit Workload ", "in LocalQueue " + q.LocalQueue,
				"pod set executor", "insufficient quota for cpu", "> maximum capacity (" + appCPU + ")"} {
				if !strings.Contains(n.Message, part) {
					t.Errorf("node: %s %q, want Failed saying %q", n.Phase, n.Message, part)
				}
			}
		})
	t.Logf("failed %v after it was submitted", time.Since(start).Round(time.Second))
	waitNoWorkload(t, wls)
	if d := driverNames(pods, w.Workflow().UID); len(d) != 0 {
		t.Errorf("the step that can never fit launched drivers %v", d)
	}
}
