//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
)

// Controller mode's handover proofs: sparkplug controller's replicas
// (framework.SparkplugControllers) killed, stopped and started while
// Spark steps run. Each test has the Deployment's two replicas of its own,
// in a namespace of its own (Env.OwnControllers), so they run in parallel
// with the rest.

// controllers skips t outside controller mode, and otherwise runs t in
// parallel with two replicas of its own; it returns them and the
// namespace whose Spark steps they run.
func controllers(t *testing.T) (*framework.SparkplugControllers, string) {
	t.Helper()
	if env.Mode() != framework.ModeController {
		t.Skipf("about sparkplug controller's replicas, which only run in controller mode (SPARKPLUG_E2E_MODE=controller); this run is in %s mode", env.Mode())
	}
	parallel(t)
	return env.OwnControllers(t, 2)
}

// leader is the replica leading now, the test failing when none does.
func leader(t *testing.T, c *framework.SparkplugControllers) int {
	t.Helper()
	i, err := c.Leader(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// sparkNodes counts a workflow's Spark nodes by phase.
func sparkNodes(wf *wfv1.Workflow) map[wfv1.NodePhase]int {
	out := map[wfv1.NodePhase]int{}
	for _, n := range wf.Status.Nodes {
		if n.Type == wfv1.NodeTypePlugin {
			out[n.Phase]++
		}
	}
	return out
}

// atLeastDrivers is a WaitFor condition: the workflow has n driver pods
// or more.
func atLeastDrivers(t *testing.T, w *framework.When, n int) func() bool {
	return func() bool {
		wf, err := env.Workflows.ArgoprojV1alpha1().Workflows(w.Workflow().Namespace).Get(context.Background(), w.Workflow().Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		drivers, err := env.Drivers(context.Background(), wf)
		if err != nil {
			t.Fatal(err)
		}
		return len(drivers) >= n
	}
}

// The leading controller killed with SIGKILL while six Spark steps launch
// and run: its Lease stays held until it runs out, and meanwhile no
// controller leads, so nothing happens to the steps: no driver is
// created, no node is reported (the drivers end meanwhile, their nodes
// wait). Then the other replica takes over from what the cluster holds:
// every node Succeeds with one driver of its own, none twice.
func TestKilledControllerLosesAndDuplicatesNothing(t *testing.T) {
	c, ns := controllers(t)
	killed := leader(t, c)
	w := Given(t).Namespace(ns).Workflow(sixTwins).Simulate(sim.Succeed(8 * time.Second)).When().
		SubmitWorkflow()
	w.WaitFor("3 drivers", atLeastDrivers(t, w, 3), 90*time.Second)
	if err := c.Kill(killed); err != nil {
		t.Fatal(err)
	}
	t.Logf("killed the leading replica %d (kill -9)", killed)
	ctx := context.Background()
	var before map[wfv1.NodePhase]int
	var drivers int
	leaderless := time.Now()
	for {
		// The workflow first, then the leaders: when none leads after the
		// read, none led at it.
		wf, err := env.Workflows.ArgoprojV1alpha1().Workflows(w.Workflow().Namespace).Get(ctx, w.Workflow().Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pods, err := env.Drivers(ctx, wf)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Leading(ctx)) > 0 {
			break
		}
		phases := sparkNodes(wf)
		if before == nil {
			before, drivers = phases, len(pods)
		}
		if phases[wfv1.NodeSucceeded] > before[wfv1.NodeSucceeded] || len(pods) != drivers {
			t.Fatalf("with no controller leading, Spark nodes went from %v to %v and drivers from %d to %d", before, phases, drivers, len(pods))
		}
		if time.Since(leaderless) > 60*time.Second {
			t.Fatalf("no replica took over within 60s of the leader's kill")
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("no controller led for %v: Spark nodes stayed %v, drivers %d", time.Since(leaderless).Round(100*time.Millisecond), before, drivers)
	if now := leader(t, c); now == killed {
		t.Fatalf("the killed replica %d leads again", killed)
	}
	sixSucceededOneDriverEach(w)
}

// The leader stopped with SIGTERM (a rollout, a drained node) while six
// Spark steps launch: it releases the Lease, so the other replica takes
// over at once, not after the Lease's 15 s, and goes on from what the
// cluster holds: every node Succeeds with one driver of its own.
func TestLeaderHandoverLosesAndDuplicatesNothing(t *testing.T) {
	c, ns := controllers(t)
	old := leader(t, c)
	w := Given(t).Namespace(ns).Workflow(sixTwins).Simulate(sim.Succeed(6 * time.Second)).When().
		SubmitWorkflow()
	w.WaitFor("a driver", atLeastDrivers(t, w, 1), 90*time.Second)
	stopped := time.Now()
	if err := c.Stop(old); err != nil {
		t.Fatal(err)
	}
	now := leader(t, c)
	took := time.Since(stopped)
	t.Logf("replica %d stopped (SIGTERM); replica %d leads after %v", old, now, took.Round(100*time.Millisecond))
	if now == old {
		t.Fatalf("the stopped replica %d leads", old)
	}
	// The Lease's duration is 15 s: a takeover sooner shows it was
	// released, not run out.
	if took > 10*time.Second {
		t.Errorf("the takeover took %v: the stopped leader did not release its Lease", took)
	}
	sixSucceededOneDriverEach(w)
}

// Steps submitted while no controller runs at all wait: no driver, no
// result, the acknowledger only answers the agent. Once a replica starts,
// they run, one driver each.
func TestStepsWaitForAController(t *testing.T) {
	c, ns := controllers(t)
	for i := range c.Replicas() {
		if err := c.Stop(i); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("stopped all %d replicas", c.Replicas())
	w := Given(t).Namespace(ns).Workflow("@examples/spark-dag.yaml").Simulate(sim.Succeed(2 * time.Second)).When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeRunning).
		Sleep(10 * time.Second)
	wf, err := env.Workflows.ArgoprojV1alpha1().Workflows(w.Workflow().Namespace).Get(context.Background(), w.Workflow().Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	drivers, err := env.Drivers(context.Background(), wf)
	if err != nil {
		t.Fatal(err)
	}
	if len(drivers) != 0 || wf.Status.Phase != wfv1.WorkflowRunning || sparkNodes(wf)[wfv1.NodeSucceeded] != 0 {
		t.Fatalf("with no controller, after 10 s: workflow %s, Spark nodes %v, %d drivers; want Running, none done, none", wf.Status.Phase, sparkNodes(wf), len(drivers))
	}
	if err := c.Start(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	t.Logf("started replica 0, which leads: %d", leader(t, c))
	w.WaitForWorkflow(framework.ToBeSucceeded, 2*time.Minute).
		Then().
		ExpectDrivers(oneDriverPerNode(3))
}

// sixSucceededOneDriverEach waits for w, six Spark steps, to succeed, and
// checks each of its six nodes has one driver of its own.
func sixSucceededOneDriverEach(w *framework.When) {
	w.WaitForWorkflow(framework.ToBeSucceeded, 2*time.Minute).
		Then().
		ExpectPluginNodes(func(t *testing.T, nodes []wfv1.NodeStatus) {
			if len(nodes) != 6 {
				t.Errorf("%d Spark nodes, want 6", len(nodes))
			}
		}).
		ExpectDrivers(oneDriverPerNode(6))
}
