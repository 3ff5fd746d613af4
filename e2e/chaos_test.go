//go:build e2e

package e2e

// Spark jobs that are never lost, duplicated or stuck: what sparkplug
// promises in the README's "How it behaves" and "What happens when ...",
// proven through the real Argo controller and agent.

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
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

// chaosWorkflow repeats itself on purpose: the loop's items a produce
// three identical spark steps and twin-a and twin-b two more, all running
// side by side; after starts once the twins are done, so that submissions
// happen late in the run too. The loop's children are the Spark steps
// themselves, whose results Argo decodes as JSON (see
// TestSparkStepsInLoops).
var chaosWorkflow = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: spark-chaos-
spec:
  entrypoint: main
  templates:
    - name: main
      dag:
        tasks:
          - name: loop
            template: spark-item
            arguments: {parameters: [{name: item, value: "{{item}}"}]}
            withItems: [a, a, b, a]
          - {name: twin-a, template: twin}
          - {name: twin-b, template: twin}
          - name: after
            template: spark-item
            arguments: {parameters: [{name: item, value: c}]}
            depends: twin-a && twin-b
    - name: spark-item
      inputs: {parameters: [{name: item}]}
      plugin:
        spark:` + sparkPi + `
          driver: {cores: 1, memory: 512m, serviceAccount: spark}
          arguments: ["{{inputs.parameters.item}}"]
    - name: twin
      plugin:
        spark:` + sparkPi + `
          driver: {cores: 1, memory: 512m, serviceAccount: spark}
          arguments: ["1000"]
