package state

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Observed is everything Assess looks at: one attempt's driver pod, its
// executor pods and the clock.
type Observed struct {
	// Driver is the driver pod; nil when it has not been seen (yet).
	Driver *corev1.Pod
	// Executors are the pods with spark-role=executor of this driver.
	Executors []*corev1.Pod
	// Expected is the number of executors asked for (executor.instances);
	// 0 when unknown or under dynamic allocation.
	Expected int32
	// Dynamic is dynamic allocation: the message shows "N executors"
	// without a target.
	Dynamic bool
	// SubmittedAt is when sparkplug created the driver; the zero time
	// (unknown) gives a missing driver no grace.
	SubmittedAt time.Time
	// Now is the time of the observation.
	Now time.Time
	// NotFoundGrace is how long after SubmittedAt a missing driver is
	// tolerated (cache lag) before the attempt fails "driver pod not found".
	NotFoundGrace time.Duration
	// ProgressInterval is the step of the elapsed time a RUNNING message
	// shows (see Elapsed); 0 shows none.
	ProgressInterval time.Duration
}

// ExecutorCounts counts executor pods by what they are doing.
type ExecutorCounts struct {
	Running, Pending, Succeeded, Failed int
	// Unknown counts pods in phase Unknown (node unreachable) or in a phase
	// this package does not know.
	Unknown int
	Total   int
	// Target is the number the message counts against ("2/3"); 0 shows no
	// target (dynamic allocation, or not known).
	Target int32
}

// Assessment is the state of one attempt and what a person needs to know
// about it. Message and Phase derive from it alone.
type Assessment struct {
	// State is one of the Spark operator's driver-derived states:
	// SUBMITTED, RUNNING, SUCCEEDING, FAILING or UNKNOWN.
	State spark.State
	// Done: this attempt is over (SUCCEEDING or FAILING).
	Done bool
	// Succeeded: the attempt is over and the driver exited 0.
	Succeeded bool
	// ExitCode is the driver container's exit code once it terminated.
	ExitCode *int32
	// Reason is the container or pod reason: Error, OOMKilled, Evicted,
	// DeadlineExceeded, Preempting, ImagePullBackOff, Unschedulable, ...
	Reason string
	// Detail is the one line a person needs: the last exception line of the
	// termination message, the waiting message, or what happened.
	Detail string
	// Waiting is, while SUBMITTED, why the driver has not started: its
	// container's (or a blocking init container's) waiting reason such as
	// ContainerCreating or ImagePullBackOff, else the scheduling reason such
	// as Unschedulable. See IsFatalWaiting.
	Waiting string
	// Infrastructure: the attempt ended for reasons outside the application
	// (evicted, node lost or shut down, preempted, deleted by someone else,
	// not found).
	Infrastructure bool
	// Executors counts the executor pods.
	Executors ExecutorCounts
	// Elapsed is, while RUNNING, how long the driver container has run,
	// rounded down to Observed.ProgressInterval (Elapsed); 0 shows none.
	Elapsed time.Duration
}

// Kubernetes words this package reads; the API has no constants for them.
const (
	reasonPodInitializing = "PodInitializing"
	reasonOOMKilled       = "OOMKilled"
)

// podFailure describes a pod-level reason (pod.status.reason) that ended the
// driver whatever its container's exit code says, except 0.
type podFailure struct {
	head           string // what happened, for the message
	infrastructure bool
}

// podFailures are the pod reasons kubelet and the node lifecycle controller
// set when they stop a pod. A failed pod with any other reason and no driver
// exit code is an infrastructure failure too ("driver pod failed").
var podFailures = map[string]podFailure{
	"Evicted":      {head: "driver evicted", infrastructure: true},
	"Preempting":   {head: "driver preempted", infrastructure: true},
	"NodeLost":     {head: "driver's node was lost", infrastructure: true},
	"Terminated":   {head: "driver stopped by node shutdown", infrastructure: true},
	"NodeShutdown": {head: "driver rejected by a node shutting down", infrastructure: true},
	// The pod's activeDeadlineSeconds ran out: a time limit the run was
	// given, not a fault of the cluster, so retrying it as an
	// infrastructure failure would only time out again.
	"DeadlineExceeded": {head: "driver exceeded its deadline", infrastructure: false},
}

