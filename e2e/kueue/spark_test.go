//go:build e2e

package kueue

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/e2e/sparkconf"
	"github.com/sparkplug-io/sparkplug/plugin/nodestatus"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// runLong is how long the drivers of the tests run that look at a step
// while it runs or waits behind it: long enough that the state looked for
// holds for many of the fixture's polls.
const runLong = 8 * time.Second

// runPastHold is how long a step runs that others wait behind and are
// seen waiting: a step's first wait for Kueue (QUEUED) is written only
// once it has lasted the writer's interim hold, so the step ahead runs
// that long and runLong more.
const runPastHold = nodestatus.DefaultInterimHold + runLong

// TestKueueRunsOneApplicationAtATime starts three Spark steps together in
// a queue whose quota fits one application: the pods of two applications
// are never active at once (a watch over the whole test), the two that
// wait say QUEUED and name the LocalQueue (once they waited the interim
// hold: no driver of theirs exists to record, and each step runs past
// it), all three succeed, and no Workload is left.
func TestKueueRunsOneApplicationAtATime(t *testing.T) {
	t.Parallel()
	q := newQueue(t, queueSpec{CPU: appCPU, Memory: appMemoryRoom})
	wls := watchWorkloads(t, q.LocalQueue)
	pods := watchSparkPods(t)
	queued := map[string]string{labelQueueName: q.LocalQueue}
	w := Given(t).Workflow(workflow(t, "kueue-three-",
		app{name: "a", labels: queued, driver: sim.Succeed(runPastHold)},
		app{name: "b", labels: queued, driver: sim.Succeed(runPastHold)},
		app{name: "c", labels: queued, driver: sim.Succeed(runPastHold)},
	)).When().SubmitWorkflow()

	var waiting []string
	w.WaitForWorkflow(framework.WorkflowCondition{Name: "one step RUNNING, two Pending QUEUED in " + q.LocalQueue, Done: func(wf *wfv1.Workflow) (bool, error) {
		running := 0
		waiting = waiting[:0]
		for _, n := range wf.Status.Nodes {
			switch {
			case n.Type != wfv1.NodeTypePlugin:
			case n.Phase == wfv1.NodeRunning && strings.HasPrefix(n.Message, "RUNNING"):
				running++
			case n.Phase == wfv1.NodePending && strings.HasPrefix(n.Message, "QUEUED: ") && strings.Contains(n.Message, q.LocalQueue):
				waiting = append(waiting, n.DisplayName+": "+n.Message)
			}
		}
		if wf.Status.Phase.Completed() {
			return false, fmt.Errorf("workflow %s %q", wf.Status.Phase, wf.Status.Message)
		}
		return running == 1 && len(waiting) == 2, nil
	}})
	t.Logf("the waiting steps say:\n  %s", strings.Join(waiting, "\n  "))

	w.WaitForWorkflow(framework.ToBeSucceeded, 3*time.Minute).Then().
		ExpectPluginNodes(func(t *testing.T, nodes []wfv1.NodeStatus) {
			if len(nodes) != 3 {
				t.Fatalf("%d plugin nodes, want 3", len(nodes))
			}
			for _, n := range nodes {
				if n.Phase != wfv1.NodeSucceeded {
					t.Errorf("node %s: %s %q, want Succeeded", n.DisplayName, n.Phase, n.Message)
				}
			}
		})
	uid := w.Workflow().UID
	waitNoWorkload(t, wls)

	if o := pods.Overlaps(uid); len(o) > 0 {
		t.Errorf("pods of two applications active at once %d times, first at %s: %v", len(o), o[0].At.Format(time.TimeOnly), o[0].Apps)
	}
	drivers := driverNames(pods, uid)
	if len(drivers) != 3 {
		t.Errorf("drivers %v, want 3", drivers)
	}
	if names := wls.Names(); len(names) != 3 {
		t.Errorf("Workloads %v, want one per step (3)", names)
	}
	for _, name := range wls.Names() {
		wl := wls.Last(name)
		if _, ok := wls.Ever(name, "Admitted"); !ok {
			t.Errorf("Workload %s never Admitted", name)
		}
		if !framework.OwnedBy(wl.GetOwnerReferences(), string(uid)) {
			t.Errorf("Workload %s: owners %v, want the Workflow %s", name, wl.GetOwnerReferences(), uid)
		}
		if got := wl.GetLabels()[spark.LabelWorkflowUID]; got != string(uid) {
			t.Errorf("Workload %s: label %s=%q, want %s", name, spark.LabelWorkflowUID, got, uid)
		}
		for set, want := range map[string]int64{"driver": 1, "executor": 2} {
			ps, ok := podSet(wl, set)
			n, _, _ := unstructured.NestedInt64(ps, "count")
			if !ok || n != want {
				t.Errorf("Workload %s: pod set %s count %d (found %v), want %d", name, set, n, ok, want)
			}
		}
	}
	expectKueueStamps(t, pods, uid)
	admissionLatency(t, wls, pods, uid)
}

