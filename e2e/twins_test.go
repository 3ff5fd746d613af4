//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/e2e/stages"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// sixTwins is a loop of six byte-identical Spark steps: the agent's
// requests about them cannot be told apart, so only their node ids can.
var sixTwins = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: six-twins-
spec:
  entrypoint: main
  templates:
    - name: main
      steps:
        - - name: twin
            template: twin
            arguments: {parameters: [{name: item, value: "{{item}}"}]}
            withItems: [x, x, x, x, x, x]
    - name: twin
      inputs: {parameters: [{name: item}]}
      plugin:
        spark:` + sparkPi + driverBody + `
          arguments: ["{{inputs.parameters.item}}"]
`

// Six identical loop children whose drivers end 8 s apart, with the agent
// killed every few seconds and the workflow-controller stopped for 20 s
// twice while twins finish: every node Succeeds with an application of
// its own, and a watcher that records every node phase sees no finished
// node reported open again or changed.
func TestIdenticalTwinsUnderAgentKillsAndControllerStops(t *testing.T) {
	// Not parallel: it stops the workflow-controller every test shares.
	w := Given(t).Workflow(sixTwins).Simulate(sim.Driver{Forever: true}).When().
		SubmitWorkflow().
		WaitForDrivers(6, 90*time.Second)
	wf := w.Workflow()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The watcher: every phase every Spark node shows, in order.
	var mu sync.Mutex
	finished := map[string]wfv1.NodeStatus{}
	var flips []string
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		for ctx.Err() == nil {
			got, err := env.Workflows.ArgoprojV1alpha1().Workflows(wf.Namespace).Get(ctx, wf.Name, metav1.GetOptions{})
			if err == nil {
				mu.Lock()
				for id, n := range got.Status.Nodes {
					if n.Type != wfv1.NodeTypePlugin {
						continue
					}
					if first, ok := finished[id]; ok {
						if n.Phase != first.Phase || param(n, "application-id") != param(first, "application-id") {
							flips = append(flips, fmt.Sprintf("%s finished %s %s, later %s %s", n.DisplayName, first.Phase, param(first, "application-id"), n.Phase, param(n, "application-id")))
						}
					} else if n.Fulfilled() {
						finished[id] = *n.DeepCopy()
					}
				}
				mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()

	// The agent is killed every 4 s until the workflow ends.
	killDone := make(chan struct{})
	kills := 0
	go func() {
		defer close(killDone)
		for ctx.Err() == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(4 * time.Second):
			}
			if err := env.Agents.KillAgent(wf.Namespace, agentPod(t, wf)); err != nil {
				t.Logf("kill the agent: %v", err)
				continue
			}
			kills++
		}
	}()

	drivers, err := env.Drivers(ctx, wf)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range drivers {
		if i == 2 || i == 4 {
			// The controller goes for 20 s while this twin finishes.
			if err := env.StopController(); err != nil {
				t.Fatal(err)
			}
			t.Logf("workflow-controller stopped")
			finish(t, d)
			time.Sleep(20 * time.Second)
			if err := env.StartController(ctx); err != nil {
				t.Fatal(err)
			}
			t.Logf("workflow-controller started")
			continue
		}
		finish(t, d)
		time.Sleep(8 * time.Second)
	}
	w.WaitForWorkflow(framework.ToBeSucceeded, 3*time.Minute)
	cancel()
	<-watchDone
	<-killDone
	t.Logf("the agent was killed %d times", kills)
	if kills < 8 {
		t.Errorf("the agent was killed %d times while the twins ran, want at least 8", kills)
	}

	byApp := map[string]string{}
	driverOf := map[string]string{} // application id -> node id the driver was launched for
	for _, d := range drivers {
		driverOf[d.Labels[spark.LabelAppSelector]] = d.Annotations[spark.AnnotationNodeID]
	}
	plugin := 0
	for id, n := range w.Workflow().Status.Nodes {
		if n.Type != wfv1.NodeTypePlugin {
			continue
		}
		plugin++
		app := param(n, "application-id")
		if n.Phase != wfv1.NodeSucceeded {
			t.Errorf("node %s: %s %q, want Succeeded", n.DisplayName, n.Phase, n.Message)
		}
		if other, ok := byApp[app]; ok {
			t.Errorf("nodes %s and %s both report application %s", other, id, app)
		}
		byApp[app] = id
		if driverOf[app] != id {
			t.Errorf("node %s reports application %s, launched for node %q", id, app, driverOf[app])
		}
	}
	if plugin != 6 {
		t.Errorf("%d Spark nodes, want 6", plugin)
	}
	if all, _ := env.Drivers(context.Background(), wf); len(all) != 6 {
		t.Errorf("%d drivers, want 6: one per node, none twice", len(all))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, f := range flips {
		t.Errorf("a finished node changed: %s", f)
	}
}

// finish makes a running simulated driver exit 0 now, as a kubelet would
// report it.
func finish(t *testing.T, d corev1.Pod) {
	t.Helper()
	exitDriver(t, d, 0, "")
	t.Logf("driver %s of node %s finishes", d.Name, d.Annotations[spark.AnnotationNodeID])
}

// exitDriver makes a running simulated driver exit with code now, message
// the end of its log.
func exitDriver(t *testing.T, d corev1.Pod, code int, message string) {
	t.Helper()
	ann := map[string]string{stages.AnnotationExitCode: strconv.Itoa(code), stages.AnnotationRunSeconds: "0"}
	if message != "" {
		ann[stages.AnnotationMessage] = message
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	if _, err := env.Kube.CoreV1().Pods(d.Namespace).Patch(context.Background(), d.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("end driver %s: %v", d.Name, err)
	}
}

// agentPod is the name of the workflow's agent pod.
func agentPod(t *testing.T, wf *wfv1.Workflow) string {
	pods, err := env.Kube.CoreV1().Pods(wf.Namespace).List(context.Background(), metav1.ListOptions{
		LabelSelector: "workflows.argoproj.io/component=agent,workflows.argoproj.io/workflow=" + wf.Name,
	})
	if err != nil || len(pods.Items) != 1 {
		return ""
	}
	return pods.Items[0].Name
}

// `argo retry` of a failed Spark node starts the node again under the
// same id with a new status.startedAt: sparkplug launches a new run for
// it (its incarnation), never reports the old one again, and the node
// shows the new run's result.
func TestArgoRetryLaunchesANewRun(t *testing.T) {
	parallel(t)
	w := Given(t).Workflow(sparkWorkflow("spark-retry-", "", driverBody)).Simulate(sim.Driver{Forever: true}).When().
		SubmitWorkflow().
		WaitForDrivers(1)
	wf := w.Workflow()
	ctx := context.Background()
	first, err := env.Drivers(ctx, wf)
	if err != nil || len(first) != 1 {
		t.Fatalf("drivers %v, %v", first, err)
	}
	old := first[0]
	t.Logf("driver %s, incarnation %q; workflow started %v", old.Name, old.Annotations[spark.AnnotationIncarnation], wf.Status.StartedAt)
	exitDriver(t, old, 1, `Exception in thread "main" java.lang.RuntimeException: boom`)
	w.WaitForWorkflow(framework.ToBeFailed)

	argo := env.ArgoCLI()
	if argo == "" {
		argo = filepath.Join(serversBin(t), "argo")
	}
	out, err := exec.Command(argo, "retry", wf.Name, "-n", wf.Namespace, "--kubeconfig", env.Kubeconfig()).CombinedOutput()
	if err != nil {
		t.Fatalf("argo retry: %v\n%s", err, out)
	}
	retried, err := env.Workflows.ArgoprojV1alpha1().Workflows(wf.Namespace).Get(ctx, wf.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("argo retry %s: %s, started %v\n%s", wf.Name, retried.Status.Phase, retried.Status.StartedAt, out)
	w.WaitForDrivers(2, 60*time.Second)
	all, err := env.Drivers(ctx, wf)
	if err != nil {
		t.Fatal(err)
	}
	var fresh corev1.Pod
	for _, d := range all {
		if d.UID != old.UID {
			fresh = d
		}
	}
	if fresh.Name == "" || fresh.Name == old.Name || fresh.Annotations[spark.AnnotationNodeID] != old.Annotations[spark.AnnotationNodeID] ||
		fresh.Annotations[spark.AnnotationIncarnation] == old.Annotations[spark.AnnotationIncarnation] {
		t.Fatalf("after the retry: drivers %s (incarnation %q) and %s (incarnation %q), want a new one for the same node in a new incarnation",
			old.Name, old.Annotations[spark.AnnotationIncarnation], fresh.Name, fresh.Annotations[spark.AnnotationIncarnation])
	}
	finish(t, fresh)
	w.WaitForWorkflow(framework.ToBeSucceeded, 90*time.Second).
		Then().
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			if n.Phase != wfv1.NodeSucceeded || param(*n, "driver-pod") != fresh.Name || param(*n, "application-id") != fresh.Labels[spark.LabelAppSelector] {
				t.Errorf("retried node %s %q with driver %s, want Succeeded with the new driver %s", n.Phase, n.Message, param(*n, "driver-pod"), fresh.Name)
			}
		})
}

// previousRelease is the commit before node identity by node id: its
// sidecar inferred the asking node and wrote no results itself.
const previousRelease = "060fcb304d0c073e9114046bc941b814c14efd0f"

// previousBinary builds sparkplug at previousRelease, once, into a cache
// outside the clone (as the tools are), from the clone's own history.
func previousBinary(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "sparkplug", "previous", previousRelease[:12])
	bin := filepath.Join(dir, "sparkplug")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	src := t.TempDir()
	tarball := filepath.Join(t.TempDir(), "src.tar")
	if out, err := exec.Command("git", "-C", env.RepoRoot, "archive", "--format=tar", "-o", tarball, previousRelease).CombinedOutput(); err != nil {
		t.Fatalf("git archive %s (the clone needs its history): %v\n%s", previousRelease, err, out)
	}
	if out, err := exec.Command("tar", "-x", "-C", src, "-f", tarball).CombinedOutput(); err != nil {
		t.Fatalf("untar %s: %v\n%s", tarball, err, out)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-trimpath", "-o", bin+".tmp", "./cmd/sparkplug")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build sparkplug at %s: %v\n%s", previousRelease, err, out)
	}
	if err := os.Rename(bin+".tmp", bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// Upgrade: a workflow whose driver the previous release's sidecar
// launched gets, when its agent pod is replaced, this release's sidecar,
// which adopts that driver (no second one) and reports its result. In
// controller mode the upgrade is also the switch to it: the previous
// release's sidecar runs the workflow while no controller runs, then the
// new agent pod has the acknowledger and the controller, started, adopts
// the driver.
func TestUpgradeAdoptsThePreviousReleasesDriver(t *testing.T) {
	parallel(t)
	bin := previousBinary(t)
	// In controller mode the controller, which the test stops, is one of
	// its own, in a namespace of its own.
	ns := env.Namespace
	c := env.SparkplugControllers
	if c != nil {
		c, ns = env.OwnControllers(t, 1)
		if err := c.Stop(0); err != nil {
			t.Fatal(err)
		}
	}
	g := Given(t).Namespace(ns).Workflow(sparkWorkflow("spark-upgrade-", "", driverBody)).Simulate(sim.Driver{Forever: true})
	w := g.When()
	name := fmt.Sprintf("spark-upgrade-%d", time.Now().UnixNano()%100000)
	g.Object()["metadata"].(map[string]any)["name"] = name
	delete(g.Object()["metadata"].(map[string]any), "generateName")
	env.Sidecars.RunPrevious(ns, name, bin)
	defer env.Sidecars.RunPrevious(ns, name, "")
	w.SubmitWorkflow().
		WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING`)).
		WaitForDrivers(1)
	wf := w.Workflow()
	ctx := context.Background()
	drivers, err := env.Drivers(ctx, wf)
	if err != nil || len(drivers) != 1 {
		t.Fatalf("drivers %v, %v", drivers, err)
	}
	old := drivers[0]
	if _, ok := old.Annotations[spark.AnnotationIncarnation]; ok {
		t.Fatalf("driver %s has an incarnation: it was not launched by the previous release", old.Name)
	}

	// The upgrade: the agent pod goes, Argo makes another, which runs this
	// release's sidecar.
	env.Sidecars.RunPrevious(wf.Namespace, wf.Name, "")
	pod := agentPod(t, wf)
	if err := env.Kube.CoreV1().Pods(wf.Namespace).Delete(ctx, pod, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete the agent pod %s: %v", pod, err)
	}
	t.Logf("deleted agent pod %s", pod)
	w.WaitFor("a new agent pod", func() bool {
		p := agentPod(t, wf)
		if p == "" {
			return false
		}
		got, err := env.Kube.CoreV1().Pods(wf.Namespace).Get(ctx, p, metav1.GetOptions{})
		return err == nil && got.DeletionTimestamp == nil && string(got.UID) != "" && got.Status.Phase == corev1.PodRunning
	}, 60*time.Second)
	if c != nil {
		if err := c.Start(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Leader(ctx); err != nil {
			t.Fatal(err)
		}
		t.Log("started sparkplug controller")
	}
	time.Sleep(3 * time.Second) // the new sidecar's (or controller's) first passes
	finish(t, old)
	w.WaitForWorkflow(framework.ToBeSucceeded, 90*time.Second).
		Then().
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			if len(drivers) != 1 || drivers[0].UID != old.UID {
				t.Errorf("drivers %v after the upgrade, want only %s", podSummary(drivers), old.Name)
			}
		}).
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			if param(*n, "driver-pod") != old.Name {
				t.Errorf("node reports driver %s, want the adopted %s", param(*n, "driver-pod"), old.Name)
			}
		})
}
