//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/plugin/convert"
)

// The cron tests wait on the real clock: Argo's cron controller
// (robfig/cron in the workflow-controller) starts runs at whole minutes and
// has no setting to go faster. TestCronWorkflowRunsEveryMinute,
// TestCronForbidSkipsWhileSparkRuns and TestCronReplaceStopsTheRunningDriver
// run side by side, so together they cost the suite about as long as the
// longest of them (under 3 minutes).

const (
	// firstRunTimeout bounds the wait for a new `* * * * *` CronWorkflow's
	// first run: the next whole minute (at most 60 s), plus a minute more
	// in case the controller added the schedule just after a whole minute
	// went by.
	firstRunTimeout = 2*time.Minute + 10*time.Second
	// nextMinuteSlack is how late after its minute a scheduled run may
	// still count as on time.
	nextMinuteSlack = 20 * time.Second
)

// everyMinute is a CronWorkflow named name that starts a SparkPi run every
// minute under concurrencyPolicy policy.
func everyMinute(name string, policy wfv1.ConcurrencyPolicy) string {
	return fmt.Sprintf(`
apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata:
  name: %s
spec:
  schedules: ["* * * * *"]
  concurrencyPolicy: %s
  workflowSpec:
    entrypoint: pi
    templates:
      - name: pi
        plugin:
          spark:%s
`, name, policy, sparkBody(12, driverLine, executorLine))
}

// A CronWorkflow scheduled every minute starts a run on the next minute
// by itself; its Spark step succeeds, the run carries the CronWorkflow's
// label and is owned by it, and the cron controller counts the success.
func TestCronWorkflowRunsEveryMinute(t *testing.T) {
	onceAcrossModes(t, "Argo's cron controller starting, labelling and counting runs")
	parallelLong(t)
	const name = "cron-every-minute"
	var cron *wfv1.CronWorkflow
	w := Given(t).
		CronWorkflow(everyMinute(name, wfv1.AllowConcurrent)).
		Simulate(sim.Succeed(3*time.Second)).
		When().
		CreateCronWorkflow().
		WaitForCronAccepted(30*time.Second).
		WaitForRuns(1, firstRunTimeout).
		WaitForWorkflow(framework.ToBeSucceeded)
	run := w.Workflow()
	w.Then().
		ExpectWorkflow(func(t *testing.T, md *metav1.ObjectMeta, _ *wfv1.WorkflowStatus) {
			if got := md.Labels[framework.LabelCronWorkflow]; got != name {
				t.Errorf("run %s: label %s = %q, want %q", md.Name, framework.LabelCronWorkflow, got, name)
			}
			cron = w.CronWorkflow()
			owner := metav1.GetControllerOf(md)
			if owner == nil || owner.Kind != "CronWorkflow" || owner.UID != cron.UID {
				t.Errorf("run %s is controlled by %+v, want CronWorkflow %s (%s)", md.Name, owner, name, cron.UID)
			}
			at, err := framework.ScheduledTime(run)
			if err != nil {
				t.Fatal(err)
			}
			// A scheduled run is named <cron>-<unix time of its minute>.
			if at.Second() != 0 || md.Name != fmt.Sprintf("%s-%d", name, at.Unix()) {
				t.Errorf("run %s scheduled at %s: want a whole minute, and the name %s-<its unix time>", md.Name, at, name)
			}
		}).
		ExpectPluginNodes(func(t *testing.T, nodes []wfv1.NodeStatus) {
			if len(nodes) != 1 || nodes[0].Phase != wfv1.NodeSucceeded || !strings.HasPrefix(nodes[0].Message, "COMPLETED") {
				t.Fatalf("Spark nodes %v, want one Succeeded COMPLETED", nodeSummary(nodes))
			}
			if !appIDPattern.MatchString(result(nodes[0])) {
				t.Errorf("outputs.result %q is not an application id", result(nodes[0]))
			}
		}).
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			if len(drivers) != 1 || drivers[0].Status.Phase != corev1.PodSucceeded {
				t.Errorf("drivers %v, want one Succeeded", podSummary(drivers))
			}
		})
	// The cron controller (every 10 s) sees the run finish and counts it.
	w.WaitForCronWorkflow("to count a succeeded run", func(cron *wfv1.CronWorkflow, _ []wfv1.Workflow) (bool, error) {
		if cron.Status.Failed > 0 {
			return false, fmt.Errorf("status.failed = %d", cron.Status.Failed)
		}
		return cron.Status.Succeeded >= 1 && cron.Status.LastScheduledTime != nil, nil
	}, 30*time.Second)
}