// Details that are fixed sentences.
const (
	detailAppearing      = "waiting for the driver pod to appear"
	detailNotFound       = "driver pod not found"
	detailUnscheduled    = "waiting for the driver pod to be scheduled"
	detailStarting       = "waiting for the driver container to start"
	detailDeleting       = "driver pod is being deleted"
	detailNodeUnknown    = "driver pod state unknown (node unreachable)"
	detailOOMKilled      = "driver was OOMKilled: raise spark.driver.memory or memoryOverhead"
	detailStoppedOutside = "the driver pod was stopped from outside (deleted, evicted or preempted), not a failure of the application"
	detailNoExitCode     = "the driver pod failed before its driver container exited"
)

// maxDetail bounds Detail, in runes.
const maxDetail = 300

// Assess returns the state of the attempt o describes. It follows the Spark
// operator's GetDriverState table, extended with the not-found grace, pod
// reasons, deletion and signals; see the package tests for every case.
func Assess(o Observed) Assessment {
	a := assessDriver(o)
	a.Executors = countExecutors(o.Executors)
	if !o.Dynamic && o.Expected > 0 {
		a.Executors.Target = o.Expected
	}
	a.Done = a.State == spark.StateSucceeding || a.State == spark.StateFailing
	a.Succeeded = a.State == spark.StateSucceeding
	return a
}

func assessDriver(o Observed) Assessment {
	pod := o.Driver
	if pod == nil {
		return missing(o)
	}
	driver := containerStatus(pod, spark.DriverContainerName)
	switch phase := pod.Status.Phase; phase {
	case corev1.PodPending, "":
		// The API server sets Pending on create; "" is an object that has
		// not been through it yet (the one sparkplug just built), so it is
		// not started rather than unknown.
		return pending(pod, driver)
	case corev1.PodRunning:
		if t := terminated(driver); t != nil {
			// The driver exited and a sidecar keeps the pod up.
			return ended(pod, t)
		}
		if driver != nil && driver.State.Waiting != nil {
			// A sidecar runs, the driver container has not started
			// (e.g. its image cannot be pulled): not running yet.
			return pending(pod, driver)
		}
		a := Assessment{State: spark.StateRunning, Elapsed: Elapsed(o.Now, startedAt(driver), o.ProgressInterval)}
		if pod.DeletionTimestamp != nil {
			a.Detail = detailDeleting
		}
		return a
	case corev1.PodSucceeded:
		a := Assessment{State: spark.StateSucceeding}
		if t := terminated(driver); t != nil {
			a.ExitCode, a.Reason = exitCode(t), oneLine(t.Reason)
		}
		return a
	case corev1.PodFailed:
		return ended(pod, terminated(driver))
	case corev1.PodUnknown:
		return Assessment{State: spark.StateUnknown, Detail: detailNodeUnknown}
	default:
		return Assessment{State: spark.StateUnknown, Detail: oneLine(fmt.Sprintf("driver pod phase %q is not one sparkplug knows", phase))}
	}
}

// missing is the driver pod not seen: a cache that lags behind the create
// gets NotFoundGrace, then the attempt fails.
func missing(o Observed) Assessment {
	if o.Now.Sub(o.SubmittedAt) <= o.NotFoundGrace {
		return Assessment{State: spark.StateSubmitted, Detail: detailAppearing}
	}
	return Assessment{State: spark.StateFailing, Infrastructure: true, Detail: detailNotFound}
}

