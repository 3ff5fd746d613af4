//go:build e2e

package e2e

// The API server slow, failing, overloaded, unreachable and forgetful
// under the plugin, while the plugin, the agent, the workflow-controller
// and the kube-apiserver are killed or restarted: no job is lost,
// duplicated or stuck, and every node ends as its driver did. In
// controller mode the plugin under the faults is sparkplug controller,
// whose leader is killed once too (the sidecar killed is the
// acknowledger).

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/e2e/faults"
	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/e2e/stages"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// faultWorkflow has the chaos workflow's identical steps (a loop with a
// repeated item, twins), a step whose driver fails, and a second stage,
// so that faults hit submissions, result writes and failures. Its agent pod
// carries framework.FaultsLabel: its sidecar reaches the API server
// through the fault proxy.
var faultWorkflow = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: spark-faults-
spec:
  entrypoint: main
  podMetadata:
    labels: {` + framework.FaultsLabel + `: "true"}
  templates:
    - name: main
      dag:
        tasks:
          - name: loop
            template: spark-item
            arguments: {parameters: [{name: item, value: "{{item}}"}]}
            withItems: [a, a, b]
          - {name: twin-a, template: twin}
          - {name: twin-b, template: twin}
          - {name: fails, template: fails}
          - name: after
            template: spark-item
            arguments: {parameters: [{name: item, value: c}]}
            depends: twin-a && twin-b
    - name: spark-item
      inputs: {parameters: [{name: item}]}
      plugin:
        spark:` + sparkPi + driverBody + `
          arguments: ["{{inputs.parameters.item}}"]
    - name: twin
      plugin:
        spark:` + sparkPi + driverBody + `
          arguments: ["1000"]
    - name: fails
      plugin:
        spark:` + sparkPi + driverBody + `
          arguments: ["fail"]
