package state

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Termination messages as FallbackToLogsOnError leaves them: the tail of the log.
const (
	javaTrace = `25/03/01 12:00:01 INFO SparkContext: Running Spark version 3.5.1
25/03/01 12:00:02 ERROR SparkContext: Error initializing SparkContext.
Exception in thread "main" java.lang.IllegalArgumentException: bad input
	at com.example.Main$.parse(Main.scala:42)
	at com.example.Main$.main(Main.scala:10)
	at org.apache.spark.deploy.SparkSubmit.doRunMain$1(SparkSubmit.scala:1029)
Caused by: java.lang.NumberFormatException: For input string: "x"
	at java.base/java.lang.Integer.parseInt(Integer.java:652)
	... 12 more
25/03/01 12:00:02 INFO ShutdownHookManager: Shutdown hook called
25/03/01 12:00:02 INFO ShutdownHookManager: Deleting directory /tmp/spark-5f1c
`
	pythonTrace = `25/03/01 12:00:01 INFO SparkContext: Running Spark version 3.5.1
Traceback (most recent call last):
  File "/opt/app/job.py", line 12, in <module>
    main()
  File "/opt/app/job.py", line 9, in main
    raise ValueError("bad input: column 'id' is empty")
ValueError: bad input: column 'id' is empty
25/03/01 12:00:03 INFO SparkContext: Invoking stop() from shutdown hook
25/03/01 12:00:03 INFO ShutdownHookManager: Shutdown hook called
`
)

