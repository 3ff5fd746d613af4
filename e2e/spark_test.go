//go:build e2e

package e2e

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

var appIDPattern = regexp.MustCompile(`^spark-[0-9a-f]{32}$`)

// SparkPi, as the README shows it, runs to completion, and its node carries
// the application id as outputs.result and as a named output. On the way
// the executors the simulated driver started reach Argo through the node's
// message: the driver runs until the node shows them, so the check never
// depends on Argo catching a short-lived state. A node first written while
// its executors were still being made ("RUNNING 0/2 executors", on a
// loaded machine) shows them with the next progress step (", 30s"): an
// executor count is progress, which waits out --progress-interval.
func TestSparkPiSucceeds(t *testing.T) {
	parallel(t)
	w := Given(t).
		Workflow("@examples/spark-pi.yaml").
		Simulate(sim.Driver{Forever: true}).
		When().
		SubmitWorkflow().
		WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING 2/2 executors(, [0-9hms]+)?$`)).
		WaitForDrivers(1)
	running, err := env.Drivers(context.Background(), w.Workflow())
	if err != nil || len(running) != 1 {
		t.Fatalf("drivers %v (%v), want one", podNames(running), err)
	}
	finish(t, running[0])
	var driver corev1.Pod
	w.WaitForWorkflow(framework.ToBeSucceeded).
		Then().
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			if len(drivers) != 1 {
				t.Fatalf("%d driver pods, want 1", len(drivers))
			}
			driver = drivers[0]
			if driver.Status.Phase != corev1.PodSucceeded {
				t.Errorf("driver %s is %s, want Succeeded", driver.Name, driver.Status.Phase)
			}
		}).
		ExpectPluginNodes(func(t *testing.T, nodes []wfv1.NodeStatus) {
			if len(nodes) != 1 {
				t.Fatalf("%d plugin nodes, want 1", len(nodes))
			}
			n := nodes[0]
			appID := driver.Labels[spark.LabelAppSelector]
			if !appIDPattern.MatchString(appID) {
				t.Fatalf("driver's application id %q is not spark-<32 hex>", appID)
			}
			if n.Phase != wfv1.NodeSucceeded || !strings.HasPrefix(n.Message, "COMPLETED") {
				t.Errorf("node %s %q, want Succeeded COMPLETED", n.Phase, n.Message)
			}
			if got := result(n); got != appID {
				t.Errorf("outputs.result = %q, want the application id %s", got, appID)
			}
			if got := param(n, "application-id"); got != appID {
				t.Errorf("outputs.parameters.application-id = %q, want %s", got, appID)
			}
			if got := param(n, "driver-pod"); got != driver.Name {
				t.Errorf("outputs.parameters.driver-pod = %q, want %s", got, driver.Name)
			}
			if driver.Annotations[spark.AnnotationNodeID] != n.ID {
				t.Errorf("driver belongs to node %q, want %s", driver.Annotations[spark.AnnotationNodeID], n.ID)
			}
		})
}

func result(n wfv1.NodeStatus) string {
	if n.Outputs == nil || n.Outputs.Result == nil {
		return ""
	}
	return *n.Outputs.Result
}

func param(n wfv1.NodeStatus, name string) string {
	if n.Outputs == nil {
		return ""
	}
	for _, p := range n.Outputs.Parameters {
		if p.Name == name && p.Value != nil {
			return p.Value.String()
		}
	}
	return ""
}

// A driver that exits 1 fails its node, with the exit code and the
// exception from the termination message in the node's message, and fails
// the workflow.
func TestFailedDriverFailsTheWorkflow(t *testing.T) {
	parallel(t)
	const exception = `java.lang.IllegalArgumentException: bad input`
	log := "24/11/21 10:00:00 INFO SparkContext: Running Spark version 3.5.3\n" +
		`Exception in thread "main" ` + exception + "\n" +
		"\tat org.apache.spark.examples.SparkPi$.main(SparkPi.scala:31)\n"
	Given(t).
		Workflow("@examples/spark-pi.yaml").
		Simulate(sim.Fail(2*time.Second, 1, log)).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeFailed).
		Then().
		ExpectWorkflow(func(t *testing.T, _ *metav1.ObjectMeta, status *wfv1.WorkflowStatus) {
			if status.Phase != wfv1.WorkflowFailed || !strings.Contains(status.Message, exception) {
				t.Errorf("workflow %s %q, want Failed with the driver's exception", status.Phase, status.Message)
			}
		}).
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			if n.Phase != wfv1.NodeFailed {
				t.Errorf("node %s, want Failed", n.Phase)
			}
			for _, want := range []string{"FAILED", "driver exited 1", exception} {
				if !strings.Contains(n.Message, want) {
					t.Errorf("node message %q lacks %q", n.Message, want)
				}
			}
			if !appIDPattern.MatchString(result(*n)) {
				t.Errorf("a failed node still reports its application id; outputs.result = %q", result(*n))
			}
		}).
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			if len(drivers) != 1 {
				t.Fatalf("%d drivers, want 1 (restartPolicy Never)", len(drivers))
			}
			if cs := drivers[0].Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 1 {
				t.Errorf("driver container statuses %+v, want one terminated with exit code 1", cs)
			}
		})
}

// The DAG of examples/spark-dag.yaml: pi-a and pi-b run side by side, and
// report starts after both with their application ids as its arguments.
func TestSparkDAGPassesApplicationIDs(t *testing.T) {
	parallel(t)
	nodes := map[string]wfv1.NodeStatus{}
	Given(t).
		Workflow("@examples/spark-dag.yaml").
		Simulate(sim.Succeed(3 * time.Second)).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeSucceeded).
		Then().
		ExpectPluginNodes(func(t *testing.T, plugin []wfv1.NodeStatus) {
			ids := map[string]bool{}
			for _, n := range plugin {
				nodes[n.DisplayName] = n
				if n.Phase != wfv1.NodeSucceeded || !appIDPattern.MatchString(result(n)) {
					t.Errorf("node %s: %s with result %q, want Succeeded with an application id", n.DisplayName, n.Phase, result(n))
				}
				ids[result(n)] = true
			}
			if len(plugin) != 3 || len(ids) != 3 {
				t.Fatalf("%d Spark nodes with %d distinct application ids, want 3 and 3", len(plugin), len(ids))
			}
			a, b, report := nodes["pi-a"], nodes["pi-b"], nodes["report"]
			if !a.StartedAt.Before(&b.FinishedAt) || !b.StartedAt.Before(&a.FinishedAt) {
				t.Errorf("pi-a (%v to %v) and pi-b (%v to %v) did not run side by side", a.StartedAt, a.FinishedAt, b.StartedAt, b.FinishedAt)
			}
			if report.StartedAt.Before(&a.FinishedAt) || report.StartedAt.Before(&b.FinishedAt) {
				t.Errorf("report started at %v, before its dependencies finished", report.StartedAt)
			}
		}).
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			if len(drivers) != 3 {
				t.Fatalf("%d drivers, want 3", len(drivers))
			}
			byNode := map[string]corev1.Pod{}
			for _, d := range drivers {
				byNode[d.Annotations[spark.AnnotationNodeID]] = d
			}
			for name, n := range nodes {
				d, ok := byNode[n.ID]
				if !ok {
					t.Fatalf("no driver belongs to node %s (%s)", name, n.ID)
				}
				if d.Labels[spark.LabelAppSelector] != result(n) {
					t.Errorf("node %s reports %s, its driver is %s", name, result(n), d.Labels[spark.LabelAppSelector])
				}
			}
			// The consumer received both ids: SparkPi's arguments follow
			// the main application file in the driver's args.
			args := byNode[nodes["report"].ID].Spec.Containers[0].Args
			want := []string{"10", result(nodes["pi-a"]), result(nodes["pi-b"])}
			if len(args) < 3 || !slices.Equal(args[len(args)-3:], want) {
				t.Errorf("report's driver args %q, want them to end with %q", args, want)
			}
		})
}

// Two DAG tasks calling one template with the same arguments send Argo's
// agent byte-identical requests; each still gets its own driver and its own
// result.
func TestIdenticalTasksGetTheirOwnDrivers(t *testing.T) {
	parallel(t)
	apps := map[string]bool{}
	Given(t).
		Workflow(identicalTasks).
		Simulate(sim.Succeed(3 * time.Second)).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeSucceeded).
		Then().
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			if len(drivers) != 2 {
				t.Fatalf("%d drivers for two identical tasks, want 2", len(drivers))
			}
			for _, d := range drivers {
				apps[d.Labels[spark.LabelAppSelector]] = true
			}
		}).
		ExpectPluginNodes(func(t *testing.T, nodes []wfv1.NodeStatus) {
			if len(nodes) != 2 {
				t.Fatalf("%d Spark nodes, want 2", len(nodes))
			}
			a, b := nodes[0], nodes[1]
			if a.Phase != wfv1.NodeSucceeded || b.Phase != wfv1.NodeSucceeded {
				t.Errorf("nodes %s and %s, want both Succeeded", a.Phase, b.Phase)
			}
			if result(a) == result(b) || param(a, "driver-pod") == param(b, "driver-pod") {
				t.Errorf("both nodes got application %s from driver %s", result(a), param(a, "driver-pod"))
			}
			for _, n := range nodes {
				if !apps[result(n)] {
					t.Errorf("node %s reports application %q, which is none of the drivers' %v", n.DisplayName, result(n), apps)
				}
			}
		})
}

var identicalTasks = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: spark-twins-
spec:
  entrypoint: main
  templates:
    - name: main
      dag:
        tasks:
          - {name: twin-a, template: pi}
          - {name: twin-b, template: pi}
    - name: pi
      plugin:
        spark:` + sparkBody(10, `arguments: ["1000"]`, driverLine, "executor: {cores: 1, instances: 2, memory: 512m}") + `
`

// A plugin restarted with kill -9 in the middle of a run picks up where it
// was: every node keeps exactly one driver and completes.
func TestPluginRestartMidRun(t *testing.T) {
	parallel(t) // the restart is of this workflow's own sidecar
	Given(t).
		Workflow("@examples/spark-dag.yaml").
		Simulate(sim.Succeed(6*time.Second)).
		When().
		SubmitWorkflow().
		WaitForNode("pi-a", framework.NodeMessage(`^RUNNING`)).
		RestartPlugin().
		WaitForNode("report", framework.NodeMessage(`^(SUBMITTED|RUNNING)`)).
		RestartPlugin().
		WaitForWorkflow(framework.ToBeSucceeded).
		Then().
		ExpectDrivers(oneDriverPerNode(3))
}

// An agent killed mid-run is restarted (as kubelet restarts its container)
// and asks again about every open node: still one driver per node.
func TestAgentRestartMidRun(t *testing.T) {
	parallel(t)
	Given(t).
		Workflow("@examples/spark-dag.yaml").
		Simulate(sim.Succeed(5*time.Second)).
		When().
		SubmitWorkflow().
		WaitForNode("pi-b", framework.NodeMessage(`^RUNNING`)).
		KillAgent().
		WaitForWorkflow(framework.ToBeSucceeded).
		Then().
		ExpectDrivers(oneDriverPerNode(3))
}

// oneDriverPerNode checks that n drivers belong to n different nodes.
func oneDriverPerNode(n int) func(*testing.T, []corev1.Pod) {
	return func(t *testing.T, drivers []corev1.Pod) {
		t.Helper()
		nodes := map[string][]string{}
		for _, d := range drivers {
			id := d.Annotations[spark.AnnotationNodeID]
			nodes[id] = append(nodes[id], d.Name)
		}
		if len(drivers) != n || len(nodes) != n {
			t.Errorf("%d drivers for %d nodes (%v), want one for each of %d", len(drivers), len(nodes), nodes, n)
		}
	}
}

// A plugin template that is not spark is left to other plugins: sparkplug
// answers {} and, with no other plugin installed, Argo fails that node,
// while the Spark step next to it succeeds.
func TestOtherPluginsTemplatesAreLeftAlone(t *testing.T) {
	parallel(t)
	Given(t).
		Workflow(otherPlugin).
		Simulate(sim.Succeed(2*time.Second), "pi").
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeFailed).
		Then().
		ExpectNode("notify", func(t *testing.T, n *wfv1.NodeStatus) {
			// Argo's agent, when no plugin answered with a node.
			const want = "no plugin executed the template"
			if n.Phase != wfv1.NodeFailed || n.Message != want {
				t.Errorf("notify: %s %q, want Failed %q", n.Phase, n.Message, want)
			}
		}).
		ExpectNode("pi", func(t *testing.T, n *wfv1.NodeStatus) {
			if n.Phase != wfv1.NodeSucceeded {
				t.Errorf("pi: %s %q, want Succeeded", n.Phase, n.Message)
			}
		}).
		ExpectDrivers(oneDriverPerNode(1))
}