// concurrencyPolicy Forbid: while the Spark step of a run still runs, the
// next minute's run is skipped. The controller says so, one run exists,
// and its one driver runs on, untouched, to success.
func TestCronForbidSkipsWhileSparkRuns(t *testing.T) {
	onceAcrossModes(t, "Argo's Forbid policy skipping a run")
	parallelLong(t)
	const name = "cron-forbid"
	// The driver runs until the skipped minute has been checked, then
	// ends (finish): the run outlasts the next minute however late in
	// its own minute it started, and the test waits for nothing more.
	w := Given(t).
		CronWorkflow(everyMinute(name, wfv1.ForbidConcurrent)).
		Simulate(sim.Driver{Forever: true}).
		When().
		CreateCronWorkflow().
		WaitForRuns(1, firstRunTimeout).
		WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING`)).
		WaitForDrivers(1)
	first := w.Workflow()
	at, err := framework.ScheduledTime(first)
	if err != nil {
		t.Fatal(err)
	}
	next := at.Add(time.Minute)
	var driver corev1.Pod
	w.Then().
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			driver = drivers[0]
		})
	// The controller's cron job for the next minute finds the run active
	// and starts none (workflow/cron/operator.go, enforceRuntimePolicy).
	w.WaitForControllerLog(time.Until(next)+nextMinuteSlack,
		"'ConcurrencyPolicy: Forbid' and has an active Workflow so it was not run", name).
		WaitUntil(next.Add(2*time.Second)).
		Then().
		ExpectCronWorkflow(func(t *testing.T, cron *wfv1.CronWorkflow, runs []wfv1.Workflow) {
			if len(runs) != 1 {
				t.Errorf("%d runs after the minute %s, want 1 (Forbid): %v", len(runs), next.Format("15:04:05"), runNames(runs))
			}
			if len(cron.Status.Active) != 1 || cron.Status.Active[0].UID != first.UID {
				t.Errorf("status.active %v, want only %s", cron.Status.Active, first.Name)
			}
		}).
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			if n.Phase != wfv1.NodeRunning || !strings.HasPrefix(n.Message, "RUNNING") {
				t.Errorf("node %s %q after the skipped minute, want Running RUNNING", n.Phase, n.Message)
			}
		}).
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			if len(drivers) != 1 || drivers[0].Name != driver.Name || !running(drivers[0]) {
				t.Errorf("drivers %v after the skipped minute, want %s still running", podSummary(drivers), driver.Name)
			}
		})
	finish(t, driver)
	w.WaitForWorkflow(framework.ToBeSucceeded, 2*time.Minute).
		Then().
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			if len(drivers) != 1 || drivers[0].Name != driver.Name || drivers[0].Status.Phase != corev1.PodSucceeded {
				t.Errorf("drivers %v, want %s Succeeded", podSummary(drivers), driver.Name)
			}
		})
}

// concurrencyPolicy Replace: when the next minute comes while a run's
// Spark step runs, the controller terminates that run, and sparkplug
// deletes its running driver (Argo never tells a plugin); the new run
// starts a driver of its own.
func TestCronReplaceStopsTheRunningDriver(t *testing.T) {
	parallelLong(t)
	const name = "cron-replace"
	w := Given(t).
		CronWorkflow(everyMinute(name, wfv1.ReplaceConcurrent)).
		Simulate(sim.Driver{Forever: true}).
		When().
		CreateCronWorkflow().
		WaitForRuns(1, firstRunTimeout).
		WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING`)).
		WaitForDrivers(1)
	old := w.Workflow()
	at, err := framework.ScheduledTime(old)
	if err != nil {
		t.Fatal(err)
	}
	var oldDriver string
	w.Then().
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			oldDriver = drivers[0].Name
		})
	w.WaitForRuns(2, time.Until(at.Add(time.Minute))+nextMinuteSlack).
		FollowRun(0).
		WaitForWorkflow(framework.ToBeFailed, 30*time.Second).
		WaitForDrivers(0, 30*time.Second).
		Then().
		ExpectWorkflow(func(t *testing.T, md *metav1.ObjectMeta, status *wfv1.WorkflowStatus) {
			if md.UID != old.UID {
				t.Fatalf("following %s, want the first run %s", md.Name, old.Name)
			}
			if s := w.Workflow().Spec.Shutdown; s != wfv1.ShutdownStrategyTerminate {
				t.Errorf("first run's spec.shutdown = %q, want Terminate (set by the cron controller)", s)
			}
		}).
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			if n.Phase != wfv1.NodeFailed {
				t.Errorf("first run's Spark node %s %q, want Failed", n.Phase, n.Message)
			}
		})
	expectDriverDeletedEvent(t, old, oldDriver)

	w.FollowRun(1).
		WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING`)).
		WaitForDrivers(1)
	replacement := w.Workflow()
	w.Then().
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			if len(drivers) != 1 || drivers[0].Name == oldDriver || !running(drivers[0]) {
				t.Errorf("the new run's drivers %v, want one of its own running (the old was %s)", podSummary(drivers), oldDriver)
			}
		})
	w.WaitForCronWorkflow("to list only the new run as active", func(cron *wfv1.CronWorkflow, _ []wfv1.Workflow) (bool, error) {
		return len(cron.Status.Active) == 1 && cron.Status.Active[0].UID == replacement.UID, nil
	}, 30*time.Second)
}

// expectDriverDeletedEvent checks that sparkplug recorded, on wf, that it
// deleted driver: the driver went because sparkplug saw its workflow end,
// not by garbage collection (the workflow still exists).
func expectDriverDeletedEvent(t *testing.T, wf *wfv1.Workflow, driver string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(15 * time.Second)
	for {
		events, err := env.Kube.CoreV1().Events(wf.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: fields.Set{"involvedObject.uid": string(wf.UID), "reason": "SparkDriverDeleted"}.String(),
		})
		if err != nil {
			t.Fatalf("list the events of %s: %v", wf.Name, err)
		}
		for _, e := range events.Items {
			if strings.Contains(e.Message, driver) {
				t.Logf("event on %s: %s %s", wf.Name, e.Reason, e.Message)
				return
			}
		}
		if time.Now().After(deadline) {
			t.Errorf("no SparkDriverDeleted event on %s naming driver %s (%d such events)", wf.Name, driver, len(events.Items))
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// The nightly example, run by hand now as `argo submit --from
// cronwf/nightly-spark-pi` does: the controller accepts the CronWorkflow,
// and the run, labelled and owned as Argo labels a run of it, succeeds.
func TestCronWorkflowRunByHand(t *testing.T) {
	onceAcrossModes(t, "a CronWorkflow the controller accepts and runs by hand")
	parallel(t)
	const name = "nightly-spark-pi"
	Given(t).
		CronWorkflow("@examples/cron-spark.yaml").
		Simulate(sim.Succeed(3 * time.Second)).
		When().
		SubmitWorkflow().
		WaitForCronAccepted(30 * time.Second).
		WaitForWorkflow(framework.ToBeSucceeded).
		Then().
		ExpectWorkflow(func(t *testing.T, md *metav1.ObjectMeta, _ *wfv1.WorkflowStatus) {
			for k, want := range map[string]string{
				framework.LabelCronWorkflow: name,
				// the example's spec.workflowMetadata.labels
				"app.kubernetes.io/name": name,
			} {
				if got := md.Labels[k]; got != want {
					t.Errorf("label %s = %q, want %q", k, got, want)
				}
			}
			if owner := metav1.GetControllerOf(md); owner == nil || owner.Kind != "CronWorkflow" || owner.Name != name {
				t.Errorf("run controlled by %+v, want CronWorkflow %s", owner, name)
			}
		}).
		ExpectPluginNodes(func(t *testing.T, nodes []wfv1.NodeStatus) {
			if len(nodes) != 1 || nodes[0].Phase != wfv1.NodeSucceeded || !appIDPattern.MatchString(result(nodes[0])) {
				t.Errorf("Spark nodes %v, want one Succeeded with an application id", nodeSummary(nodes))
			}
		}).
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			if len(drivers) != 1 || drivers[0].Status.Phase != corev1.PodSucceeded {
				t.Errorf("drivers %v, want one Succeeded", podSummary(drivers))
			}
		})
}

