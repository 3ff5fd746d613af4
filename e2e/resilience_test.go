//go:build e2e

package e2e

// Spark jobs that are never lost, duplicated or stuck: what sparkplug
// promises in the README's "How it behaves" and "What happens when ...",
// proven through the real Argo controller and agent.

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// A driver that exits 1 under restartPolicy OnFailure (one retry) is run
// again inside the same Argo node: a second driver, attempt 2, for the
// same node id; the node shows PENDING_RERUN between the attempts and
// fails after the second with "attempt 2/2".
func TestRestartPolicyOnFailureRerunsInTheSameNode(t *testing.T) {
	parallel(t)
	// onFailureRetryInterval 3 (attempt 2 starts 3 s after attempt 1
	// ended): long enough that a poll (every 2 s while Running) always
	// lands in the wait and reports PENDING_RERUN; with 1 s, half of the
	// runs would go straight from FAILED to attempt 2. Each attempt runs
	// 5 s: attempt 1's first SUBMITTED ... (attempt 1/2), which records
	// its driver, is written at once but may last less than a poll; its
	// RUNNING ... (attempt 1/2) holds for many of the fixture's polls.
	w := Given(t).
		Workflow(sparkWorkflow("spark-onfailure-", "", `
          arguments: ["1000"]
          driver: {cores: 1, memory: 512m, serviceAccount: spark}
          restartPolicy: {type: OnFailure, onFailureRetries: 1, onFailureRetryInterval: 3}`)).
		Simulate(sim.Fail(5*time.Second, 1, "java.lang.IllegalStateException: boom")).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeFailed)
	var node wfv1.NodeStatus
	w.Then().
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			node = *n
			if n.Phase != wfv1.NodeFailed {
				t.Errorf("node %s %q, want Failed", n.Phase, n.Message)
			}
			for _, want := range []string{"FAILED", "driver exited 1", "boom", "attempt 2/2"} {
				if !strings.Contains(n.Message, want) {
					t.Errorf("node message %q lacks %q", n.Message, want)
				}
			}
			if got := param(*n, "attempt"); got != "2" {
				t.Errorf("outputs.parameters.attempt = %q, want 2", got)
			}
		}).
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			if len(drivers) != 2 {
				t.Fatalf("%d drivers, want 2 (attempts 1 and 2): %v", len(drivers), podNames(drivers))
			}
			slices.SortFunc(drivers, func(a, b corev1.Pod) int {
				return strings.Compare(a.Labels[spark.LabelAttempt], b.Labels[spark.LabelAttempt])
			})
			for i, d := range drivers {
				if got, want := d.Labels[spark.LabelAttempt], strconv.Itoa(i+1); got != want {
					t.Errorf("driver %s has attempt %q, want %s", d.Name, got, want)
				}
				if got := d.Annotations[spark.AnnotationNodeID]; got != node.ID {
					t.Errorf("driver %s belongs to node %q, want the one node %s", d.Name, got, node.ID)
				}
				if !exitedWith(d, 1) {
					t.Errorf("driver %s: %+v, want exited 1 (kept for its logs)", d.Name, d.Status.ContainerStatuses)
				}
			}
			if got := param(node, "driver-pod"); got != drivers[1].Name {
				t.Errorf("outputs.parameters.driver-pod = %q, want attempt 2's %s", got, drivers[1].Name)
			}
			if drivers[0].Labels[spark.LabelAppSelector] == drivers[1].Labels[spark.LabelAppSelector] {
				t.Errorf("both attempts have application id %s, want one each", drivers[0].Labels[spark.LabelAppSelector])
			}
		}).
		ExpectHistory(framework.RootNode, func(t *testing.T, states []framework.NodeState) {
			first := slices.IndexFunc(states, func(s framework.NodeState) bool {
				return strings.Contains(s.Message, "(attempt 1/2)")
			})
			rerun := slices.IndexFunc(states, func(s framework.NodeState) bool {
				return s.Phase == wfv1.NodeRunning && strings.HasPrefix(s.Message, "PENDING_RERUN: ") &&
					strings.Contains(s.Message, "attempt 2/2") && strings.Contains(s.Message, "driver exited 1")
			})
			second := slices.IndexFunc(states, func(s framework.NodeState) bool {
				return !strings.HasPrefix(s.Message, "PENDING_RERUN") && strings.Contains(s.Message, "(attempt 2/2)")
			})
			if first < 0 || rerun < 0 || second < 0 || !(first < rerun && rerun < second) {
				t.Errorf("want attempt 1/2, then Running PENDING_RERUN for attempt 2/2, then attempt 2/2 (indexes %d, %d, %d); the node went through %v",
					first, rerun, second, states)
			}
		})
}