// pending is a driver that has not started: why, in the order a person would
// act on it.
func pending(pod *corev1.Pod, driver *corev1.ContainerStatus) Assessment {
	a := Assessment{State: spark.StateSubmitted}
	if pod.DeletionTimestamp != nil {
		a.Detail = detailDeleting
		return a
	}
	var w *corev1.ContainerStateWaiting
	if driver != nil {
		w = driver.State.Waiting
	}
	if w != nil && w.Reason != "" && w.Reason != reasonPodInitializing {
		a.Waiting, a.Detail = oneLine(w.Reason), oneLine(w.Message)
		return a
	}
	// The driver waits for its init containers: say which one blocks it.
	for _, s := range pod.Status.InitContainerStatuses {
		if iw := s.State.Waiting; iw != nil && iw.Reason != "" && iw.Reason != reasonPodInitializing {
			a.Waiting = oneLine(iw.Reason)
			a.Detail = oneLine(colon(fmt.Sprintf("init container %q", s.Name), iw.Message))
			return a
		}
	}
	if w != nil && w.Reason != "" {
		a.Waiting, a.Detail = oneLine(w.Reason), oneLine(w.Message)
		return a
	}
	scheduled := podCondition(pod, corev1.PodScheduled)
	switch {
	case scheduled != nil && scheduled.Status == corev1.ConditionFalse && scheduled.Reason != "":
		a.Waiting, a.Detail = oneLine(scheduled.Reason), oneLine(scheduled.Message)
	case scheduled != nil && scheduled.Status == corev1.ConditionTrue:
		a.Detail = detailStarting
	default:
		a.Detail = detailUnscheduled
	}
	return a
}

// ended is a driver whose attempt is over: its container terminated (t), or
// its pod failed (t may then be nil).
func ended(pod *corev1.Pod, t *corev1.ContainerStateTerminated) Assessment {
	a := Assessment{State: spark.StateFailing}
	if t != nil {
		a.ExitCode, a.Reason = exitCode(t), oneLine(t.Reason)
		if t.ExitCode == 0 {
			// The driver's exit code is the application's result, whatever
			// else happened to the pod afterwards.
			a.State = spark.StateSucceeding
			return a
		}
	}
	if r := pod.Status.Reason; r != "" {
		if f, known := podFailures[r]; known || t == nil {
			a.Reason, a.Detail = oneLine(r), oneLine(pod.Status.Message)
			a.Infrastructure = !known || f.infrastructure
			return a
		}
	}
	if t == nil {
		// Failed with neither a driver exit code nor a pod reason.
		if s, it := failedInit(pod); it != nil {
			a.Reason = oneLine(it.Reason)
			a.Detail = oneLine(colon(fmt.Sprintf("init container %q exited %d", s.Name, it.ExitCode), LastMeaningfulLine(it.Message)))
			return a
		}
		a.Infrastructure = true
		a.Detail = detailNoExitCode
		return a
	}
	disruption := podCondition(pod, corev1.DisruptionTarget)
	if disruption != nil && disruption.Status != corev1.ConditionTrue {
		disruption = nil
	}
	sig, signalled := signals[t.ExitCode]
	switch {
	case t.Reason == reasonOOMKilled:
		a.Detail = detailOOMKilled
	case signalled && (pod.DeletionTimestamp != nil || disruption != nil):
		// Stopping a pod sends SIGTERM, then SIGKILL after the grace period.
		a.Infrastructure = true
		a.Detail = fmt.Sprintf("exit %d = %s: %s", t.ExitCode, sig.name, detailStoppedOutside)
		if disruption != nil && disruption.Reason != "" {
			a.Reason = oneLine(disruption.Reason) // PreemptionByScheduler, EvictionByEvictionAPI, ...
		}
	case signalled:
		a.Detail = fmt.Sprintf("exit %d = %s: %s", t.ExitCode, sig.name, sig.detail)
	default:
		a.Detail = LastMeaningfulLine(t.Message)
	}
	return a
}