// The Spark operator's own ScheduledSparkApplication example, converted by
// plugin/convert (what `sparkplug convert` writes), is accepted by the real
// controller, and a run of it submitted now succeeds with the driver the
// SparkApplication described.
func TestConvertedScheduledSparkApplicationRuns(t *testing.T) {
	onceAcrossModes(t, "what sparkplug convert writes")
	parallel(t)
	const (
		input = "plugin/convert/testdata/kso-spark-pi-scheduled.input.yaml"
		// driver.serviceAccount of the operator's example: the operator's
		// Helm chart creates it, and so must whoever moves the job.
		serviceAccount = "spark-operator-spark"
	)
	b, err := os.ReadFile(filepath.Join(env.RepoRoot, input))
	if err != nil {
		t.Fatal(err)
	}
	results := convert.Convert(b, convert.Options{})
	if len(results) != 1 || results[0].Object == nil {
		t.Fatalf("%s converted to %d results, want one object: %+v", input, len(results), results)
	}
	for _, f := range results[0].Findings {
		t.Logf("convert reports: %s", f)
	}
	cron, ok := results[0].Object.(*wfv1.CronWorkflow)
	if !ok {
		t.Fatalf("%s converted to a %T, want a CronWorkflow", input, results[0].Object)
	}
	name := cron.Name
	cron.Namespace = "" // runs where the tests run (the example says default)
	text, err := convert.Marshal(cron)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Cluster.EnsureServiceAccount(context.Background(), env.Namespace, serviceAccount); err != nil {
		t.Fatal(err)
	}
	Given(t).
		CronWorkflow(string(text)).
		Simulate(sim.Succeed(3 * time.Second)).
		When().
		SubmitWorkflow().
		WaitForCronAccepted(30 * time.Second).
		WaitForWorkflow(framework.ToBeSucceeded).
		Then().
		ExpectWorkflow(func(t *testing.T, md *metav1.ObjectMeta, _ *wfv1.WorkflowStatus) {
			if got := md.Labels[framework.LabelCronWorkflow]; got != name {
				t.Errorf("label %s = %q, want %q", framework.LabelCronWorkflow, got, name)
			}
		}).
		ExpectPluginNodes(func(t *testing.T, nodes []wfv1.NodeStatus) {
			if len(nodes) != 1 || nodes[0].Phase != wfv1.NodeSucceeded || !strings.HasPrefix(nodes[0].Message, "COMPLETED") {
				t.Errorf("Spark nodes %v, want one Succeeded COMPLETED", nodeSummary(nodes))
			}
		}).
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			if len(drivers) != 1 {
				t.Fatalf("drivers %v, want one", podSummary(drivers))
			}
			d := drivers[0]
			if d.Status.Phase != corev1.PodSucceeded || d.Spec.ServiceAccountName != serviceAccount {
				t.Errorf("driver %s: %s as %q, want Succeeded as %s", d.Name, d.Status.Phase, d.Spec.ServiceAccountName, serviceAccount)
			}
			if len(d.Spec.Containers) == 0 || d.Spec.Containers[0].Image != "docker.io/apache/spark:4.0.4" {
				t.Errorf("driver %s runs %v, want the example's image docker.io/apache/spark:4.0.4", d.Name, d.Spec.Containers)
			}
		})
}

// running reports whether a pod's containers all run.
func running(p corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil || len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil {
			return false
		}
	}
	return true
}

func podSummary(pods []corev1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, fmt.Sprintf("%s %s", p.Name, p.Status.Phase))
	}
	return out
}

func nodeSummary(nodes []wfv1.NodeStatus) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, fmt.Sprintf("%s %s %q", n.DisplayName, n.Phase, n.Message))
	}
	return out
}

func runNames(runs []wfv1.Workflow) []string {
	var out []string
	for _, r := range runs {
		out = append(out, fmt.Sprintf("%s %s", r.Name, r.Status.Phase))
	}
	return out
}