var otherPlugin = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: spark-and-slack-
spec:
  entrypoint: main
  templates:
    - name: main
      dag:
        tasks:
          - {name: pi, template: pi}
          - {name: notify, template: notify}
    - name: notify
      plugin:
        slack:
          channel: "#data"
          text: SparkPi is running
    - name: pi
      plugin:
        spark:` + sparkPi + driverBody + `
`

// A driver that is evicted fails its node as an infrastructure failure,
// saying so.
func TestEvictedDriver(t *testing.T) {
	parallel(t)
	Given(t).
		Workflow("@examples/spark-pi.yaml").
		Simulate(sim.Driver{Evict: true, Run: 2 * time.Second}).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeFailed).
		Then().
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			if n.Phase != wfv1.NodeFailed || !strings.Contains(n.Message, "evicted") {
				t.Errorf("node %s %q, want Failed saying the driver was evicted", n.Phase, n.Message)
			}
		})
}

// A driver whose image cannot be pulled can never start: its node fails at
// once (not after the pending timeout), saying why, and the driver is
// deleted, a tombstone kept.
func TestDriverThatCannotStartFails(t *testing.T) {
	parallel(t)
	Given(t).
		Workflow("@examples/spark-pi.yaml").
		Simulate(sim.Driver{WaitingReason: "ErrImagePull", Message: "pull access denied for spark, repository does not exist"}).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeFailed).
		// The Service goes with its driver, by the garbage collector, a
		// moment after the pod.
		WaitForSparkObjects("the driver and its Service deleted", func(o framework.SparkObjects) bool {
			return len(o.Drivers)+len(o.Executors)+len(o.Services) == 0
		}, 10*time.Second).
		Then().
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			for _, want := range []string{"ErrImagePull", "pull access denied"} {
				if n.Phase != wfv1.NodeFailed || !strings.Contains(n.Message, want) {
					t.Errorf("node %s %q, want Failed with a message saying %q", n.Phase, n.Message, want)
				}
			}
			if took := n.FinishedAt.Sub(n.StartedAt.Time); took > 20*time.Second {
				t.Errorf("the node failed after %v, want at once", took)
			}
		}).
		ExpectSparkObjects(expectTombstone("CannotStart"))
}

// Terminating a workflow whose Spark step runs marks the node failed (Argo)
// and removes the driver it launched (sparkplug: Argo never tells plugins).
func TestTerminatedWorkflowRemovesItsDriver(t *testing.T) {
	parallel(t)
	Given(t).
		Workflow("@examples/spark-pi.yaml").
		Simulate(sim.Driver{Forever: true}).
		When().
		SubmitWorkflow().
		WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING`)).
		WaitForDrivers(1).
		Terminate().
		WaitForWorkflow(framework.ToBeFailed).
		WaitForDrivers(0)
}