// signals are the exit codes that report a signal, not the application's
// own exit: its name and what it means when nothing stopped the pod.
var signals = map[int32]struct{ name, detail string }{
	spark.ExitCodeSIGTERM: {"SIGTERM", "the driver process was terminated by SIGTERM"},
	spark.ExitCodeSIGKILL: {"SIGKILL", "the driver process was killed (out of memory on the node, or not stopped within its grace period)"},
}

// countExecutors counts executor pods: by their executor container once it
// terminated (non-zero is failed, even in a pod a sidecar keeps Running),
// else by pod phase.
func countExecutors(pods []*corev1.Pod) ExecutorCounts {
	var c ExecutorCounts
	for _, p := range pods {
		if p == nil {
			continue
		}
		c.Total++
		t := terminated(containerStatus(p, spark.ExecutorContainerName))
		switch {
		case p.Status.Phase == corev1.PodUnknown:
			c.Unknown++ // its container states are stale
		case t != nil && t.ExitCode != 0:
			c.Failed++
		case t != nil:
			c.Succeeded++
		case p.Status.Phase == corev1.PodPending || p.Status.Phase == "":
			c.Pending++
		case p.Status.Phase == corev1.PodRunning:
			c.Running++
		case p.Status.Phase == corev1.PodSucceeded:
			c.Succeeded++
		case p.Status.Phase == corev1.PodFailed:
			c.Failed++
		default:
			c.Unknown++
		}
	}
	return c
}

// containerStatus returns the status of the container called name; when the
// pod has no container of that name (a pod template renamed it), the status
// of its first container. nil when there is none yet.
func containerStatus(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	if s := statusNamed(pod, name); s != nil {
		return s
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return nil // the container exists and reports no status yet
		}
	}
	if len(pod.Spec.Containers) > 0 {
		return statusNamed(pod, pod.Spec.Containers[0].Name)
	}
	// No spec (a stripped cache object): kubelet sorts statuses by name,
	// so "first" is only meaningful for a single container.
	if len(pod.Status.ContainerStatuses) == 1 {
		return &pod.Status.ContainerStatuses[0]
	}
	return nil
}

func statusNamed(pod *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == name {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	return nil
}

func terminated(s *corev1.ContainerStatus) *corev1.ContainerStateTerminated {
	if s == nil {
		return nil
	}
	return s.State.Terminated
}

// failedInit returns the first init container that exited non-zero.
func failedInit(pod *corev1.Pod) (*corev1.ContainerStatus, *corev1.ContainerStateTerminated) {
	for i := range pod.Status.InitContainerStatuses {
		s := &pod.Status.InitContainerStatuses[i]
		if t := s.State.Terminated; t != nil && t.ExitCode != 0 {
			return s, t
		}
	}
	return nil, nil
}

func podCondition(pod *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == typ {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// startedAt is when a running container started; the zero time when that
// is not known.
func startedAt(s *corev1.ContainerStatus) time.Time {
	if s == nil || s.State.Running == nil {
		return time.Time{}
	}
	return s.State.Running.StartedAt.Time
}

func exitCode(t *corev1.ContainerStateTerminated) *int32 {
	c := t.ExitCode
	return &c
}

// oneLine joins s onto one line and bounds it to maxDetail runes. Every
// word read from a pod goes through it (or LastMeaningfulLine) before it
// is a Reason, Waiting or Detail: kubelet's reasons are one CamelCase
// word, but nothing in the API holds them to it.
func oneLine(s string) string {
	return truncate(strings.Join(strings.Fields(s), " "))
}

func truncate(s string) string {
	r := []rune(s)
	if len(r) <= maxDetail {
		return s
	}
	return string(r[:maxDetail-3]) + "..."
}

// colon joins a head and a detail as "head: detail", leaving out whichever
// is empty.
func colon(head, detail string) string {
	switch {
	case detail == "":
		return head
	case head == "":
		return detail
	default:
		return head + ": " + detail
	}
}
