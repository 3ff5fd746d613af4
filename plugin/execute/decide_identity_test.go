package execute

import (
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// TestDecideIdentity has a row for each identity case: which node asks
// when the request never says (identical nodes, lost hand-outs, loops,
// ghosts, tombstones, closed and unlisted nodes). plugin/identity tests
// Resolve alone; these rows go through decide, with runs as gathered.
func TestDecideIdentity(t *testing.T) {
	now := t0.Add(10 * time.Minute)
	runDecideTable(t, []decideRow{
		{name: "identical nodes: the node whose run went to its twin adopts the twin's orphan run",
			decide: func(t *testing.T) got {
				return planned(snap(now, []identity.Task{open("n2")},
					runOf(driver("n1", 1, running())),
					runOf(driver("n2", 1, exited(0, "Completed"), handedOut(identity.ModeShared, now.Add(-10*time.Second))))), never(t))
			},
			want: got{adopt: map[string]string{"n1": "n2"}, answer: "n1", outcome: ph(runningPh, spark.StateRunning)}},
		{name: "identical nodes: an adopted run answers its adopter",
			decide: func(t *testing.T) got {
				return planned(snap(now, []identity.Task{open("n2")},
					runOf(driver("n1", 1, exited(0, "Completed"), adoptedBy("n2"))),
					runOf(driver("n2", 1, exited(0, "Completed"), handedOut(identity.ModeShared, now.Add(-10*time.Second))))), never(t))
			},
			want: got{answer: "n1", final: true, record: identity.ModeOwn, outcome: ph(succeeded, spark.StateCompleted)}},
		{name: "identical nodes: while the twin that received a result is still listed, nothing is answered (it may be the one asking again)",
			decide: func(t *testing.T) got {
				return planned(snap(now, []identity.Task{done("n1", wfv1.NodeSucceeded, "n2-a1-driver", 1), open("n2")},
					runOf(driver("n1", 1, running())),
					runOf(driver("n2", 1, exited(0, "Completed"), handedOut(identity.ModeShared, now.Add(-10*time.Second))))), never(t))
			},
			want: got{adopt: map[string]string{"n1": "n2"}, unanswered: true}},
		{name: "identical nodes: both recorded with different results and still listed, nothing is answered",
			decide: func(t *testing.T) got {
				return planned(snap(now, []identity.Task{done("n1", wfv1.NodeSucceeded, "n2-a1-driver", 1), done("n2", wfv1.NodeSucceeded, "n1-a1-driver", 1)},
					runOf(driver("n1", 1, exited(0, "Completed"), handedOut(identity.ModeShared, now.Add(-20*time.Second)))),
					runOf(driver("n2", 1, exited(0, "Completed"), handedOut(identity.ModeShared, now.Add(-10*time.Second))))), never(t))
			},
			want: got{closed: true, unanswered: true}},
		{name: "identical nodes: a run whose result went to its twin waits for the twin's result to be recorded",
			decide: func(t *testing.T) got {
				return planned(snap(now, []identity.Task{open("n1")},
					runOf(driver("n1", 1, exited(0, "Completed"), handedOut(identity.ModeShared, now.Add(-10*time.Second))))), never(t))
			},
			want: got{outcome: ph(runningPh, spark.StateRunning)}, msg: "waiting for an identical step's driver"},
		{name: "lost hand-out: a shared result no node shows after the grace is handed out again",
			decide: func(t *testing.T) got {
				return planned(snap(now, []identity.Task{open("n1"), open("n2")},
					runOf(driver("n1", 1, exited(0, "Completed"), handedOut(identity.ModeShared, now.Add(-2*time.Minute)))),
					runOf(driver("n2", 1, running()))), never(t))
			},
			want: got{answer: "n1", final: true, record: identity.ModeShared, outcome: ph(succeeded, spark.StateCompleted)}},
		{name: "lost hand-out: a result Argo shows landed is never handed out again",
			decide: func(t *testing.T) got {
				s := snap(now, []identity.Task{open("n1"), open("n2")},
					runOf(driver("n1", 1, exited(0, "Completed"), handedOut(identity.ModeShared, now.Add(-2*time.Minute)))),
					runOf(driver("n2", 1, running())))
				s.nodes = wfv1.Nodes{"n0": {ID: "n0", Phase: wfv1.NodeSucceeded, Outputs: &wfv1.Outputs{Parameters: []wfv1.Parameter{
					{Name: OutputDriverPod, Value: wfv1.AnyStringPtr("n1-a1-driver")}}}}}
				return planned(s, never(t))
			},
			want: got{answer: "n2", outcome: ph(runningPh, spark.StateRunning)}},
		{name: "lost hand-out: a node answers from an adopted run whose hand-out was lost, though a newer one it holds landed",
			decide: func(t *testing.T) got {
				s := snap(now, []identity.Task{open("n1")},
					runOf(driver("n0", 1, exited(0, "Completed"), handedOut(identity.ModeShared, now.Add(-5*time.Minute)), adoptedBy("n1"))),
					runOf(driver("n1", 1, exited(0, "Completed"), handedOut(identity.ModeShared, now.Add(-10*time.Second)))),
					runOf(driver("n3", 1, exited(0, "Completed"), handedOut(identity.ModeShared, now.Add(-20*time.Second)), adoptedBy("n1"))))
				landed := func(driver string) wfv1.NodeStatus {
					return wfv1.NodeStatus{Phase: wfv1.NodeSucceeded, Outputs: &wfv1.Outputs{Parameters: []wfv1.Parameter{{Name: OutputDriverPod, Value: wfv1.AnyStringPtr(driver)}}}}
				}
				s.nodes = wfv1.Nodes{"n0": landed("n3-a1-driver"), "n3": landed("n1-a1-driver")}
				return planned(s, never(t))
			},
			want: got{answer: "n0", final: true, record: identity.ModeOwn, outcome: ph(succeeded, spark.StateCompleted)}},
		{name: "loops: one loop child among identical listed nodes makes every result JSON",
			decide: func(t *testing.T) got {
				s := snap(now, []identity.Task{open("n1"), open("plain")}, runOf(driver("plain", 1, running())), runOf(driver("n1", 1, running())))
				s.nodes = loopNodes("n1")
				s.nodes["plain"] = wfv1.NodeStatus{ID: "plain", Name: "wf[1].spark", Phase: wfv1.NodeRunning}
				return planned(s, never(t))
			},
			want: got{answer: "n1", json: true, outcome: ph(runningPh, spark.StateRunning)}},
		{name: "loops: a node outside any loop gets a plain result",
			decide: func(t *testing.T) got {
				s := snap(now, []identity.Task{open("plain")}, runOf(driver("plain", 1, running())))
				s.nodes = wfv1.Nodes{"plain": {ID: "plain", Name: "wf[1].spark", Phase: wfv1.NodeRunning}}
				return planned(s, never(t))
			},
			want: got{answer: "plain", outcome: ph(runningPh, spark.StateRunning)}},
		{name: "ghosts: a recorded driver the cluster lost is a ghost, not a reason to launch",
			decide: func(t *testing.T) got {
				return planned(snap(t0.Add(5*time.Second), []identity.Task{done("n1", wfv1.NodeRunning, "n1-a1-driver", 1)}, ghostOf("n1", 1, t0)), never(t))
			},
			want: got{answer: "n1"}},
		{name: "ghosts: OnFailure reruns a lost driver as the next attempt, once the grace and the interval passed",
			decide: func(t *testing.T) got {
				return planned(snap(t0.Add(41*time.Second), []identity.Task{done("n1", wfv1.NodeRunning, "n1-a1-driver", 1)}, ghostOf("n1", 1, t0)), onFailure(t))
			},
			want: got{relaunch: true, outcome: ph(runningPh, spark.StatePendingRerun)}, msg: "starting attempt 2/3"},
		{name: "tombstones: a driver stopped for its pending timeout is followed by the next attempt per OnFailure",
			decide: func(t *testing.T) got {
				return planned(snap(t0.Add(11*time.Second), []identity.Task{open("n1")}, tombOf("n1", 1, limitPending, t0)), onFailure(t))
			},
			want: got{relaunch: true, outcome: ph(runningPh, spark.StatePendingRerun)}, msg: "stopped for PendingTimeout"},
		{name: "tombstones: a driver stopped for the template's timeout stays Failed, whatever the policy",
			decide: func(t *testing.T) got {
				return planned(snap(t0.Add(time.Hour), []identity.Task{open("n1")}, tombOf("n1", 1, limitTimeout, t0)), onFailure(t))
			},
			want: got{final: true, record: identity.ModeOwn, outcome: ph(failedPh, spark.StateFailed)}, msg: "stopped for Timeout"},
		{name: "closed: with no open node, the recorded result is repeated once a fresh TaskSet confirms it",
			decide: func(t *testing.T) got {
				return planned(snap(now, []identity.Task{done("n1", wfv1.NodeSucceeded, "n1-a1-driver", 1)}, runOf(driver("n1", 1, exited(0, "Completed")))), never(t))
			},
			want: got{closed: true, repeat: true}},
		{name: "closed: with no node listed, the newest hand-out is repeated",
			decide: func(t *testing.T) got {
				return planned(snap(now, nil, runOf(driver("n1", 1, exited(0, "Completed"), handedOut(identity.ModeOwn, now)))), never(t))
			},
			want: got{closed: true, answer: "n1", final: true, outcome: ph(succeeded, spark.StateCompleted)}},
		{name: "unlisted: no node with the template is listed yet, and nothing was handed out",
			decide: func(t *testing.T) got { return planned(snap(now, nil), never(t)) },
			want:   got{closed: true, outcome: ph(pending, spark.StateSubmitted)}, msg: "waiting for the workflow's task set to list this step"},
	})
}