// restartPolicy OnFailure never reruns a success: one driver.
func TestRestartPolicyOnFailureNeverRerunsASuccess(t *testing.T) {
	parallel(t)
	Given(t).
		Workflow(sparkWorkflow("spark-onfailure-ok-", "", `
          arguments: ["1000"]
          driver: {cores: 1, memory: 512m, serviceAccount: spark}
          restartPolicy: {type: OnFailure, onFailureRetries: 1, onFailureRetryInterval: 1}`)).
		Simulate(sim.Succeed(2*time.Second)).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeSucceeded).
		// Time for a rerun that must not come.
		Sleep(3*time.Second).
		Then().
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			if n.Phase != wfv1.NodeSucceeded || !strings.HasPrefix(n.Message, "COMPLETED") || !strings.Contains(n.Message, "attempt 1/2") {
				t.Errorf("node %s %q, want Succeeded COMPLETED (attempt 1/2)", n.Phase, n.Message)
			}
			if got := param(*n, "attempt"); got != "1" {
				t.Errorf("outputs.parameters.attempt = %q, want 1", got)
			}
		}).
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			if len(drivers) != 1 || drivers[0].Labels[spark.LabelAttempt] != "1" {
				t.Errorf("drivers %v, want one, attempt 1", podNames(drivers))
			}
		}).
		ExpectHistory(framework.RootNode, func(t *testing.T, states []framework.NodeState) {
			for _, s := range states {
				if strings.Contains(s.Message, "PENDING_RERUN") {
					t.Errorf("a success was scheduled for a rerun: %v", states)
				}
			}
		})
}

// A driver the API server refuses to create (here: its ServiceAccount
// does not exist) fails the node at once with the API server's own words,
// and leaves nothing behind.
func TestSubmissionFailureReportsTheAPIServersMessage(t *testing.T) {
	parallel(t)
	Given(t).
		Workflow(sparkWorkflow("spark-no-sa-", "", `
          arguments: ["1000"]
          driver: {cores: 1, memory: 512m, serviceAccount: does-not-exist}`)).
		Simulate(sim.Succeed(2*time.Second)).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeFailed).
		Then().
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			if n.Phase != wfv1.NodeFailed || !strings.HasPrefix(n.Message, "SUBMISSION_FAILED: ") ||
				!strings.Contains(n.Message, `serviceaccount "does-not-exist" not found`) {
				t.Errorf("node %s %q, want Failed SUBMISSION_FAILED: with the API server's message", n.Phase, n.Message)
			}
		}).
		ExpectSparkObjects(func(t *testing.T, objs framework.SparkObjects) {
			if !objs.Empty() {
				t.Errorf("a refused submission left %s", objs)
			}
		})
}

