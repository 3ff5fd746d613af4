//go:build bench

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
)

// oneStepWorkflow is workflow i of a run of n one-step workflows: the
// entrypoint is the Spark step (spark) or the container step itself, as a
// CronWorkflow converted from a ScheduledSparkApplication runs it. The
// container step's pod ends as long after its start as a driver does
// (the step-exit Stage), so that Argo's own writes are counted until its
// workflows are done too.
func oneStepWorkflow(run string, n, i int, spark bool) string {
	ann, _ := json.Marshal(sim.Succeed(driverRun(n)).Annotations())
	body := fmt.Sprintf(`      metadata: {labels: {%s: %s}, annotations: %s}
      container:
        image: spark:3.5.3
        command: [/opt/spark/bin/spark-submit]
        args: [--class, org.apache.spark.examples.SparkPi, "local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar", "%d"]
`, RunLabel, run, ann, i)
	if spark {
		body = sparkTemplate(run, driverRun(n), fmt.Sprint(i))
	}
	return fmt.Sprintf(`
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: scale-wf-
  labels: {%s: %s}
spec:
  entrypoint: pi
  templates:
    - name: pi
%s`, RunLabel, run, body)
}

// runWorkflows runs n workflows of one step each, submitted together:
// Spark steps in the environment's mode (KindSidecarWF, KindControllerWF,
// the latter with its agent pods left unplayed if unplay), or container
// steps (KindPlainWF), with Argo's workflow-controller as it runs now
// (argoFlags: the flags it was restarted with beyond its defaults).
func runWorkflows(t *testing.T, kind string, n int, unplay bool, argoFlags string) Result {
	ctx := context.Background()
	spark := kind != KindPlainWF
	ctl := env.SparkplugControllers
	if spark && ctl != nil {
		if err := ctl.Rollout(ctx); err != nil {
			t.Fatal(err)
		}
	}
	unplayed.Store(unplay)
	defer unplayed.Store(false)
	run := runID(kind, n)
	texts := make([]string, n)
	for i := range texts {
		texts[i] = oneStepWorkflow(run, n, i, spark)
	}
	w := newPodWatch(t, run)
	var ts *taskSetWatch
	if spark {
		ts = newTaskSetWatch(t)
	}
	api0 := apiRequests(t)
	wfw0, tsw0 := writes(t)
	own0 := -1.0
	if spark {
		own0 = ownResults(t)
	}
	var samp *sparkplugSampler
	if spark {
		samp = sampleSparkplug(ctx)
		defer samp.stop()
	}
	submitAll(t, texts)
	r := Result{Kind: kind, N: n, Argo: argoFlags, Unplayed: unplay, OwnRequests: -1, WorkflowWrites: -1, TaskSetWrites: -1, OwnResults: -1}
	w.waitCreated(t, nil, n, 15*time.Minute)
	r.Created = w.created()
	r.APIRequests = apiRequests(t) - api0
	if !spark {
		r.Done = waitWorkflows(t, run, n, driverRun(n)+15*time.Minute)
		r.WorkflowWrites, _ = writes(t)
		r.WorkflowWrites -= wfw0
		cleanup(t, nil, run)
		return r
	}
	r.TaskSetsAll = ts.all(n)
	r.ToDriver = toDriver(ts, w)
	t.Logf("%s, N=%d: Argo's TaskSets created, the last at %v; the last driver at %v", kind, n, r.TaskSetsAll, r.All())
	var scs []argo.Sidecar
	if !unplay {
		scs = samp.waitSidecars(t, n)
	}
	r.OwnRequests = ownRequests(t, scs)
	w.waitRunning(t, nil, n, 5*time.Minute)
	if ctl != nil {
		logControllerHeap(t, n)
	}
	r.Done = waitWorkflows(t, run, n, driverRun(n)+15*time.Minute)
	wfw, tsw := writes(t)
	r.WorkflowWrites, r.TaskSetWrites = wfw-wfw0, tsw-tsw0
	if own0 >= 0 {
		r.OwnResults = ownResults(t) - own0
	}
	samp.stop()
	samp.fill(&r)
	cleanup(t, nil, run)
	return r
}