// preemptionSetting is what both preemption tests start from: a queue
// that fits one application and preempts by priority, a low and a high
// WorkloadPriorityClass of the test's own, and the recorders of its
// Workloads and of the Spark pods.
func preemptionSetting(t *testing.T) (q queue, low, high string, wls *workloads, pods *sparkPods) {
	t.Helper()
	q = newQueue(t, queueSpec{CPU: appCPU, Memory: appMemoryRoom, Preempt: true})
	id := shortID(t)
	low = newPriorityClass(t, "low-"+id, 100)
	high = newPriorityClass(t, "high-"+id, 1000)
	return q, low, high, watchWorkloads(t, q.LocalQueue), watchSparkPods(t)
}

// TestKueuePreemptsALowerPriorityStep runs a step of low priority, then
// one of high priority in the same full queue: Kueue preempts the first,
// whose driver sparkplug stops before the second's driver exists; the
// preempted node queues again and, once the second is done, succeeds with
// a new attempt; from its first RUNNING on the node stays Running, its
// next attempt's waits included.
func TestKueuePreemptsALowerPriorityStep(t *testing.T) {
	t.Parallel()
	q, low, high, wls, pods := preemptionSetting(t)

	// The low step's driver runs longer than KueuePodsReadyTimeout: it is
	// evicted for being preempted, not for want of PodsReady.
	lowW := Given(t).Workflow(workflow(t, "kueue-low-",
		app{name: "pi", labels: map[string]string{labelQueueName: q.LocalQueue, labelPriorityClass: low}, driver: sim.Succeed(25 * time.Second)},
	)).When().SubmitWorkflow().
		WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING`))
	lowUID := lowW.Workflow().UID
	first := onlyWorkload(t, wls)
	waitFor(t, "Workload "+first+" PodsReady=True", func() bool {
		wl := wls.Live()[first]
		return wl != nil && isTrue(wl, "PodsReady")
	}, wls.String)

	highW := Given(t).Workflow(workflow(t, "kueue-high-",
		app{name: "pi", labels: map[string]string{labelQueueName: q.LocalQueue, labelPriorityClass: high}, driver: sim.Succeed(runLong)},
	)).When().SubmitWorkflow()
	// The low step is followed (its node's states recorded) until the
	// high step's Workload is gone: meanwhile it was preempted and its
	// next attempt waited in the queue for as long as the high step ran.
	highUID := highW.Workflow().UID
	lowW.WaitForWorkflow(framework.WorkflowCondition{Name: "the high step's Workload to be deleted", Done: func(*wfv1.Workflow) (bool, error) {
		for _, name := range wls.Names() {
			if framework.OwnedBy(wls.Last(name).GetOwnerReferences(), string(highUID)) {
				_, gone := wls.DeletedAt(name)
				return gone, nil
			}
		}
		return false, nil
	}}, 2*time.Minute)
	highW.WaitForWorkflow(framework.ToBeSucceeded, 2*time.Minute)
	lowW.WaitForWorkflow(framework.ToBeSucceeded, 3*time.Minute).Then().
		ExpectHistory(framework.RootNode, func(t *testing.T, states []framework.NodeState) {
			t.Logf("the low step went through:\n  %v", states)
			// After it first ran: requeued (PENDING_RERUN, naming Kueue)
			// or queued again (QUEUED), for the whole of the high step's
			// run (seconds: many of the fixture's polls).
			ran := slices.IndexFunc(states, func(s framework.NodeState) bool { return strings.HasPrefix(s.Message, "RUNNING") })
			requeued := regexp.MustCompile(`^(PENDING_RERUN: .*Kueue|QUEUED: )`)
			if ran < 0 || !slices.ContainsFunc(states[ran:], func(s framework.NodeState) bool { return requeued.MatchString(s.Message) }) {
				t.Errorf("the preempted step never said it was requeued or queued again (PENDING_RERUN: ... Kueue ..., or QUEUED: ) after it ran, while its next attempt waited for the high step: %v", states)
			}
			// Once it ran, it never looked as if it had not started: its
			// next attempt's waits (queued, its driver starting) say so
			// while the node stays Running.
			if ran >= 0 {
				if i := slices.IndexFunc(states[ran:], func(s framework.NodeState) bool { return s.Phase == wfv1.NodePending }); i >= 0 {
					t.Errorf("after it ran the node went back to Pending: %v", states[ran+i])
				}
			}
		})
	waitNoWorkload(t, wls)

	c, ok := wls.Ever(first, "Evicted")
	if !ok || c.Reason != "Preempted" {
		t.Errorf("Workload %s: Evicted %+v (seen %v), want True, reason Preempted", first, c, ok)
	}
	if o := pods.Overlaps(lowUID, highUID); len(o) > 0 {
		t.Errorf("the preempted application's pods were still active when the other's were, %d times, first at %s: %v", len(o), o[0].At.Format(time.TimeOnly), o[0].Apps)
	}
	lowDrivers := driverNames(pods, lowUID)
	if len(lowDrivers) != 2 {
		t.Fatalf("low step's drivers %v, want the preempted one and a second attempt's", lowDrivers)
	}
	all := pods.Pods(lowUID)
	for _, name := range lowDrivers {
		last := all[name]
		if last.Pod.Annotations[annotationWorkload] == first {
			if last.Pod.Status.Phase == corev1.PodSucceeded || (!last.Deleted && last.Pod.DeletionTimestamp == nil) {
				t.Errorf("preempted driver %s: %s, deleted %v, want stopped (deleted) before it ended", name, last.Pod.Status.Phase, last.Deleted)
			}
			continue
		}
		if !strings.HasSuffix(name, "-a2-driver") || last.Pod.Status.Phase != corev1.PodSucceeded {
			t.Errorf("second driver %s: %s, want <prefix>-a2-driver Succeeded", name, last.Pod.Status.Phase)
		}
	}
	// The second attempt's Workload was admitted only once the high
	// step's was gone: the queue holds one application.
	var highWl, second string
	for _, name := range wls.Names() {
		switch owner := wls.Last(name).GetOwnerReferences(); {
		case framework.OwnedBy(owner, string(highUID)):
			highWl = name
		case name != first && framework.OwnedBy(owner, string(lowUID)):
			second = name
		}
	}
	gone, okGone := wls.DeletedAt(highWl)
	admitted, _, okAdmitted := wls.FirstTrue(second, "Admitted")
	if !okGone || !okAdmitted || admitted.Before(gone) {
		t.Errorf("second low Workload %q admitted at %v (%v), high Workload %q deleted at %v (%v): want admitted after",
			second, admitted, okAdmitted, highWl, gone, okGone)
	}
	admissionLatency(t, wls, pods, lowUID, highUID)
}

// TestKueuePreemptionFailsAStepThatSaysFail: with the spark body's
// sparkplug.kueue.onPreemption Fail, a preempted step fails, says it
// was evicted by Kueue and why, and is not run again.
func TestKueuePreemptionFailsAStepThatSaysFail(t *testing.T) {
	t.Parallel()
	q, low, high, wls, pods := preemptionSetting(t)

	lowW := Given(t).Workflow(workflow(t, "kueue-low-fail-",
		app{name: "pi", labels: map[string]string{labelQueueName: q.LocalQueue, labelPriorityClass: low},
			driver: sim.Driver{Forever: true}, edit: func(body map[string]any) {
				body["sparkplug"] = map[string]any{"kueue": map[string]any{"onPreemption": "Fail"}}
			}},
	)).When().SubmitWorkflow().
		WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING`))
	first := onlyWorkload(t, wls)
	highW := Given(t).Workflow(workflow(t, "kueue-high-",
		app{name: "pi", labels: map[string]string{labelQueueName: q.LocalQueue, labelPriorityClass: high}, driver: sim.Succeed(2 * time.Second)},
	)).When().SubmitWorkflow()
	lowW.WaitForWorkflow(framework.ToBeFailed, 2*time.Minute).Then().
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			if n.Phase != wfv1.NodeFailed || !strings.Contains(n.Message, "evicted by Kueue") || !strings.Contains(n.Message, "Preempted") {
				t.Errorf("preempted node: %s %q, want Failed, evicted by Kueue, Preempted", n.Phase, n.Message)
			}
		})
	highW.WaitForWorkflow(framework.ToBeSucceeded, 2*time.Minute)
	waitNoWorkload(t, wls)

	if c, ok := wls.Ever(first, "Evicted"); !ok || c.Reason != "Preempted" {
		t.Errorf("Workload %s: Evicted %+v (seen %v), want True, reason Preempted", first, c, ok)
	}
	lowUID := lowW.Workflow().UID
	var lowWls []string
	for _, name := range wls.Names() {
		if framework.OwnedBy(wls.Last(name).GetOwnerReferences(), string(lowUID)) {
			lowWls = append(lowWls, name)
		}
	}
	if len(lowWls) != 1 {
		t.Errorf("the failed step's Workloads %v, want only %s (no second attempt)", lowWls, first)
	}
	if d := driverNames(pods, lowUID); len(d) != 1 {
		t.Errorf("the failed step's drivers %v, want one", d)
	}
	admissionLatency(t, wls, pods, lowUID, highW.Workflow().UID)
}

