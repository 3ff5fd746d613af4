//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
)

// fanOut is a DAG of n Spark tasks side by side, its sidecar given
// serveArgs.
func fanOut(n int, serveArgs string) string {
	var tasks strings.Builder
	for i := range n {
		fmt.Fprintf(&tasks, "      - {name: s%d, template: spark}\n", i)
	}
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: live-
spec:
  entrypoint: main
  podMetadata:
    annotations: {%s: "%s"}
  templates:
  - name: main
    dag:
      tasks:
%s  - name: spark
    plugin:
      spark:%s
`, framework.ServeArgsAnnotation, serveArgs, tasks.String(), sparkBody(8, driverLine, executorLine))
}

// pluginFlags makes serveArgs (space-separated serve flags) the plugin's
// settings for t's workflows. It returns the namespace to submit them in
// and what fanOut takes: in sidecar mode the environment's namespace and
// serveArgs, the workflow's own sidecar's flags (ServeArgsAnnotation); in
// controller mode, where one process serves every workflow of a
// namespace, a namespace of t's own, whose controller runs with serveArgs
// (Env.OwnControllers), and "".
func pluginFlags(t *testing.T, serveArgs string) (namespace, annotation string) {
	t.Helper()
	if env.SparkplugControllers == nil {
		return env.Namespace, serveArgs
	}
	_, ns := env.OwnControllers(t, 1, strings.Fields(serveArgs)...)
	return ns, ""
}

var runningElapsed = regexp.MustCompile(`^RUNNING 1/1 executor, (?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$`)

// elapsedOf is the elapsed time a RUNNING message shows, or -1.
func elapsedOf(msg string) time.Duration {
	m := runningElapsed.FindStringSubmatch(msg)
	if m == nil || (m[1] == "" && m[2] == "" && m[3] == "") {
		return -1
	}
	var d time.Duration
	for i, unit := range []time.Duration{time.Hour, time.Minute, time.Second} {
		if m[i+1] != "" {
			n, _ := strconv.Atoi(m[i+1])
			d += time.Duration(n) * unit
		}
	}
	return d
}

// While a driver runs, its node's message shows the elapsed time, rounded
// down to --progress-interval, so the message and the duration Argo shows
// (it sets finishedAt each time it copies a result) advance in the
// Workflow's status; a finished node shows its end.
func TestARunningNodesMessageAndDurationAdvance(t *testing.T) {
	parallel(t)
	type seen struct {
		msg      string
		finished time.Time
	}
	var history []seen
	ns, serveArgs := pluginFlags(t, "--progress-interval=3s")
	w := Given(t).Namespace(ns).
		Workflow(fanOut(1, serveArgs)).
		Simulate(sim.Succeed(20 * time.Second)).
		When().
		SubmitWorkflow()
	w.WaitForNode("s0", framework.NodeCondition{Name: "running with its elapsed time, three times", Done: func(n *wfv1.NodeStatus) bool {
		if n.Phase == wfv1.NodeRunning && elapsedOf(n.Message) >= 0 && (len(history) == 0 || history[len(history)-1].msg != n.Message) {
			history = append(history, seen{n.Message, n.FinishedAt.Time})
		}
		return len(history) >= 3
	}}, 60*time.Second)
	for i := 1; i < len(history); i++ {
		prev, cur := history[i-1], history[i]
		if elapsedOf(cur.msg) <= elapsedOf(prev.msg) || elapsedOf(cur.msg)%(3*time.Second) != 0 {
			t.Errorf("message went %q -> %q: want the elapsed time to grow, in steps of the 3s interval", prev.msg, cur.msg)
		}
		if !cur.finished.After(prev.finished) {
			t.Errorf("node finishedAt stayed %s while the message went %q -> %q: the UI's duration would be frozen", cur.finished, prev.msg, cur.msg)
		}
	}
	w.WaitForWorkflow(framework.ToBeSucceeded).Then().
		ExpectNode("s0", func(t *testing.T, n *wfv1.NodeStatus) {
			if n.Message != "COMPLETED" {
				t.Errorf("finished node %q, want COMPLETED", n.Message)
			}
			if n.Outputs == nil || n.Outputs.ExitCode == nil || *n.Outputs.ExitCode != "0" {
				t.Errorf("finished node outputs.exitCode %v, want 0", n.Outputs)
			}
		})
}

// A failed driver's exit code is the node's outputs.exitCode.
func TestAFailedNodeReportsItsExitCode(t *testing.T) {
	parallel(t)
	Given(t).
		Workflow(fanOut(1, "")).
		Simulate(sim.Fail(time.Second, 3, "java.lang.IllegalStateException: no input")).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeFailed).
		Then().
		ExpectNode("s0", func(t *testing.T, n *wfv1.NodeStatus) {
			if n.Phase != wfv1.NodeFailed || !strings.HasPrefix(n.Message, "FAILED: driver exited 3") {
				t.Errorf("node %s %q, want Failed, driver exited 3", n.Phase, n.Message)
			}
			if n.Outputs == nil || n.Outputs.ExitCode == nil || *n.Outputs.ExitCode != "3" {
				t.Errorf("outputs %+v, want exitCode 3", n.Outputs)
			}
		})
}

// The Workflow writes a live message costs, measured: Workflow updates
// (watch events) over 30 s, given per minute, while 1 or 20 Spark nodes
// run, with --progress-interval=10s and with it off. The agent writes
// changed results at most once per patch interval for the whole workflow
// (1 s in this suite, 10 s by default), so what a live message adds is
// bounded by the nodes' changes per interval, not more. 30 s holds three
// 10 s intervals; a minute would double the test's time.
func TestWorkflowUpdatesPerMinuteWithALiveMessage(t *testing.T) {
	t.Parallel()
	const window = 30 * time.Second
	type result struct {
		nodes         int
		progress      string
		updates, peak int
	}
	var mu sync.Mutex
	var results []result
	t.Cleanup(func() {
		for _, r := range results {
			t.Logf("workflow updates/min: %2d running Spark nodes, --progress-interval=%-3s: %d (%d in %s)", r.nodes, r.progress, r.updates*int(time.Minute/window), r.updates, window)
		}
	})
	// One group per setting (in controller mode, a controller and a
	// namespace of the group's own); all four side by side.
	for _, progress := range []string{"0", "10s"} {
		t.Run("progress "+progress, func(t *testing.T) {
			t.Parallel()
			ns, serveArgs := pluginFlags(t, "--progress-interval="+progress)
			for _, nodes := range []int{1, 20} {
				t.Run(fmt.Sprintf("%d nodes", nodes), func(t *testing.T) {
					parallel(t)
					w := Given(t).Namespace(ns).
						Workflow(fanOut(nodes, serveArgs)).
						Simulate(sim.Succeed(window + 90*time.Second)).
						When().
						SubmitWorkflow()
					w.WaitForNode(framework.RootNode, framework.NodeCondition{Name: fmt.Sprintf("%d nodes running", nodes), Done: func(*wfv1.NodeStatus) bool {
						running := 0
						for _, n := range w.Workflow().Status.Nodes {
							if n.Type == wfv1.NodeTypePlugin && n.Phase == wfv1.NodeRunning && strings.HasPrefix(n.Message, "RUNNING 1/1 executor") {
								running++
							}
						}
						return running == nodes
					}}, 2*time.Minute)
					wf := w.Workflow()
					ctx, cancel := context.WithTimeout(context.Background(), window)
					defer cancel()
					watcher, err := env.Workflows.ArgoprojV1alpha1().Workflows(wf.Namespace).Watch(ctx, metav1.ListOptions{
						FieldSelector: "metadata.name=" + wf.Name, ResourceVersion: wf.ResourceVersion})
					if err != nil {
						t.Fatal(err)
					}
					updates := 0
					for ev := range watcher.ResultChan() {
						if ev.Type == watch.Modified {
							updates++
						}
					}
					watcher.Stop()
					mu.Lock()
					results = append(results, result{nodes: nodes, progress: progress, updates: updates})
					mu.Unlock()
					// At most one Workflow write per patch interval (1 s here)
					// from the agent, plus the controller's own.
					if updates > 2*int(window/time.Second) {
						t.Errorf("%d Workflow updates in %s", updates, window)
					}
					w.Terminate()
				})
			}
		})
	}
}
