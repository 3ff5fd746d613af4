//go:build integration

package main

import (
	"context"
	"regexp"
	"strconv"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkplug-io/sparkplug/plugin/sidecar"
)

// runningWithElapsed is a running message: the executor count as ever,
// then, once an interval has passed, the time in whole seconds here.
var runningWithElapsed = regexp.MustCompile(`^RUNNING 0/2 executors(?:, (\d+)s)?$`)

// While a driver runs, its node's message advances by the progress
// interval, from the driver container's start: it opens with the
// executor count, shows only multiples of the interval, never goes back,
// is written no more than once per interval (each write is a Workflow
// update by Argo's controller), and the Workflow gets one SparkRunning
// Event however often it moves.
func TestRunningMessageAdvancesByTheProgressInterval(t *testing.T) {
	t.Parallel()
	const interval = 2 * time.Second
	e := newEnv(t, "progress", func(c *sidecar.Config) { c.Core.ProgressInterval = interval })
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, running(true))

	var seen []int       // the distinct elapsed seconds, in order; 0: none shown
	var when []time.Time // when each was first seen
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) && (len(seen) == 0 || seen[len(seen)-1] < 6) {
		res, ok := e.entry("node-1")
		r := executor.ExecuteTemplateReply{Node: &res}
		if !ok || r.Node.Phase != wfv1.NodeRunning {
			if len(seen) == 0 && (!ok || r.Node.Phase == wfv1.NodePending) {
				time.Sleep(100 * time.Millisecond) // the cache has not seen the status yet
				continue
			}
			t.Fatalf("result %s, want Running", describe(r))
		}
		m := runningWithElapsed.FindStringSubmatch(r.Node.Message)
		if m == nil {
			t.Fatalf("message %q, want %s", r.Node.Message, runningWithElapsed)
		}
		if r.Node.Outputs == nil || r.Node.Outputs.ExitCode != nil {
			t.Fatalf("a running node's outputs %s: want them, without an exit code", describe(r))
		}
		secs := 0
		if m[1] != "" {
			secs, _ = strconv.Atoi(m[1])
		}
		switch {
		case secs%int(interval/time.Second) != 0:
			t.Fatalf("message %q: %ds is not a multiple of the %s interval", r.Node.Message, secs, interval)
		case len(seen) > 0 && secs < seen[len(seen)-1]:
			t.Fatalf("message %q went back from %ds", r.Node.Message, seen[len(seen)-1])
		case len(seen) == 0 || secs != seen[len(seen)-1]:
			seen = append(seen, secs)
			when = append(when, time.Now())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(seen) < 3 || seen[len(seen)-1] < 6 {
		t.Fatalf("elapsed seconds seen %v, want the message to reach 6s through the interval's steps", seen)
	}
	step := int(interval / time.Second)
	for i := 1; i < len(seen); i++ {
		// A message-only change waits for the interval since the last
		// write, and for the writer's next round (at most a second): the
		// entry lags the message by less than an interval, so it may skip
		// a step, never two.
		if d := seen[i] - seen[i-1]; d != step && d != 2*step {
			t.Errorf("elapsed seconds seen %v: a step other than one or two intervals", seen)
		}
		// Polled every 100ms: a change seen sooner than the interval (less
		// the polls' lag) after the one before was written sooner.
		if gap := when[i].Sub(when[i-1]); gap < interval-500*time.Millisecond {
			t.Errorf("elapsed seconds seen %v: %ds was written %s after %ds, within the %s interval", seen, seen[i], gap.Round(time.Millisecond), seen[i-1], interval)
		}
	}

	// Events go out asynchronously: wait for the one, then make sure no
	// second one follows.
	var running []corev1.Event
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := testCluster.Client.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Workflow,involvedObject.name=" + e.wf.Name + ",reason=SparkRunning"})
		if err != nil {
			return false, err
		}
		running = evs.Items
		return len(running) > 0, nil
	})
	if err != nil {
		t.Fatalf("no SparkRunning Event: %v", err)
	}
	time.Sleep(2 * time.Second)
	evs, err := testCluster.Client.CoreV1().Events(e.ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.kind=Workflow,involvedObject.name=" + e.wf.Name + ",reason=SparkRunning"})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs.Items) != 1 || evs.Items[0].Count > 1 {
		for _, ev := range evs.Items {
			t.Logf("event x%d: %s", ev.Count, ev.Message)
		}
		t.Fatalf("%d SparkRunning Events while the message moved through %v, want one, recorded once", len(evs.Items), seen)
	}
}

// A node whose driver ended reports the driver's exit code as
// outputs.exitCode, as Argo does for a pod's main container, and none
// while it ran; a succeeded one reports 0.
func TestEndedNodesReportTheDriversExitCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		phase  corev1.PodPhase
		code   int32
		reason string
		want   wfv1.NodePhase
	}{
		{"exitcode-failed", corev1.PodFailed, 1, "Error", wfv1.NodeFailed},
		{"exitcode-oomkilled", corev1.PodFailed, 137, "OOMKilled", wfv1.NodeFailed},
		{"exitcode-succeeded", corev1.PodSucceeded, 0, "Completed", wfv1.NodeSucceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.name)
			tmpl := template(t, "spark-pi", sparkPi)
			e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
			e.execute(tmpl)
			d := e.onlyDriver()
			e.setDriverStatus(d.Name, running(true))
			r := e.eventually(tmpl, "Running", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeRunning })
			if r.Node.Outputs == nil || r.Node.Outputs.ExitCode != nil {
				t.Fatalf("running: outputs %s, want them without an exit code", describe(r))
			}
			e.setDriverStatus(d.Name, terminated(tc.phase, tc.code, tc.reason, ""))
			r = e.eventually(tmpl, string(tc.want), func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == tc.want })
			if r.Node.Outputs == nil || r.Node.Outputs.ExitCode == nil || *r.Node.Outputs.ExitCode != strconv.Itoa(int(tc.code)) {
				t.Fatalf("reply %s, want outputs.exitCode %d", describe(r), tc.code)
			}
			if param(r, "driver-pod") != d.Name {
				t.Fatalf("the exit code came without the other outputs: %s", describe(r))
			}
		})
	}
}