// TestKueueFlavourPlacesTheApplication: the admitted ResourceFlavor's
// node labels and tolerations reach the driver pod (which lands on the
// one node that has the labels and the taint) and, for the executors, the
// driver's ConfigMap: the node labels in the executors' nodeSelector as
// Spark builds it from spark.properties and the executor pod template, the
// tolerations in that template.
func TestKueueFlavourPlacesTheApplication(t *testing.T) {
	t.Parallel()
	id := shortID(t)
	const poolKey = "e2e.sparkplug.test/pool"
	nodeName := "kwok-" + id
	toleration := corev1.Toleration{Key: poolKey, Operator: corev1.TolerationOpEqual, Value: id, Effect: corev1.TaintEffectNoSchedule}
	newPoolNode(t, nodeName, map[string]string{poolKey: id}, corev1.Taint{Key: poolKey, Value: id, Effect: corev1.TaintEffectNoSchedule})
	q := newQueue(t, queueSpec{CPU: appCPU, Memory: appMemoryRoom, NodeLabels: map[string]string{poolKey: id}, Tolerations: []corev1.Toleration{toleration}})
	wls := watchWorkloads(t, q.LocalQueue)
	pods := watchSparkPods(t)

	w := Given(t).Workflow(workflow(t, "kueue-flavour-",
		app{name: "pi", labels: map[string]string{labelQueueName: q.LocalQueue}, driver: sim.Succeed(runLong)},
	)).When().SubmitWorkflow().
		WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING`))
	w.Then().ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
		if len(drivers) != 1 {
			t.Fatalf("%d drivers, want 1", len(drivers))
		}
		d := drivers[0]
		if got := d.Spec.NodeSelector[poolKey]; got != id {
			t.Errorf("driver nodeSelector %v, want %s=%s", d.Spec.NodeSelector, poolKey, id)
		}
		if !slices.ContainsFunc(d.Spec.Tolerations, func(tn corev1.Toleration) bool {
			return tn.Key == poolKey && tn.Value == id && tn.Effect == corev1.TaintEffectNoSchedule
		}) {
			t.Errorf("driver tolerations %v, want the flavour's %v", d.Spec.Tolerations, toleration)
		}
		if d.Spec.NodeName != nodeName {
			t.Errorf("driver on node %q, want the flavour's %s", d.Spec.NodeName, nodeName)
		}
		cm := configMap(t, objects.ConfigMapOf(&d))
		props, err := sparkconf.Load(cm.Data[spark.PropertiesFile])
		if err != nil {
			t.Fatal(err)
		}
		if props[spark.ConfExecutorPodTemplateFile] == "" {
			t.Errorf("spark.properties has no %s: the executors get no tolerations", spark.ConfExecutorPodTemplateFile)
		}
		spec := podSpecOf(t, cm.Data[spark.ExecutorPodTemplateKey])
		// An executor's nodeSelector as Spark builds it: the pod
		// template's, then spark.kubernetes.node.selector.*, then
		// spark.kubernetes.executor.node.selector.* (BasicExecutorFeatureStep).
		selector := map[string]string{}
		for k, v := range spec.NodeSelector {
			selector[k] = v
		}
		for _, prefix := range []string{spark.ConfNodeSelectorPrefix, spark.ConfExecutorNodeSelectorPrefix} {
			for k, v := range props {
				if rest, ok := strings.CutPrefix(k, prefix); ok {
					selector[rest] = v
				}
			}
		}
		if got := selector[poolKey]; got != id {
			t.Errorf("executors' nodeSelector %v (%s's and spark.properties' node selectors), want %s=%s", selector, spark.ExecutorPodTemplateKey, poolKey, id)
		}
		t.Logf("executors select %s=%q through spark.properties (%s%s=%q) or their pod template (%q)", poolKey, selector[poolKey],
			spark.ConfExecutorNodeSelectorPrefix, poolKey, props[spark.ConfExecutorNodeSelectorPrefix+poolKey], spec.NodeSelector[poolKey])
		if !slices.ContainsFunc(spec.Tolerations, func(tn corev1.Toleration) bool {
			return tn.Key == poolKey && tn.Value == id && tn.Effect == corev1.TaintEffectNoSchedule
		}) {
			t.Errorf("executor pod template (%s of %s) tolerations %v, want the flavour's %v", spark.ExecutorPodTemplateKey, cm.Name, spec.Tolerations, toleration)
		}
	})
	w.WaitForWorkflow(framework.ToBeSucceeded, 2*time.Minute)
	waitNoWorkload(t, wls)
	admissionLatency(t, wls, pods, w.Workflow().UID)
}

// TestKueueAdmitsDynamicAllocationPartially: a dynamic-allocation step
// (examples/dynamic-allocation.yaml, up to 4 executors, at least 1) in a
// queue with room for the driver and 2 executors is admitted with 2, and
// Spark is capped at 2.
func TestKueueAdmitsDynamicAllocationPartially(t *testing.T) {
	t.Parallel()
	q := newQueue(t, queueSpec{CPU: appCPU, Memory: appMemoryRoom})
	wls := watchWorkloads(t, q.LocalQueue)
	pods := watchSparkPods(t)

	w := Given(t).Workflow(workflow(t, "kueue-dynamic-",
		app{name: "pi", example: "dynamic-allocation.yaml", labels: map[string]string{labelQueueName: q.LocalQueue}, driver: sim.Succeed(runLong),
			// Spark would start 3 executors, more than the quota admits.
			edit: func(body map[string]any) {
				body["dynamicAllocation"].(map[string]any)["initialExecutors"] = 3
			}},
	)).When().SubmitWorkflow().
		WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING`))
	name := onlyWorkload(t, wls)
	wl := wls.Last(name)
	ps, _ := podSet(wl, "executor")
	count, _, _ := unstructured.NestedInt64(ps, "count")
	minCount, _, _ := unstructured.NestedInt64(ps, "minCount")
	if count != 4 || minCount != 1 {
		t.Errorf("Workload %s executor pod set: count %d minCount %d, want 4 and 1 (maxExecutors, minExecutors)", name, count, minCount)
	}
	const want = 2 // 3 CPUs: the driver's and two executors'
	if n, ok := admittedCount(wl, "executor"); !ok || n != want {
		t.Errorf("Workload %s: %d executors admitted (found %v), want %d", name, n, ok, want)
	}
	var driver string
	w.Then().ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
		if len(drivers) != 1 {
			t.Fatalf("%d drivers, want 1", len(drivers))
		}
		driver = drivers[0].Name
		props, err := sparkconf.Load(configMap(t, objects.ConfigMapOf(&drivers[0])).Data[spark.PropertiesFile])
		if err != nil {
			t.Fatal(err)
		}
		if got := props[spark.ConfDynamicAllocationMaxExecutors]; got != fmt.Sprint(want) {
			t.Errorf("spark.properties: %s=%q, want the admitted %d", spark.ConfDynamicAllocationMaxExecutors, got, want)
		}
		if n, err := sparkconf.ExecutorCount(props); err != nil || n > want {
			t.Errorf("spark.properties start %d executors (%v), more than the admitted %d: %s=%s, %s=%s, %s=%s", n, err, want,
				spark.ConfDynamicAllocationInitialExecutors, props[spark.ConfDynamicAllocationInitialExecutors],
				spark.ConfDynamicAllocationMinExecutors, props[spark.ConfDynamicAllocationMinExecutors],
				spark.ConfExecutorInstances, props[spark.ConfExecutorInstances])
		}
	})
	w.WaitForWorkflow(framework.ToBeSucceeded, 2*time.Minute)
	waitNoWorkload(t, wls)
	uid := w.Workflow().UID
	if most := pods.MaxActiveExecutors(driver, uid); most < 1 || most > want {
		t.Errorf("at most %d executors ran at once, want 1 to %d", most, want)
	}
	admissionLatency(t, wls, pods, uid)
}