`

// faultOptions are the faults the proxy injects into the sidecar's
// requests: most pass; of the rest some are slow, refused, reset or never
// answered, almost a third of the writes happen but their answer is lost,
// and most watches are cut after a few seconds.
func faultOptions(upstream string, seed int64, log *slog.Logger) faults.Options {
	return faults.Options{
		Upstream: upstream, Seed: seed, Enabled: true, Log: log,
		Latency: 0.06, LatencyMin: time.Second, LatencyMax: 4 * time.Second,
		ServerError:  0.05,
		TooMany:      0.05,
		Reset:        0.04,
		LostResponse: 0.30, // of the writes only
		Timeout:      0.01, TimeoutMax: 20 * time.Second,
		WatchCut: 0.5, WatchCutMin: 2 * time.Second, WatchCutMax: 8 * time.Second,
	}
}

// disruption is one thing done to the environment during the run.
type disruption string

const (
	killSidecar       disruption = "kill the plugin sidecar"
	killAgent         disruption = "kill the agent"
	restartController disruption = "restart the workflow-controller"
	restartAPIServer  disruption = "restart the kube-apiserver"
	// killSparkplug (controller mode only) kills the leading sparkplug
	// controller with SIGKILL and starts it again at once: no controller
	// leads until its Lease runs out.
	killSparkplug   disruption = "kill the leading sparkplug controller"
	faultRunTimeout            = 5 * time.Minute
	// faultDisruptionGap spaces the disruptions 3 to 9 s apart: a sidecar
	// killed more often than Argo's agent retries a call (5 tries in about
	// 15 s) fails the node it was asked about, whatever the plugin does.
	faultDisruptionGap = 6 * time.Second
)

func TestAPIFaultsNeverLoseOrDuplicateAJob(t *testing.T) {
	// Not parallel: it restarts the kube-apiserver and the
	// workflow-controller, which every test shares (Go runs the tests
	// that are not parallel alone, before the parallel ones).
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	logFile, err := os.Create(filepath.Join(env.LogDir(), "faults.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	proxy, err := faults.Start(faultOptions(env.Cluster.Config.Host, seed, slog.New(slog.NewTextHandler(logFile, nil))))
	if err != nil {
		t.Fatal(err)
	}
	env.Sidecars.SetFaultProxy(proxy.URL())
	// In controller mode sparkplug's API calls are the controller's, not
	// the acknowledger's (which makes none): its replicas go through the
	// proxy instead.
	if c := env.SparkplugControllers; c != nil {
		if err := c.SetFaultProxy(context.Background(), proxy.URL()); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		env.Sidecars.SetFaultProxy("")
		if c := env.SparkplugControllers; c != nil {
			if err := c.SetFaultProxy(context.Background(), ""); err != nil {
				t.Error(err)
			}
		}
		_ = proxy.Close()
	})

	// The twins' drivers run until every disruption has been done, so
	// that all of them hit a running workflow however long each took;
	// then they end and the second stage runs under the faults and more
	// sidecar kills.
	w := Given(t).
		Workflow(faultWorkflow).
		Simulate(sim.Succeed(20*time.Second), "spark-item").
		Simulate(sim.Driver{Forever: true}, "twin").
		Simulate(sim.Fail(10*time.Second, 1, "java.lang.IllegalStateException: boom"), "fails").
		When().
		SubmitWorkflow()
	// The one-off disruptions and two sidecar kills, in a random order; one
	// that cannot be done at its turn (no agent or sidecar yet) is tried
	// again at the next.
	plan := []disruption{killSidecar, killSidecar, killAgent, restartController, restartAPIServer}
	if env.SparkplugControllers != nil {
		plan = append(plan, killSparkplug)
	}
	want := slices.Clone(plan)
	rng.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })
	done := map[disruption]int{}
	start := time.Now()
	ctx := context.Background()
	disrupt := func(d disruption) bool {
		switch d {
		case killSidecar:
			return w.KillPlugin()
		case killAgent:
			return pluginNodeOpen(w.Workflow()) && w.TryKillAgent()
		case restartController:
			if err := env.RestartController(ctx); err != nil {
				t.Fatal(err)
			}
		case restartAPIServer:
			if err := env.Cluster.RestartAPIServer(ctx); err != nil {
				t.Fatal(err)
			}
		case killSparkplug:
			c := env.SparkplugControllers
			i, err := c.Leader(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Kill(i); err != nil {
				t.Fatal(err)
			}
			if err := c.Start(ctx, i); err != nil {
				t.Fatal(err)
			}
		}
		return true
	}
	pause := func() {
		time.Sleep(faultDisruptionGap/2 + time.Duration(rng.Int63n(int64(faultDisruptionGap))))
	}
	for len(plan) > 0 && time.Since(start) < faultRunTimeout {
		pause()
		if phase := w.Observe().Workflow().Status.Phase; phase.Completed() {
			t.Fatalf("workflow %s while its twins' drivers were still to run, with %v left to do", phase, plan)
		}
		if d := plan[0]; disrupt(d) {
			plan = plan[1:]
			done[d]++
			t.Logf("%v: %s", time.Since(start).Round(100*time.Millisecond), d)
		}
	}
	w.WaitFor("the two twins' drivers", func() bool { return len(heldDrivers(t, w.Workflow())) >= 2 }, time.Minute)
	for _, d := range heldDrivers(t, w.Workflow()) {
		finish(t, d)
	}
	for time.Since(start) < faultRunTimeout {
		pause()
		if w.Observe().Workflow().Status.Phase.Completed() {
			break
		}
		if disrupt(killSidecar) {
			done[killSidecar]++
			t.Logf("%v: %s", time.Since(start).Round(100*time.Millisecond), killSidecar)
		}
	}
	w.WaitForWorkflow(framework.ToBeFailed, faultRunTimeout)
	counts := proxy.Counts()
	t.Logf("seed %d; %s; the workflow took %v", seed, describeFaults(counts, done), time.Since(start).Round(time.Second))

	for _, d := range want {
		if done[d] == 0 {
			t.Errorf("never did %q while the workflow ran", d)
		}
	}
	injected := 0
	for k, n := range counts {
		if k != faults.Requests && k != faults.Latency {
			injected += n
		}
	}
	if injected < 10 || counts[faults.LostResponse] == 0 {
		t.Errorf("faults injected: %v; want at least 10 failed requests, lost responses among them", counts)
	}

	wf := w.Workflow()
	sparkNodes := map[string]wfv1.NodeStatus{}
	for id, n := range wf.Status.Nodes {
		if n.Type != wfv1.NodeTypePlugin {
			continue
		}
		sparkNodes[id] = n
		want := wfv1.NodeSucceeded
		if n.DisplayName == "fails" {
			want = wfv1.NodeFailed
			if !strings.HasPrefix(n.Message, "FAILED: driver exited 1") {
				t.Errorf("node fails: message %q, want the driver's exit", n.Message)
			}
		}
		if n.Phase != want {
			t.Errorf("node %s: %s %q, want %s", n.DisplayName, n.Phase, n.Message, want)
		}
	}
	if len(sparkNodes) != 7 {
		t.Errorf("%d Spark nodes ended, want 7 (3 items, 2 twins, fails, after): none lost", len(sparkNodes))
	}
	// Identical nodes are interchangeable: a node may report the run of
	// its twin, but every node has a driver launched for it, and every
	// run's result reaches exactly one node.
	w.Then().ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
		byNode := map[string][]string{}
		apps := map[string]bool{}
		for _, d := range drivers {
			id := d.Annotations[spark.AnnotationNodeID]
			byNode[id] = append(byNode[id], d.Name)
			apps[d.Labels[spark.LabelAppSelector]] = true
		}
		reported := map[string]string{}
		for id, n := range sparkNodes {
			if len(byNode[id]) != 1 {
				t.Errorf("node %s has drivers %v, want exactly one", n.DisplayName, byNode[id])
			}
			app := param(n, "application-id")
			if !apps[app] {
				t.Errorf("node %s reports application %q, which no driver of the workflow has", n.DisplayName, app)
			}
			if other, dup := reported[app]; dup {
				t.Errorf("nodes %s and %s both report application %s", other, n.DisplayName, app)
			}
			reported[app] = n.DisplayName
		}
		if len(drivers) != len(sparkNodes) {
			t.Errorf("%d drivers for %d Spark nodes, want one each", len(drivers), len(sparkNodes))
		}
	})
}

// heldDrivers are wf's drivers that run until the test ends them
// (simulated with no run time), not yet ended.
func heldDrivers(t *testing.T, wf *wfv1.Workflow) []corev1.Pod {
	t.Helper()
	drivers, err := env.Drivers(context.Background(), wf)
	if err != nil {
		t.Fatal(err)
	}
	var held []corev1.Pod
	for _, d := range drivers {
		if _, timed := d.Annotations[stages.AnnotationRunSeconds]; !timed {
			held = append(held, d)
		}
	}
	return held
}

// describeFaults is one line: the faults injected and the disruptions.
func describeFaults(counts map[string]int, done map[disruption]int) string {
	var parts []string
	for k, n := range counts {
		parts = append(parts, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(parts)
	for d, n := range done {
		parts = append(parts, fmt.Sprintf("%s x%d", d, n))
	}
	return strings.Join(parts, ", ")
}
