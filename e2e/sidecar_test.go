//go:build e2e

package e2e

// sparkplug as Argo deploys it: the sidecar of each workflow's agent pod,
// one process per pod, started and stopped with it.

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Two workflows at once get a sidecar each, started with the args of the
// generated plugin ConfigMap; each is stopped with SIGTERM when Argo
// deletes its workflow's agent pod (here: the workflow is terminated), and
// shuts down cleanly, deleting its running driver.
func TestEachAgentPodHasASidecarOfItsOwn(t *testing.T) {
	parallel(t)
	a := Given(t).Workflow("@examples/spark-pi.yaml").Simulate(sim.Driver{Forever: true}).When().SubmitWorkflow()
	b := Given(t).Workflow("@examples/spark-pi.yaml").Simulate(sim.Driver{Forever: true}).When().SubmitWorkflow()
	a.WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING`))
	b.WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING`))
	sa, sb := oneSidecar(t, a.Workflow()), oneSidecar(t, b.Workflow())
	if sa.Pid == sb.Pid || sa.Addr == sb.Addr {
		t.Errorf("the workflows share a sidecar: %+v and %+v", sa, sb)
	}
	for _, sc := range []argo.Sidecar{sa, sb} {
		args := cmdline(t, sc.Pid)
		// The ConfigMap's args (serve --addr=127.0.0.1:4355), then the
		// pod's port as this kubelet moves it.
		for _, want := range env.Install.Plugin.Container.Args {
			if !slices.Contains(args, want) {
				t.Errorf("sidecar of %s runs %q, without the ConfigMap's %q", sc.Pod, args, want)
			}
		}
	}
	for _, w := range []*framework.When{a, b} {
		name := w.Terminate().WaitForWorkflow(framework.ToBeFailed).WaitForDrivers(0).Workflow().Name
		w.WaitFor("the agent pod's sidecar stopped", func() bool {
			return len(env.Sidecars.Of(framework.DefaultNamespace, name)) == 0
		}, time.Minute)
		log := env.Sidecars.LogTail(name, 100)
		// serve's last words, or in controller mode the acknowledger's.
		shutdown := `msg="shutting down"`
		if env.Mode() == framework.ModeController {
			shutdown = `msg=stopped`
		}
		if !strings.Contains(log, shutdown) {
			t.Errorf("the sidecar of %s did not shut down on SIGTERM; its log ends:\n%s", name, log)
		}
	}
}

// A driver whose timeToLiveSeconds runs out after its workflow ended, and
// with it the workflow's own sidecar, is deleted by the sidecar of a later
// workflow of the namespace (--ttl-leftover-interval).
func TestTimeToLiveOutlivesTheWorkflowsOwnSidecar(t *testing.T) {
	parallel(t)
	const ttl = 20 * time.Second
	first := Given(t).
		Workflow(sparkWorkflow("spark-ttl-leftover-", "", driverBody+fmt.Sprintf("\n          timeToLiveSeconds: %d", int(ttl.Seconds())))).
		Simulate(sim.Succeed(time.Second)).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeSucceeded)
	name := first.Workflow().Name
	first.WaitFor("the first workflow's sidecar stopped", func() bool {
		return len(env.Sidecars.Of(framework.DefaultNamespace, name)) == 0
	}, time.Minute)
	drivers, err := env.Drivers(context.Background(), first.Workflow())
	if err != nil {
		t.Fatal(err)
	}
	if len(drivers) != 1 {
		t.Fatalf("the first workflow's drivers: %v, want its one driver, kept after its sidecar went", podNames(drivers))
	}
	finished := finishedAt(drivers[0])
	if finished.IsZero() {
		t.Fatalf("driver %s has not finished", drivers[0].Name)
	}
	if time.Since(finished) > ttl {
		t.Fatalf("the sidecar stopped %v after the driver finished, past its ttl of %v: nothing left over to show", time.Since(finished), ttl)
	}
	later := Given(t).
		Workflow(sparkWorkflow("spark-ttl-later-", "", driverBody)).
		Simulate(sim.Driver{Forever: true}).
		When().
		SubmitWorkflow().
		WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING`))
	first.WaitForSparkObjects("the leftover driver deleted by a later workflow's sidecar", func(o framework.SparkObjects) bool {
		return len(o.Drivers) == 0
	}, ttl+30*time.Second)
	if lived := time.Since(finished); lived < ttl {
		t.Errorf("the leftover driver was deleted %v after it finished, before its timeToLiveSeconds of %v", lived, ttl)
	}
	later.Terminate().WaitForWorkflow(framework.ToBeFailed)
}

// One sidecar follows many drivers at once: its peak resident memory stays
// under the container's memory limit in plugin.yaml, and what it costs is
// reported (README, "Hardening"). In controller mode the leading
// sparkplug controller follows them, measured against its Deployment's
// limit (the acknowledger follows nothing).
func TestOneSidecarFollowingManyDrivers(t *testing.T) {
	parallel(t)
	const drivers = 40
	w := Given(t).
		Workflow(`
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: spark-many-
spec:
  entrypoint: main
  templates:
    - name: main
      steps:
        - - name: pi
            template: pi
            arguments: {parameters: [{name: seq, value: "{{item}}"}]}
            withSequence: {count: "`+fmt.Sprint(drivers)+`"}
    - name: pi
      inputs: {parameters: [{name: seq}]}
      plugin:
        spark:`+sparkPi+driverBody+`
          arguments: ["{{inputs.parameters.seq}}"]
