//go:build bench

package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/e2e/framework"
)

// sparkWorkflow fans out n Spark steps, each with its own argument; in
// sidecar mode, the sidecar serves its profiles at pprofAddr.
func sparkWorkflow(run string, n int) string {
	return loopWorkflow("scale-spark-", n, fmt.Sprintf(`
  podMetadata:
    annotations: {%s: "--pprof-addr=%s"}`, framework.ServeArgsAnnotation, pprofAddr), sparkTemplate(run, driverRun(n), "{{inputs.parameters.i}}"))
}

// runLoop runs the loop of n Spark steps in one workflow, in the
// environment's mode (kind KindSparkplug: sidecar, KindController).
func runLoop(t *testing.T, kind string, n int) Result {
	ctx := context.Background()
	ctl := env.SparkplugControllers
	if ctl != nil {
		// Fresh replicas: their peak RSS, CPU and counters are this run's.
		if err := ctl.Rollout(ctx); err != nil {
			t.Fatal(err)
		}
	}
	run := runID(kind, n)
	w := newPodWatch(t, run)
	api0 := apiRequests(t)
	wfw0, tsw0 := writes(t)
	samp := sampleSparkplug(ctx)
	defer samp.stop()
	wf := submit(t, sparkWorkflow(run, n))
	r := Result{Kind: kind, N: n}
	w.waitCreated(t, wf, n, 10*time.Minute)
	r.Created = w.created()
	r.APIRequests = apiRequests(t) - api0
	// The sidecar (controller replicas) started with the agent pod (this
	// run): all its requests so far were this launch's (and its caches'
	// first lists).
	sc := samp.waitSidecars(t, 1)[0]
	r.OwnRequests = ownRequests(t, []argo.Sidecar{sc})

	w.waitRunning(t, wf, n, 5*time.Minute)
	if ctl == nil {
		// Polls while the sidecar follows the n drivers, all running.
		before := sidecarRequests(t, sc.Addr)
		r.Polls = poll(t, wf, sc.Addr, max(2000, 2*n))
		r.PollRequests = sidecarRequests(t, sc.Addr) - before
		t.Logf("the sidecar's live heap, following %d drivers:\n%s", n, heapTop(pprofAddr))
	} else {
		logControllerHeap(t, n)
	}

	r.Done = waitWorkflow(t, wf, driverRun(n)+10*time.Minute)
	wfw, tsw := writes(t)
	r.WorkflowWrites, r.TaskSetWrites = wfw-wfw0, tsw-tsw0
	samp.stop()
	samp.fill(&r)
	cleanup(t, wf, run)
	return r
}