// TestKueueStopAndTerminateReleaseTheQuota: `argo stop` and `argo
// terminate` of a queued step and then of a running one delete their
// Workloads at once, and the step queued behind them gets the quota and
// succeeds.
func TestKueueStopAndTerminateReleaseTheQuota(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"stop", "terminate"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			shut := func(w *framework.When) *framework.When {
				if how == "stop" {
					return w.Stop()
				}
				return w.Terminate()
			}
			q := newQueue(t, queueSpec{CPU: appCPU, Memory: appMemoryRoom})
			wls := watchWorkloads(t, q.LocalQueue)
			pods := watchSparkPods(t)
			label := map[string]string{labelQueueName: q.LocalQueue}

			running := Given(t).Workflow(workflow(t, "kueue-running-", app{name: "pi", labels: label, driver: sim.Driver{Forever: true}})).
				When().SubmitWorkflow().WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING`))
			runningWl := onlyWorkload(t, wls)
			queued := Given(t).Workflow(workflow(t, "kueue-queued-", app{name: "pi", labels: label, driver: sim.Driver{Forever: true}})).
				When().SubmitWorkflow().WaitForNode(framework.RootNode, framework.NodeMessage(`^QUEUED: `))
			queuedWl := ownedWorkload(t, wls, queued.Workflow().UID)
			// Behind both, in the queue's order (creation).
			next := Given(t).Workflow(workflow(t, "kueue-next-", app{name: "pi", labels: label, driver: sim.Succeed(2 * time.Second)})).
				When().SubmitWorkflow().WaitForNode(framework.RootNode, framework.NodeMessage(`^QUEUED: `))

			start := time.Now()
			shut(queued)
			waitGone(t, wls, queuedWl, start)
			queued.WaitForWorkflow(framework.ToBeCompleted)
			if wl := wls.Live()[runningWl]; wl == nil || !isTrue(wl, "Admitted") {
				t.Errorf("Workload %s of the running step: %v, want still Admitted", runningWl, wl)
			}

			start = time.Now()
			shut(running)
			waitGone(t, wls, runningWl, start)
			running.WaitForWorkflow(framework.ToBeCompleted).WaitForDrivers(0)

			next.WaitForWorkflow(framework.ToBeSucceeded, 2*time.Minute)
			waitNoWorkload(t, wls)
			if d := driverNames(pods, queued.Workflow().UID); len(d) != 0 {
				t.Errorf("the step %s while queued launched drivers %v", how, d)
			}
			admissionLatency(t, wls, pods, running.Workflow().UID, next.Workflow().UID)
		})
	}
}

// onlyWorkload waits until exactly one Workload of the test's queue
// exists and returns its name.
func onlyWorkload(t *testing.T, wls *workloads) string {
	t.Helper()
	var name string
	waitFor(t, "one Workload in "+wls.lq, func() bool {
		live := wls.Live()
		for n := range live {
			name = n
		}
		return len(live) == 1
	}, wls.String)
	return name
}

// ownedWorkload waits for the Workload the Workflow with uid owns and
// returns its name.
func ownedWorkload(t *testing.T, wls *workloads, uid types.UID) string {
	t.Helper()
	var name string
	waitFor(t, "a Workload of workflow "+string(uid), func() bool {
		for n, wl := range wls.Live() {
			if framework.OwnedBy(wl.GetOwnerReferences(), string(uid)) {
				name = n
				return true
			}
		}
		return false
	}, wls.String)
	return name
}

// waitGone waits until Workload name is deleted and logs how long after
// start the watch saw it go.
func waitGone(t *testing.T, wls *workloads, name string, start time.Time) {
	t.Helper()
	waitFor(t, "Workload "+name+" to be deleted", func() bool {
		_, ok := wls.DeletedAt(name)
		return ok
	}, wls.String)
	at, _ := wls.DeletedAt(name)
	t.Logf("Workload %s deleted %v after the workflow's shutdown was set", name, at.Sub(start).Round(time.Millisecond))
}

// waitNoWorkload waits until no Workload of the test's queue is left.
func waitNoWorkload(t *testing.T, wls *workloads) {
	t.Helper()
	waitFor(t, "no Workload left in "+wls.lq, func() bool { return len(wls.Live()) == 0 }, wls.String)
	// And the API server agrees with the watch.
	list, err := env.Cluster.Dynamic.Resource(gvrWorkload).Namespace(env.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, wl := range list.Items {
		if queueName(&wl) == wls.lq {
			t.Errorf("Workload %s of %s is left", wl.GetName(), wls.lq)
		}
	}
}

// driverNames lists the drivers the watch saw for the workflows with uids.
func driverNames(pods *sparkPods, uids ...types.UID) []string {
	var out []string
	for name, e := range pods.Pods(uids...) {
		if e.Pod.Labels[spark.LabelRole] == spark.RoleDriver {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// expectKueueStamps checks every Spark pod of the workflow as first seen:
// no queue-name label (Kueue's pod webhook would gate it), the Workload
// annotation and the pod set label.
func expectKueueStamps(t *testing.T, pods *sparkPods, uid types.UID) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range pods.Events(uid) {
		p := e.Pod
		if seen[p.Name] {
			continue
		}
		seen[p.Name] = true
		role := p.Labels[spark.LabelRole]
		if _, ok := p.Labels[labelQueueName]; ok {
			t.Errorf("%s %s has label %s", role, p.Name, labelQueueName)
		}
		if p.Annotations[annotationWorkload] == "" {
			t.Errorf("%s %s has no annotation %s", role, p.Name, annotationWorkload)
		}
		if got := p.Labels[labelPodSet]; got != role {
			t.Errorf("%s %s: label %s=%q, want %s", role, p.Name, labelPodSet, got, role)
		}
	}
	if len(seen) == 0 {
		t.Error("no Spark pod seen")
	}
}