// The template's timeout bounds the whole Spark run: the node fails
// "timed out after 6s", the driver is deleted at once (its executors,
// Service with it), and a tombstone remembers it.
func TestTemplateTimeoutFailsAndDeletesTheDriver(t *testing.T) {
	parallel(t)
	w := Given(t).
		Workflow(sparkWorkflow("spark-timeout-", `
      timeout: 6s`, `
          arguments: ["1000"]
          driver: {cores: 1, memory: 512m, serviceAccount: spark}`)).
		Simulate(sim.Succeed(120*time.Second)).
		When().
		SubmitWorkflow().
		WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING`)).
		WaitForWorkflow(framework.ToBeFailed, time.Minute)
	w.Then().
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			if n.Phase != wfv1.NodeFailed || !strings.Contains(n.Message, "timed out after 6s") {
				t.Errorf("node %s %q, want Failed \"timed out after 6s\"", n.Phase, n.Message)
			}
			if took := n.FinishedAt.Sub(n.StartedAt.Time); took < 6*time.Second || took > 20*time.Second {
				t.Errorf("the node took %v, want a little over its timeout of 6s", took)
			}
		})
	w.WaitForSparkObjects("the driver, its executors and Service deleted", func(o framework.SparkObjects) bool {
		return len(o.Drivers)+len(o.Executors)+len(o.Services) == 0
	}, 10*time.Second).
		Then().
		ExpectSparkObjects(expectTombstone("Timeout"))
}

// A driver that stays Pending (ContainerCreating, which may resolve by
// itself) longer than sparkplug.pendingTimeout fails its node, and is
// deleted, a tombstone kept. Its 4 s wait is shorter than the writer's
// interim hold (nodestatus.DefaultInterimHold): the node shows the first
// message after the driver's create (it records the driver, and is
// written at once), which may name ContainerCreating or not, and no later
// reason of the wait; its failure names it.
func TestPendingTimeoutFailsAndDeletesTheDriver(t *testing.T) {
	parallel(t)
	w := Given(t).
		Workflow(sparkWorkflow("spark-pending-", "", `
          arguments: ["1000"]
          driver: {cores: 1, memory: 512m, serviceAccount: spark}
          sparkplug: {pendingTimeout: 4s}`)).
		Simulate(sim.Driver{WaitingReason: "ContainerCreating", Message: "waiting for volumes to mount"}).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeFailed, time.Minute)
	w.Then().
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			for _, want := range []string{"did not start within 4s", "ContainerCreating"} {
				if n.Phase != wfv1.NodeFailed || !strings.Contains(n.Message, want) {
					t.Errorf("node %s %q, want Failed saying %q", n.Phase, n.Message, want)
				}
			}
			if took := n.FinishedAt.Sub(n.StartedAt.Time); took < 4*time.Second {
				t.Errorf("the node failed after %v, before its pending timeout of 4s", took)
			}
		})
	// The Service goes with its driver, by the garbage collector, a
	// moment after the pod.
	w.WaitForSparkObjects("the driver and its Service deleted", func(o framework.SparkObjects) bool {
		return len(o.Drivers)+len(o.Executors)+len(o.Services) == 0
	}, 10*time.Second).
		Then().
		ExpectSparkObjects(expectTombstone("PendingTimeout"))
}

// expectTombstone checks that what is left of a run sparkplug stopped is
// one tombstone: the driver's ConfigMap, owned by the Workflow, saying
// which limit stopped it.
func expectTombstone(limit string) func(*testing.T, framework.SparkObjects) {
	return func(t *testing.T, objs framework.SparkObjects) {
		t.Helper()
		if len(objs.ConfigMaps) != 1 || len(objs.Drivers)+len(objs.Executors)+len(objs.Services) != 0 {
			t.Fatalf("left %s, want one tombstone ConfigMap", objs)
		}
		cm := objs.ConfigMaps[0]
		if got := cm.Annotations[spark.AnnotationStopped]; got != limit {
			t.Errorf("tombstone %s says stopped %q, want %q", cm.Name, got, limit)
		}
		if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].Kind != "Workflow" {
			t.Errorf("tombstone %s is owned by %+v, want the Workflow", cm.Name, cm.OwnerReferences)
		}
	}
}

// Deleting a Workflow removes everything launched for it through
// ownerReferences and the garbage collector: a finished driver (which no
// one else deletes), a running one, their ConfigMaps, Services and
// executors.
func TestDeletedWorkflowLeavesNothingBehind(t *testing.T) {
	parallel(t)
	body := `
      plugin:
        spark:` + sparkPi + `
          driver: {cores: 1, memory: 512m, serviceAccount: spark}`
	var before framework.SparkObjects
	Given(t).
		Workflow(`
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: spark-deleted-
spec:
  entrypoint: main
  templates:
    - name: main
      dag:
        tasks:
          - {name: done, template: done}
          - {name: running, template: running}
    - name: done`+body+`
          arguments: ["done"]
    - name: running`+body+`
          arguments: ["running"]
`).
		Simulate(sim.Succeed(time.Second), "done").
		Simulate(sim.Driver{Forever: true}, "running").
		When().
		SubmitWorkflow().
		WaitForNode("done", framework.NodeSucceeded).
		WaitForNode("running", framework.NodeMessage(`^RUNNING 1/1 executor`)).
		Then().
		ExpectSparkObjects(func(t *testing.T, objs framework.SparkObjects) {
			before = objs
			if len(objs.Drivers) != 2 || len(objs.Executors) != 1 || len(objs.ConfigMaps) != 2 || len(objs.Services) != 2 {
				t.Fatalf("before the deletion: %s; want 2 drivers, the running one's executor, 2 ConfigMaps, 2 Services", objs)
			}
		}).
		When().
		DeleteWorkflow().
		WaitForSparkObjects("everything of the deleted workflow collected", framework.SparkObjects.Empty, time.Minute)
	t.Logf("collected: %s", before)
}

// timeToLiveSeconds deletes a finished driver (with its executors,
// ConfigMap and Service) that long after Argo recorded its result; a
// driver without it is kept. The driver with the ttl belongs to a step
// that ends while the workflow still runs: sparkplug runs as a sidecar of
// the workflow's agent pod, which Argo deletes when the workflow ends.
func TestTimeToLiveDeletesTheFinishedDriver(t *testing.T) {
	parallel(t)
	body := `
      plugin:
        spark:` + sparkPi + `
          driver: {cores: 1, memory: 512m, serviceAccount: spark}`
	var short, long corev1.Pod
	w := Given(t).
		Workflow(`
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: spark-ttl-
spec:
  entrypoint: main
  templates:
    - name: main
      dag:
        tasks:
          - {name: short, template: short}
          - {name: long, template: long}
    - name: short`+body+`
          arguments: ["short"]
          timeToLiveSeconds: 2
    - name: long`+body+`
          arguments: ["long"]
`).
		Simulate(sim.Succeed(time.Second), "short").
		Simulate(sim.Succeed(15*time.Second), "long").
		When().
		SubmitWorkflow().
		WaitForDrivers(2)
	w.Then().
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			for _, d := range drivers {
				switch d.Annotations[spark.AnnotationTTLSeconds] {
				case "2":
					short = d
				case "":
					long = d
				}
			}
			if len(drivers) != 2 || short.Name == "" || long.Name == "" {
				t.Fatalf("drivers %v, want one with a ttl of 2 s and one without", podNames(drivers))
			}
		})
	var finished time.Time
	w.WaitForSparkObjects("the driver with a ttl to finish", func(o framework.SparkObjects) bool {
		i := slices.IndexFunc(o.Drivers, named(short.Name))
		if i < 0 {
			t.Fatalf("driver %s was deleted before it was seen finished", short.Name)
		}
		for _, cs := range o.Drivers[i].Status.ContainerStatuses {
			if cs.Name == spark.DriverContainerName && cs.State.Terminated != nil {
				finished = cs.State.Terminated.FinishedAt.Time
			}
		}
		return !finished.IsZero()
	}).
		WaitForSparkObjects("the finished driver with a ttl deleted, with its ConfigMap and Service", func(o framework.SparkObjects) bool {
			return !slices.ContainsFunc(o.Drivers, named(short.Name)) &&
				!slices.ContainsFunc(o.ConfigMaps, func(c corev1.ConfigMap) bool { return framework.OwnedBy(c.OwnerReferences, string(short.UID)) }) &&
				!slices.ContainsFunc(o.Services, func(s corev1.Service) bool { return framework.OwnedBy(s.OwnerReferences, string(short.UID)) })
		}, 20*time.Second)
	// finished has a resolution of a second (RFC 3339 in the pod status):
	// a driver deleted when it finished would show at most about 1 s.
	if lived := time.Since(finished); lived < 1500*time.Millisecond {
		t.Errorf("driver %s was deleted %v after it finished, before its timeToLiveSeconds of 2", short.Name, lived)
	}
	// Deleted while the workflow still runs (long runs 15 s).
	if phase := w.Observe().Workflow().Status.Phase; phase.Completed() {
		t.Errorf("the driver with a ttl was deleted only once the workflow had ended (%s)", phase)
	}
	w.WaitForNode("short", framework.NodeSucceeded).
		WaitForWorkflow(framework.ToBeSucceeded).
		// Several ttl checks later, the driver without a ttl is still there.
		Sleep(3 * framework.PluginTTLInterval).
		Then().
		ExpectSparkObjects(func(t *testing.T, objs framework.SparkObjects) {
			if len(objs.Drivers) != 1 || objs.Drivers[0].Name != long.Name || objs.Drivers[0].Status.Phase != corev1.PodSucceeded {
				t.Errorf("drivers left %v, want only %s, Succeeded", podNames(objs.Drivers), long.Name)
			}
			if len(objs.ConfigMaps) != 1 || len(objs.Services) != 1 {
				t.Errorf("left %s, want the kept driver's ConfigMap and Service", objs)
			}
		})
}