`).
		Simulate(sim.Succeed(30*time.Second)).
		When().
		SubmitWorkflow().
		WaitForDrivers(drivers, 2*time.Minute)
	who, pid := "one sidecar", 0
	limit := env.Install.Plugin.Container.Resources.Limits.Memory().Value()
	if c := env.SparkplugControllers; c != nil {
		i, err := c.Leader(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		who, pid, limit = fmt.Sprintf("sparkplug controller (replica %d, leading)", i), c.Pid(i), c.MemoryLimit()
	} else {
		pid = oneSidecar(t, w.Workflow()).Pid
	}
	cpu0, err := framework.ProcCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var peak, rss int64
	cpu1, last := cpu0, start
	// Read until the workflow ends; the sidecar goes with its agent pod
	// right after, so the last readings stand.
	w.WaitFor("every driver followed to its end", func() bool {
		if p, r, err := framework.ProcMemory(pid); err == nil {
			peak, rss = max(peak, p), r
		}
		if c, err := framework.ProcCPU(pid); err == nil {
			cpu1, last = c, time.Now()
		}
		return w.Observe().Workflow().Status.Phase.Completed()
	}, 3*time.Minute)
	following := last.Sub(start)
	if phase := w.Workflow().Status.Phase; phase != wfv1.WorkflowSucceeded {
		t.Fatalf("workflow %s, want Succeeded", phase)
	}
	t.Logf("%s following %d drivers (and %d executors) for %v: peak RSS %.1f MiB (last %.1f MiB), CPU %v (%.1f%% of a core)",
		who, drivers, drivers, following.Round(time.Second), float64(peak)/(1<<20), float64(rss)/(1<<20), cpu1-cpu0,
		100*float64(cpu1-cpu0)/float64(following))
	if peak == 0 {
		t.Fatalf("no memory reading of %s", who)
	}
	if limit > 0 && peak >= limit {
		t.Errorf("peak RSS %d bytes of %s, over its memory limit %d", peak, who, limit)
	}
}

// oneSidecar is the one live sidecar of a workflow's agent pod.
func oneSidecar(t *testing.T, wf *wfv1.Workflow) argo.Sidecar {
	t.Helper()
	var got []argo.Sidecar
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if got = env.Sidecars.Of(wf.Namespace, wf.Name); len(got) == 1 && got[0].Pid != 0 {
			return got[0]
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("workflow %s has sidecars %+v, want one", wf.Name, got)
	return argo.Sidecar{}
}

// cmdline is a process's argv.
func cmdline(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// finishedAt is when the driver container ended, zero while it runs.
func finishedAt(p corev1.Pod) time.Time {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == spark.DriverContainerName && cs.State.Terminated != nil {
			return cs.State.Terminated.FinishedAt.Time
		}
	}
	return time.Time{}
}