`

// The plugin sidecar of the workflow's agent pod is killed at least
// chaosRestarts times while the workflow runs, and more (up to
// chaosRestartsAtMost) until the workflow's second stage (after) has
// started, so that kills hit both stages' submissions.
const (
	chaosRestarts       = 20
	chaosRestartsAtMost = 40
)

// The plugin sidecar killed with SIGKILL at random moments, over and
// over, and started again as kubelet does, while a workflow full of
// identical Spark steps is submitted, runs and completes, and its agent
// killed once among them: every node still succeeds with exactly one
// driver of its own, every result reaches exactly one node, and nothing is
// left without an owner. SPARKPLUG_E2E_SEED replays the same sequence of
// gaps.
func TestPluginKilledAgainAndAgain(t *testing.T) {
	parallel(t) // each workflow has a sidecar of its own
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	// The agent is killed at the first kill from this one on at which a
	// Spark node runs (so there is an agent) and the workflow has not
	// ended. (Waiting for one node, twin-a, could miss it: it runs for a
	// few seconds only.)
	agentKill := 2 + rng.Intn(4)
	agentKilled := false

	// The twins' drivers run until the first half of the kills is done
	// (and the agent's), so that the workflow cannot end before them on a
	// fast or a loaded machine; then they end, and after's submission
	// meets the rest.
	w := Given(t).
		Workflow(chaosWorkflow).
		Simulate(sim.Succeed(4*time.Second), "spark-item").
		Simulate(sim.Driver{Forever: true}, "twin").
		When().
		SubmitWorkflow()
	twinsHeld := true
	releaseTwins := func() {
		w.WaitFor("the two twins' drivers", func() bool { return len(heldDrivers(t, w.Workflow())) >= 2 }, time.Minute)
		for _, d := range heldDrivers(t, w.Workflow()) {
			finish(t, d)
		}
		twinsHeld = false
	}
	start := time.Now()
	afterStarted := func() bool {
		for _, n := range w.Workflow().Status.Nodes {
			if n.DisplayName == "after" && n.Phase != wfv1.NodePending {
				return true
			}
		}
		return false
	}
	restarts := 0
	for !w.Observe().Workflow().Status.Phase.Completed() &&
		(restarts < chaosRestarts || (restarts < chaosRestartsAtMost && !afterStarted())) {
		gap := time.Duration(100+rng.Intn(1400)) * time.Millisecond
		time.Sleep(gap)
		if restarts >= agentKill && !agentKilled && pluginNodeOpen(w.Workflow()) {
			agentKilled = w.TryKillAgent()
		}
		if !w.KillPlugin() {
			continue // no agent pod yet, or no more
		}
		restarts++
		t.Logf("kill %d after a gap of %v, at %v; workflow %s", restarts, gap, time.Since(start).Round(100*time.Millisecond), w.Workflow().Status.Phase)
		if twinsHeld && agentKilled && restarts >= chaosRestarts/2 {
			releaseTwins()
		}
	}
	if twinsHeld {
		releaseTwins()
	}
	if restarts < chaosRestarts/2 {
		t.Errorf("the sidecar was killed %d times while the workflow ran, want at least %d", restarts, chaosRestarts/2)
	}
	if !agentKilled {
		t.Errorf("the agent was never killed: no Spark node was seen open between restarts %d and %d", agentKill, restarts)
	}
	// Each node's result is written under its own id by whichever
	// sidecar runs, so no kill loses or moves one.
	w.WaitForWorkflow(framework.ToBeSucceeded, 90*time.Second)
	t.Logf("%d sidecar kills and an agent kill; the workflow took %v", restarts, time.Since(start).Round(100*time.Millisecond))

	wf := w.Workflow()
	plugin := map[string]wfv1.NodeStatus{}
	for id, n := range wf.Status.Nodes {
		if n.Phase != wfv1.NodeSucceeded {
			t.Errorf("node %s (%s): %s %q, want Succeeded", n.DisplayName, id, n.Phase, n.Message)
		}
		if n.Type == wfv1.NodeTypePlugin {
			plugin[id] = n
		}
	}
	if len(plugin) != 7 {
		t.Errorf("%d Spark nodes, want 7 (4 items, 2 twins, after)", len(plugin))
	}
	w.Then().ExpectSparkObjects(func(t *testing.T, objs framework.SparkObjects) {
		byNode := map[string][]corev1.Pod{}
		apps := map[string]corev1.Pod{}
		drivers := map[string]corev1.Pod{} // by uid
		for _, d := range objs.Drivers {
			id := d.Annotations[spark.AnnotationNodeID]
			byNode[id] = append(byNode[id], d)
			apps[d.Labels[spark.LabelAppSelector]] = d
			drivers[string(d.UID)] = d
			if _, ok := plugin[id]; !ok {
				t.Errorf("driver %s belongs to %q, which is no Spark node of the workflow", d.Name, id)
			}
			if d.Labels[spark.LabelAttempt] != "1" {
				t.Errorf("driver %s is attempt %q, want 1", d.Name, d.Labels[spark.LabelAttempt])
			}
			if d.Status.Phase != corev1.PodSucceeded {
				t.Errorf("driver %s is %s, want Succeeded", d.Name, d.Status.Phase)
			}
		}
		results := map[string]string{}
		for id, n := range plugin {
			if len(byNode[id]) != 1 {
				t.Errorf("node %s (%s) has drivers %v, want exactly one", n.DisplayName, id, podNames(byNode[id]))
			}
			app := param(n, "application-id")
			if _, ok := apps[app]; !ok {
				t.Errorf("node %s reports application %q, which no driver of the workflow has", n.DisplayName, app)
			}
			if other, dup := results[app]; dup {
				t.Errorf("nodes %s and %s both report application %s", other, n.DisplayName, app)
			}
			results[app] = n.DisplayName
			// A loop's child reports its id as a JSON string.
			want := app
			if strings.HasPrefix(n.DisplayName, "loop(") {
				want = strconv.Quote(app)
			}
			if result(n) != want {
				t.Errorf("node %s: outputs.result %q, want %q", n.DisplayName, result(n), want)
			}
		}
		// Nothing orphaned: every ConfigMap, Service and executor belongs
		// to a driver that exists (a tombstone, which carries
		// sparkplug.io/stopped, to the Workflow).
		for _, c := range objs.ConfigMaps {
			if c.Annotations[spark.AnnotationStopped] != "" {
				if !framework.OwnedBy(c.OwnerReferences, string(wf.UID)) {
					t.Errorf("tombstone %s is not owned by the workflow: %+v", c.Name, c.OwnerReferences)
				}
				continue
			}
			if ownerDriver(c.OwnerReferences, drivers) == "" {
				t.Errorf("configmap %s is owned by no driver of the workflow: %+v", c.Name, c.OwnerReferences)
			}
		}
		for _, s := range objs.Services {
			if ownerDriver(s.OwnerReferences, drivers) == "" {
				t.Errorf("service %s is owned by no driver of the workflow: %+v", s.Name, s.OwnerReferences)
			}
		}
		for _, e := range objs.Executors {
			if ownerDriver(e.OwnerReferences, drivers) == "" {
				t.Errorf("executor %s is owned by no driver of the workflow: %+v", e.Name, e.OwnerReferences)
			}
		}
		t.Logf("%d Spark nodes, %d drivers, %d ConfigMaps, %d Services, %d executors left", len(plugin), len(objs.Drivers), len(objs.ConfigMaps), len(objs.Services), len(objs.Executors))
	})
}

// pluginNodeOpen reports whether the workflow runs and one of its Spark
// nodes is open (Pending or Running): the agent lists it, and asks about
// it again when it restarts. (Running alone, as the Workflow shows it,
// may be missed between two looks at a busy control plane: a node whose
// Running result the controller applies late goes from Pending to its
// end between them.)
func pluginNodeOpen(wf *wfv1.Workflow) bool {
	if wf.Status.Phase.Completed() {
		return false
	}
	for _, n := range wf.Status.Nodes {
		if n.Type == wfv1.NodeTypePlugin && !n.Fulfilled() {
			return true
		}
	}
	return false
}

// ownerDriver returns the name of the driver among drivers (by uid) that
// refs name, or "".
func ownerDriver(refs []metav1.OwnerReference, drivers map[string]corev1.Pod) string {
	for _, r := range refs {
		if d, ok := drivers[string(r.UID)]; ok {
			return d.Name
		}
	}
	return ""
}

func podNames(pods []corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = fmt.Sprintf("%s(%s, attempt %s)", p.Name, p.Status.Phase, p.Labels[spark.LabelAttempt])
	}
	return out
}

func named(name string) func(corev1.Pod) bool {
	return func(p corev1.Pod) bool { return p.Name == name }
}

func exitedWith(p corev1.Pod, code int32) bool {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == spark.DriverContainerName && cs.State.Terminated != nil {
			return cs.State.Terminated.ExitCode == code
		}
	}
	return false
}

// testSeed is SPARKPLUG_E2E_SEED, or a new seed; it logs it, so that a
// failed run can be replayed.
func testSeed(t *testing.T) int64 {
	t.Helper()
	seed := time.Now().UnixNano()
	if s := os.Getenv("SPARKPLUG_E2E_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseInt(s, 10, 64); err != nil {
			t.Fatalf("SPARKPLUG_E2E_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (SPARKPLUG_E2E_SEED=%d replays it)", seed, seed)
	return seed
}