func TestAssess(t *testing.T) {
	const grace = 30 * time.Second
	tests := []struct {
		name string
		o    Observed // Now, SubmittedAt and NotFoundGrace default to t0, t0 and grace

		state   spark.State
		phase   Phase
		msg     string
		exit    *int32
		reason  string
		waiting string
		infra   bool
	}{
		// Pending: SUBMITTED, saying why the driver has not started.
		{
			name:  "pending, not scheduled yet",
			o:     Observed{Driver: driverPod(corev1.PodPending)},
			state: spark.StateSubmitted, phase: PhasePending,
			msg: "SUBMITTED: waiting for the driver pod to be scheduled",
		},
		{
			name: "pending, unschedulable",
			o: Observed{Driver: driverPod(corev1.PodPending,
				condition(corev1.PodScheduled, corev1.ConditionFalse, "Unschedulable", "0/3 nodes are available: 3 Insufficient memory."))},
			state: spark.StateSubmitted, phase: PhasePending, waiting: "Unschedulable",
			msg: "SUBMITTED: driver pending (Unschedulable: 0/3 nodes are available: 3 Insufficient memory.)",
		},
		{
			name:  "pending, scheduled, no container status yet",
			o:     Observed{Driver: driverPod(corev1.PodPending, condition(corev1.PodScheduled, corev1.ConditionTrue, "", ""))},
			state: spark.StateSubmitted, phase: PhasePending,
			msg: "SUBMITTED: waiting for the driver container to start",
		},
		{
			name:  "pending, container creating",
			o:     Observed{Driver: driverPod(corev1.PodPending, ctr(waiting("ContainerCreating", "")))},
			state: spark.StateSubmitted, phase: PhasePending, waiting: "ContainerCreating",
			msg: "SUBMITTED: driver pending (ContainerCreating)",
		},
		{
			name:  "pending, image pull back-off",
			o:     Observed{Driver: driverPod(corev1.PodPending, ctr(waiting("ImagePullBackOff", `Back-off pulling image "x"`)))},
			state: spark.StateSubmitted, phase: PhasePending, waiting: "ImagePullBackOff",
			msg: `SUBMITTED: driver pending (ImagePullBackOff: Back-off pulling image "x")`,
		},
		{
			name: "pending, blocked by an init container that cannot pull its image",
			o: Observed{Driver: driverPod(corev1.PodPending,
				initContainer("fetch-deps", waiting("ErrImagePull", `pull access denied for "deps"`)),
				ctr(waiting("PodInitializing", "")))},
			state: spark.StateSubmitted, phase: PhasePending, waiting: "ErrImagePull",
			msg: `SUBMITTED: driver pending (ErrImagePull: init container "fetch-deps": pull access denied for "deps")`,
		},
		{
			name: "pending, init container running",
			o: Observed{Driver: driverPod(corev1.PodPending,
				initContainer("fetch-deps", running()), ctr(waiting("PodInitializing", "")))},
			state: spark.StateSubmitted, phase: PhasePending, waiting: "PodInitializing",
			msg: "SUBMITTED: driver pending (PodInitializing)",
		},
		{
			name:  "pending, being deleted",
			o:     Observed{Driver: driverPod(corev1.PodPending, deleting(), ctr(waiting("ContainerCreating", "")))},
			state: spark.StateSubmitted, phase: PhasePending,
			msg: "SUBMITTED: driver pod is being deleted",
		},
		{
			name:  "pending, PodScheduled False without a reason",
			o:     Observed{Driver: driverPod(corev1.PodPending, condition(corev1.PodScheduled, corev1.ConditionFalse, "", ""))},
			state: spark.StateSubmitted, phase: PhasePending,
			msg: "SUBMITTED: waiting for the driver pod to be scheduled",
		},
		{
			name: "pending, scheduling gated",
			o: Observed{Driver: driverPod(corev1.PodPending,
				condition(corev1.PodScheduled, corev1.ConditionFalse, "SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates"))},
			state: spark.StateSubmitted, phase: PhasePending, waiting: "SchedulingGated",
			msg: "SUBMITTED: driver pending (SchedulingGated: Scheduling is blocked due to non-empty scheduling gates)",
		},
		{
			name:  "empty phase: an object not yet through the API server is not started",
			o:     Observed{Driver: driverPod("")},
			state: spark.StateSubmitted, phase: PhasePending,
			msg: "SUBMITTED: waiting for the driver pod to be scheduled",
		},
		{
			name:  "pending, renamed driver container falls back to the first container",
			o:     Observed{Driver: driverPod(corev1.PodPending, renamed("main"), ctr(waiting("InvalidImageName", `invalid image "a b"`)))},
			state: spark.StateSubmitted, phase: PhasePending, waiting: "InvalidImageName",
			msg: `SUBMITTED: driver pending (InvalidImageName: invalid image "a b")`,
		},

		// Running.
		{
			name:  "running, all executors running",
			o:     Observed{Driver: driverPod(corev1.PodRunning, ctr(running())), Expected: 3, Executors: repeat(3, executorPod(corev1.PodRunning, ctr(running())))},
			state: spark.StateRunning, phase: PhaseRunning,
			msg: "RUNNING 3/3 executors",
		},
		{
			name: "running with a sidecar, dynamic allocation",
			o: Observed{Driver: driverPod(corev1.PodRunning, ctr(running()), sidecar()), Dynamic: true, Expected: 5,
				Executors: repeat(2, executorPod(corev1.PodRunning))},
			state: spark.StateRunning, phase: PhaseRunning,
			msg: "RUNNING 2 executors",
		},
		{
			name: "running, executors pending",
			o: Observed{Driver: driverPod(corev1.PodRunning, ctr(running())), Expected: 3,
				Executors: pods(executorPod(corev1.PodRunning), executorPod(corev1.PodPending), executorPod(corev1.PodPending))},
			state: spark.StateRunning, phase: PhaseRunning,
			msg: "RUNNING 1/3 executors (2 pending)",
		},
		{
			name:  "running, driver container status not reported yet",
			o:     Observed{Driver: driverPod(corev1.PodRunning)},
			state: spark.StateRunning, phase: PhaseRunning,
			msg: "RUNNING 0 executors",
		},
		{
			name:  "running, being deleted",
			o:     Observed{Driver: driverPod(corev1.PodRunning, ctr(running()), deleting()), Expected: 2},
			state: spark.StateRunning, phase: PhaseRunning,
			msg: "RUNNING 0/2 executors: driver pod is being deleted",
		},
		{
			name:  "running sidecar, driver image cannot be pulled: not started",
			o:     Observed{Driver: driverPod(corev1.PodRunning, ctr(waiting("ImagePullBackOff", `Back-off pulling image "spark:typo"`)), sidecar())},
			state: spark.StateSubmitted, phase: PhasePending, waiting: "ImagePullBackOff",
			msg: `SUBMITTED: driver pending (ImagePullBackOff: Back-off pulling image "spark:typo")`,
		},
		{
			name:  "sidecar keeps the pod running, driver exited 0",
			o:     Observed{Driver: driverPod(corev1.PodRunning, ctr(exited(0, "Completed", "")), sidecar())},
			state: spark.StateSucceeding, phase: PhaseSucceeded, exit: code(0), reason: "Completed",
			msg: "COMPLETED",
		},
		{
			name:  "sidecar keeps the pod running, driver exited 1",
			o:     Observed{Driver: driverPod(corev1.PodRunning, ctr(exited(1, "Error", javaTrace)), sidecar())},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(1), reason: "Error",
			msg: "FAILED: driver exited 1 (Error): java.lang.IllegalArgumentException: bad input",
		},
		{
			name:  "sidecar keeps the pod running, driver OOMKilled",
			o:     Observed{Driver: driverPod(corev1.PodRunning, ctr(exited(137, "OOMKilled", "")), sidecar())},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(137), reason: "OOMKilled",
			msg: "FAILED: driver exited 137 (OOMKilled): driver was OOMKilled: raise spark.driver.memory or memoryOverhead",
		},
		{
			name:  "sidecar keeps the pod running, driver got SIGTERM, no deletion",
			o:     Observed{Driver: driverPod(corev1.PodRunning, ctr(exited(143, "Error", "")), sidecar())},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(143), reason: "Error",
			msg: "FAILED: driver exited 143 (Error): exit 143 = SIGTERM: the driver process was terminated by SIGTERM",
		},
		{
			name:  "sidecar keeps the pod running while it is deleted, driver got SIGTERM",
			o:     Observed{Driver: driverPod(corev1.PodRunning, ctr(exited(143, "Error", "")), sidecar(), deleting())},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(143), reason: "Error", infra: true,
			msg: "FAILED: driver exited 143 (Error): exit 143 = SIGTERM: the driver pod was stopped from outside (deleted, evicted or preempted), not a failure of the application",
		},

		// Succeeded.
		{
			name:  "succeeded",
			o:     Observed{Driver: driverPod(corev1.PodSucceeded, ctr(exited(0, "Completed", ""))), Expected: 2, Executors: repeat(2, executorPod(corev1.PodSucceeded))},
			state: spark.StateSucceeding, phase: PhaseSucceeded, exit: code(0), reason: "Completed",
			msg: "COMPLETED",
		},
		{
			name:  "succeeded, container statuses already gone",
			o:     Observed{Driver: driverPod(corev1.PodSucceeded)},
			state: spark.StateSucceeding, phase: PhaseSucceeded,
			msg: "COMPLETED",
		},

		// Failed: the driver's exit code decides, then why.
		{
			name: "failed pod, but the driver exited 0 (a sidecar failed, or evicted afterwards)",
			o: Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(0, "Completed", "")), sidecar(),
				podReason("Evicted", "The node was low on resource: ephemeral-storage."))},
			state: spark.StateSucceeding, phase: PhaseSucceeded, exit: code(0), reason: "Completed",
			msg: "COMPLETED",
		},
		{
			name:  "failed, Python traceback",
			o:     Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(1, "Error", pythonTrace)))},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(1), reason: "Error",
			msg: "FAILED: driver exited 1 (Error): ValueError: bad input: column 'id' is empty",
		},
		{
			name:  "failed, Java stack trace",
			o:     Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(1, "Error", javaTrace)))},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(1), reason: "Error",
			msg: "FAILED: driver exited 1 (Error): java.lang.IllegalArgumentException: bad input",
		},
		{
			name:  "failed, no termination message",
			o:     Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(2, "Error", "")))},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(2), reason: "Error",
			msg: "FAILED: driver exited 2 (Error)",
		},
		{
			name:  "failed, SIGKILL without OOMKilled",
			o:     Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(137, "Error", "25/03/01 INFO MemoryStore: Block broadcast_0 stored")))},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(137), reason: "Error",
			msg: "FAILED: driver exited 137 (Error): exit 137 = SIGKILL: the driver process was killed (out of memory on the node, or not stopped within its grace period)",
		},
		{
			name:  "failed, OOMKilled",
			o:     Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(137, "OOMKilled", "")))},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(137), reason: "OOMKilled",
			msg: "FAILED: driver exited 137 (OOMKilled): driver was OOMKilled: raise spark.driver.memory or memoryOverhead",
		},
		{
			name:  "failed, OOMKilled while being deleted is still the application's",
			o:     Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(137, "OOMKilled", "")), deleting())},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(137), reason: "OOMKilled",
			msg: "FAILED: driver exited 137 (OOMKilled): driver was OOMKilled: raise spark.driver.memory or memoryOverhead",
		},
		{
			name:  "failed, SIGTERM without deletion",
			o:     Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(143, "Error", "")))},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(143), reason: "Error",
			msg: "FAILED: driver exited 143 (Error): exit 143 = SIGTERM: the driver process was terminated by SIGTERM",
		},
		{
			name:  "failed, SIGTERM while being deleted",
			o:     Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(143, "Error", javaTrace)), deleting())},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(143), reason: "Error", infra: true,
			msg: "FAILED: driver exited 143 (Error): exit 143 = SIGTERM: the driver pod was stopped from outside (deleted, evicted or preempted), not a failure of the application",
		},
		{
			name:  "failed, SIGKILL after the deletion grace period ran out",
			o:     Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(137, "Error", "")), deleting())},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(137), reason: "Error", infra: true,
			msg: "FAILED: driver exited 137 (Error): exit 137 = SIGKILL: the driver pod was stopped from outside (deleted, evicted or preempted), not a failure of the application",
		},
		{
			name:  "failed, exit 1 while being deleted is the application's",
			o:     Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(1, "Error", pythonTrace)), deleting())},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(1), reason: "Error",
			msg: "FAILED: driver exited 1 (Error): ValueError: bad input: column 'id' is empty",
		},
		{
			name: "failed, SIGTERM on preemption by the scheduler (DisruptionTarget)",
			o: Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(143, "Error", "")),
				condition(corev1.DisruptionTarget, corev1.ConditionTrue, "PreemptionByScheduler", "preempted by default-scheduler"))},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(143), reason: "PreemptionByScheduler", infra: true,
			msg: "FAILED: driver exited 143 (PreemptionByScheduler): exit 143 = SIGTERM: the driver pod was stopped from outside (deleted, evicted or preempted), not a failure of the application",
		},
		{
			name: "failed, SIGTERM with a DisruptionTarget condition that is False",
			o: Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(143, "Error", "")),
				condition(corev1.DisruptionTarget, corev1.ConditionFalse, "PreemptionByScheduler", ""))},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(143), reason: "Error",
			msg: "FAILED: driver exited 143 (Error): exit 143 = SIGTERM: the driver process was terminated by SIGTERM",
		},
		{
			name: "failed, evicted, driver killed",
			o: Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(137, "ContainerStatusUnknown", "The container could not be located when the pod was terminated")),
				podReason("Evicted", "The node was low on resource: memory."))},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(137), reason: "Evicted", infra: true,
			msg: "FAILED: driver evicted (Evicted): The node was low on resource: memory.",
		},
		{
			name:  "failed, evicted before any container status",
			o:     Observed{Driver: driverPod(corev1.PodFailed, podReason("Evicted", "The node was low on resource: memory."))},
			state: spark.StateFailing, phase: PhaseFailed, reason: "Evicted", infra: true,
			msg: "FAILED: driver evicted (Evicted): The node was low on resource: memory.",
		},
		{
			name:  "failed, preempted by kubelet for a critical pod",
			o:     Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(143, "Error", "")), podReason("Preempting", "Preempted in order to admit critical pod"))},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(143), reason: "Preempting", infra: true,
			msg: "FAILED: driver preempted (Preempting): Preempted in order to admit critical pod",
		},
		{
			name:  "failed, node lost",
			o:     Observed{Driver: driverPod(corev1.PodFailed, podReason("NodeLost", "Node ip-10-0-0-1 which was running pod pi-driver is unresponsive"))},
			state: spark.StateFailing, phase: PhaseFailed, reason: "NodeLost", infra: true,
			msg: "FAILED: driver's node was lost (NodeLost): Node ip-10-0-0-1 which was running pod pi-driver is unresponsive",
		},
		{
			name:  "failed, graceful node shutdown",
			o:     Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(143, "Error", "")), podReason("Terminated", "Pod was terminated in response to imminent node shutdown."))},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(143), reason: "Terminated", infra: true,
			msg: "FAILED: driver stopped by node shutdown (Terminated): Pod was terminated in response to imminent node shutdown.",
		},
		{
			name:  "failed, activeDeadlineSeconds exceeded is not infrastructure",
			o:     Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(143, "Error", "")), podReason("DeadlineExceeded", "Pod was active on the node longer than the specified deadline"))},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(143), reason: "DeadlineExceeded",
			msg: "FAILED: driver exceeded its deadline (DeadlineExceeded): Pod was active on the node longer than the specified deadline",
		},
		{
			name:  "failed, other pod reason and no container ran",
			o:     Observed{Driver: driverPod(corev1.PodFailed, podReason("OutOfcpu", "Node didn't have enough resource: cpu, requested: 4000, used: 1000, capacity: 4000"))},
			state: spark.StateFailing, phase: PhaseFailed, reason: "OutOfcpu", infra: true,
			msg: "FAILED: driver pod failed (OutOfcpu): Node didn't have enough resource: cpu, requested: 4000, used: 1000, capacity: 4000",
		},
		{
			name:  "failed, other pod reason but the driver exited 1: the exit code decides",
			o:     Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(1, "Error", pythonTrace)), podReason("SomethingElse", "whatever"))},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(1), reason: "Error",
			msg: "FAILED: driver exited 1 (Error): ValueError: bad input: column 'id' is empty",
		},
		{
			name: "failed, init container exited 1",
			o: Observed{Driver: driverPod(corev1.PodFailed,
				initContainer("fetch-deps", exited(22, "Error", "curl: (22) The requested URL returned error: 404\n")),
				ctr(waiting("PodInitializing", "")))},
			state: spark.StateFailing, phase: PhaseFailed, reason: "Error",
			msg: `FAILED: driver pod failed (Error): init container "fetch-deps" exited 22: curl: (22) The requested URL returned error: 404`,
		},
		{
			name:  "failed, with neither exit code nor reason",
			o:     Observed{Driver: driverPod(corev1.PodFailed)},
			state: spark.StateFailing, phase: PhaseFailed, infra: true,
			msg: "FAILED: the driver pod failed before its driver container exited",
		},
		{
			name:  "failed, renamed driver container falls back to the first container",
			o:     Observed{Driver: driverPod(corev1.PodFailed, renamed("main"), ctr(exited(1, "Error", pythonTrace)))},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(1), reason: "Error",
			msg: "FAILED: driver exited 1 (Error): ValueError: bad input: column 'id' is empty",
		},
		{
			name:  "failed, pod without spec: its single container status counts",
			o:     Observed{Driver: driverPod(corev1.PodFailed, ctr(exited(3, "Error", "boom")), specless())},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(3), reason: "Error",
			msg: "FAILED: driver exited 3 (Error): boom",
		},
		{
			name:  "failed, pod without spec, single renamed container status counts",
			o:     Observed{Driver: driverPod(corev1.PodFailed, renamed("main"), ctr(exited(3, "Error", "boom")), specless())},
			state: spark.StateFailing, phase: PhaseFailed, exit: code(3), reason: "Error",
			msg: "FAILED: driver exited 3 (Error): boom",
		},
		{
			name: "failed, the driver reported no status: another container's exit 0 is not the driver's",
			o: Observed{Driver: driverPod(corev1.PodFailed, func(p *corev1.Pod) {
				p.Spec.Containers = append([]corev1.Container{{Name: "log-shipper"}}, p.Spec.Containers...)
				setStatus(p, "log-shipper", exited(0, "Completed", ""))
			})},
			state: spark.StateFailing, phase: PhaseFailed, infra: true,
			msg: "FAILED: the driver pod failed before its driver container exited",
		},

		// Unknown.
		{
			name:  "unknown: node unreachable",
			o:     Observed{Driver: driverPod(corev1.PodUnknown, ctr(running()))},
			state: spark.StateUnknown, phase: PhaseRunning,
			msg: "UNKNOWN: driver pod state unknown (node unreachable); waiting",
		},
		{
			name:  "unknown: a stale terminated status does not end the attempt",
			o:     Observed{Driver: driverPod(corev1.PodUnknown, ctr(exited(1, "Error", "x")))},
			state: spark.StateUnknown, phase: PhaseRunning,
			msg: "UNKNOWN: driver pod state unknown (node unreachable); waiting",
		},
		{
			name:  "a pod phase no Kubernetes has",
			o:     Observed{Driver: driverPod("Hibernating", ctr(running()))},
			state: spark.StateUnknown, phase: PhaseRunning,
			msg: `UNKNOWN: driver pod phase "Hibernating" is not one sparkplug knows; waiting`,
		},

		// Driver pod not seen.
		{
			name:  "missing, within the grace",
			o:     Observed{SubmittedAt: t0, Now: t0.Add(5 * time.Second)},
			state: spark.StateSubmitted, phase: PhasePending,
			msg: "SUBMITTED: waiting for the driver pod to appear",
		},
		{
			name:  "missing, at the end of the grace",
			o:     Observed{SubmittedAt: t0, Now: t0.Add(grace)},
			state: spark.StateSubmitted, phase: PhasePending,
			msg: "SUBMITTED: waiting for the driver pod to appear",
		},
		{
			name:  "missing, after the grace",
			o:     Observed{SubmittedAt: t0, Now: t0.Add(grace + time.Millisecond)},
			state: spark.StateFailing, phase: PhaseFailed, infra: true,
			msg: "FAILED: driver pod not found",
		},
		{
			name:  "missing, submission time unknown: no grace",
			o:     Observed{SubmittedAt: time.Time{}, Now: t0},
			state: spark.StateFailing, phase: PhaseFailed, infra: true,
			msg: "FAILED: driver pod not found",
		},
		{
			name:  "missing, clock behind the submission time",
			o:     Observed{SubmittedAt: t0, Now: t0.Add(-time.Minute)},
			state: spark.StateSubmitted, phase: PhasePending,
			msg: "SUBMITTED: waiting for the driver pod to appear",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			if o.Now.IsZero() {
				o.Now = t0
			}
			if o.SubmittedAt.IsZero() && o.Driver != nil {
				o.SubmittedAt = t0
			}
			o.NotFoundGrace = grace
			a := Assess(o)
			if a.State != tt.state {
				t.Errorf("State = %q, want %q", a.State, tt.state)
			}
			if got := a.Phase(); got != tt.phase {
				t.Errorf("Phase() = %q, want %q", got, tt.phase)
			}
			if got := a.Message(); got != tt.msg {
				t.Errorf("Message() =\n  %q\nwant\n  %q", got, tt.msg)
			}
			if (a.ExitCode == nil) != (tt.exit == nil) || a.ExitCode != nil && *a.ExitCode != *tt.exit {
				t.Errorf("ExitCode = %s, want %s", fmtCode(a.ExitCode), fmtCode(tt.exit))
			}
			if a.Reason != tt.reason {
				t.Errorf("Reason = %q, want %q", a.Reason, tt.reason)
			}
			if a.Waiting != tt.waiting {
				t.Errorf("Waiting = %q, want %q", a.Waiting, tt.waiting)
			}
			if a.Infrastructure != tt.infra {
				t.Errorf("Infrastructure = %v, want %v", a.Infrastructure, tt.infra)
			}
			wantDone := tt.state == spark.StateSucceeding || tt.state == spark.StateFailing
			if a.Done != wantDone || a.Succeeded != (tt.state == spark.StateSucceeding) {
				t.Errorf("Done, Succeeded = %v, %v; want %v, %v", a.Done, a.Succeeded, wantDone, tt.state == spark.StateSucceeding)
			}
		})
	}
}

func fmtCode(c *int32) string {
	if c == nil {
		return "nil"
	}
	return fmt.Sprint(*c)
}
