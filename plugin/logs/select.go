package logs

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Attempt selects the attempts of a node whose drivers are printed: one
// number (from 1), Latest or AllAttempts.
type Attempt int

const (
	// Latest is each node's newest attempt.
	Latest Attempt = 0
	// AllAttempts is every attempt of each node, oldest first.
	AllAttempts Attempt = -1
)

// ParseAttempt reads --attempt: latest, all, or a number from 1.
func ParseAttempt(s string) (Attempt, error) {
	switch s {
	case "latest", "":
		return Latest, nil
	case "all":
		return AllAttempts, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("--attempt %q: give latest, all, or an attempt's number (from 1)", s)
	}
	return Attempt(n), nil
}

func (a Attempt) String() string {
	switch a {
	case Latest:
		return "latest"
	case AllAttempts:
		return "all"
	}
	return strconv.Itoa(int(a))
}

// Drivers are the pods among pods that are drivers sparkplug launched for
// a node of wf, by node id, oldest attempt first. Labels alone never make
// a driver (anyone who may label a pod can copy them): the plugin's own
// rule decides, driverpod.OwnDriver (the name sparkplug gives the node's
// attempt, owned by wf).
func Drivers(wf *wfv1.Workflow, pods []*corev1.Pod) map[string][]*corev1.Pod {
	ref := spark.WorkflowRef{Name: wf.Name, Namespace: wf.Namespace, UID: string(wf.UID)}
	out := map[string][]*corev1.Pod{}
	for _, p := range pods {
		node := driverNodeID(p)
		if node == "" || p.Labels[spark.LabelRole] != spark.RoleDriver || !driverpod.OwnDriver(p, ref) {
			continue
		}
		out[node] = append(out[node], p)
	}
	for _, ps := range out {
		sort.SliceStable(ps, func(i, j int) bool { return driverpod.Attempt(ps[i]) < driverpod.Attempt(ps[j]) })
	}
	return out
}

// Executors are the executor pods of driver among pods: spark-role
// executor and the driver's spark-app-selector, as Spark's own allocator
// selects them, and owned by the driver pod (Spark makes it their owner),
// so that a pod with copied labels is not taken for one. They come in
// Spark's executor id order.
func Executors(driver *corev1.Pod, pods []*corev1.Pod) []*corev1.Pod {
	app := driver.Labels[spark.LabelAppSelector]
	if app == "" {
		return nil
	}
	var out []*corev1.Pod
	for _, p := range pods {
		if p.Labels[spark.LabelRole] == spark.RoleExecutor && p.Labels[spark.LabelAppSelector] == app && ownedBy(p, "Pod", string(driver.UID)) {
			out = append(out, p)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, _ := strconv.Atoi(out[i].Labels[spark.LabelExecID])
		b, _ := strconv.Atoi(out[j].Labels[spark.LabelExecID])
		if a != b {
			return a < b
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func ownedBy(p *corev1.Pod, kind, uid string) bool {
	if uid == "" {
		return false
	}
	for _, ref := range p.OwnerReferences {
		if ref.Kind == kind && string(ref.UID) == uid {
			return true
		}
	}
	return false
}

// Selection is which pods of the chosen nodes are printed.
type Selection struct {
	Attempt Attempt
	// Executors also prints the executors of each chosen driver.
	Executors bool
	// Container is the container whose log is printed; empty: Spark's
	// driver container of a driver, its executor container of an executor.
	Container string
}

// Target is one pod whose log is printed.
type Target struct {
	Node      Node
	Pod       *corev1.Pod
	Attempt   int
	Executor  bool
	Container string
}

// what names the pod in messages: "driver x of node wf.step (attempt 2)".
func (t Target) what() string {
	role := "driver"
	if t.Executor {
		role = "executor"
	}
	return fmt.Sprintf("%s %s of node %s (attempt %d)", role, t.Pod.Name, t.Node.Name, t.Attempt)
}

// Plan lists the pods to print for nodes, in order: node by node, a
// node's attempts oldest first, each driver followed by its executors
// (executors gives a driver's candidate executor pods; it is called only
// with sel.Executors). A node with nothing to print has an error instead:
// NotLaunchedError, GoneError, or no such attempt.
func Plan(nodes []Node, drivers map[string][]*corev1.Pod, sel Selection, executors func(driver *corev1.Pod) ([]*corev1.Pod, error)) (targets []Target, problems []error, err error) {
	for _, n := range nodes {
		chosen, problem := attempts(n, drivers[n.ID], sel.Attempt)
		if problem != nil {
			problems = append(problems, problem)
		}
		for _, d := range chosen {
			t := Target{Node: n, Pod: d, Attempt: driverpod.Attempt(d), Container: sel.Container}
			if t.Container == "" {
				t.Container = spark.DriverContainerName
			}
			targets = append(targets, t)
			if !sel.Executors {
				continue
			}
			pods, err := executors(d)
			if err != nil {
				return nil, nil, err
			}
			for _, e := range Executors(d, pods) {
				t := Target{Node: n, Pod: e, Attempt: driverpod.Attempt(d), Executor: true, Container: sel.Container}
				if t.Container == "" {
					t.Container = spark.ExecutorContainerName
				}
				targets = append(targets, t)
			}
		}
	}
	return targets, problems, nil
}

// attempts chooses the drivers of node n (oldest attempt first) that a
// selects. The newest attempt is the newest of the drivers and of the one
// sparkplug reported: a reported driver that is no longer there was
// deleted, and its log with it.
func attempts(n Node, drivers []*corev1.Pod, a Attempt) ([]*corev1.Pod, error) {
	newest := 0
	if len(drivers) > 0 {
		newest = driverpod.Attempt(drivers[len(drivers)-1])
	}
	gone := func(attempt int) error {
		e := &GoneError{Node: n.Name, Attempt: attempt, Why: "was deleted"}
		if attempt == n.RecordedAttempt {
			e.Pod, e.HistoryUI, e.ArchivedLog = n.RecordedDriver, n.HistoryUI, n.ArchivedLog
		}
		return e
	}
	switch {
	case newest == 0 && n.RecordedAttempt == 0:
		return nil, &NotLaunchedError{Node: n.Name, Phase: n.Phase, Finished: n.Finished}
	case a == Latest:
		if n.RecordedAttempt > newest {
			return nil, gone(n.RecordedAttempt)
		}
		return drivers[len(drivers)-1:], nil
	case a == AllAttempts:
		if n.RecordedAttempt > newest {
			return drivers, gone(n.RecordedAttempt)
		}
		return drivers, nil
	}
	for _, d := range drivers {
		if driverpod.Attempt(d) == int(a) {
			return []*corev1.Pod{d}, nil
		}
	}
	if int(a) <= max(newest, n.RecordedAttempt) {
		return nil, gone(int(a))
	}
	var have []string
	for _, d := range drivers {
		have = append(have, strconv.Itoa(driverpod.Attempt(d)))
	}
	if len(have) == 0 {
		have = append(have, "none left")
	}
	return nil, fmt.Errorf("node %s has no attempt %d; its attempts: %s", n.Name, a, strings.Join(have, ", "))
}

// NotLaunchedError: the node has no driver, yet or at all.
type NotLaunchedError struct {
	Node     string
	Phase    wfv1.NodePhase
	Finished bool
}

func (e *NotLaunchedError) Error() string {
	if e.Finished {
		return fmt.Sprintf("node %s ended (%s) without a driver, so without a log: argo get shows its message", e.Node, e.Phase)
	}
	phase := string(e.Phase)
	if phase == "" {
		phase = "not started"
	}
	return fmt.Sprintf("node %s has no driver yet (node %s); sparkplug logs -f waits for it", e.Node, phase)
}

// GoneError: the log of a driver or executor is gone, with its pod or its
// Kubernetes node. The kubelet keeps a container's log only while the pod
// is on it.
type GoneError struct {
	// Pod is the pod's name, empty when no record names it.
	Pod, Node string
	Attempt   int
	// Why: "was deleted", "ran on node n, which is gone", ...
	Why string
	// Executor: the pod is an executor, not the driver.
	Executor bool
	// ArchivedLog and HistoryUI are where the node says the attempt can
	// still be read: its archived log, its History Server page.
	ArchivedLog, HistoryUI string
}

func (e *GoneError) Error() string {
	pod := "the driver"
	if e.Executor {
		pod = "the executor"
	}
	if e.Pod != "" {
		pod += " " + e.Pod
	}
	msg := fmt.Sprintf("%s of node %s (attempt %d) %s: its log is gone (the kubelet keeps a log only while its pod exists)", pod, e.Node, e.Attempt, e.Why)
	if e.ArchivedLog != "" {
		msg += "; its archived copy is the node's driver-log artifact, " + e.ArchivedLog
	} else {
		msg += "; keep driver logs with log archiving (sparkplug.archiveLogs: the node's driver-log artifact) or a cluster log collector"
	}
	if e.HistoryUI != "" {
		return msg + "; the application in the Spark History Server: " + e.HistoryUI
	}
	return msg + "; the Spark History Server shows the application when it wrote event logs (spark.eventLog.enabled)"
}

// PendingError: the container has not started, so there is no log yet.
type PendingError struct {
	What, Reason string
}

func (e *PendingError) Error() string {
	return fmt.Sprintf("%s has not started yet (%s): no log yet; sparkplug logs -f waits for it", e.What, e.Reason)
}

// notStarted says why container of p has not started yet, or "" when it
// has (running, terminated, or restarted: the kubelet has a log).
func notStarted(p *corev1.Pod, container string) string {
	for _, statuses := range [][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses} {
		for _, cs := range statuses {
			if cs.Name != container {
				continue
			}
			if cs.State.Running != nil || cs.State.Terminated != nil || cs.LastTerminationState.Terminated != nil {
				return ""
			}
			if w := cs.State.Waiting; w != nil && w.Reason != "" {
				return oneLine(w.Reason, w.Message)
			}
			return "waiting"
		}
	}
	if p.Status.Phase != corev1.PodPending && p.Status.Phase != "" {
		return "" // the kubelet reported no container status: let it answer
	}
	if p.Spec.NodeName == "" {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
				return oneLine("not scheduled: "+c.Reason, c.Message)
			}
		}
		return "Pending, not scheduled yet"
	}
	return "Pending"
}

// maxReason keeps a status message from making a long error line.
const maxReason = 200

func oneLine(reason, message string) string {
	s := reason
	if message != "" {
		s += ": " + strings.Join(strings.Fields(message), " ")
	}
	if len(s) > maxReason {
		s = s[:maxReason] + "..."
	}
	return s
}

// hasContainer checks that the pod has the container whose log is asked
// for, and names the ones it has when not.
func hasContainer(p *corev1.Pod, container string) error {
	var names []string
	for _, cs := range [][]corev1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for _, c := range cs {
			if c.Name == container {
				return nil
			}
			names = append(names, c.Name)
		}
	}
	return fmt.Errorf("pod %s has no container %s (-c); its containers: %s", p.Name, container, strings.Join(names, ", "))
}

// restarted says whether container of p has had an instance before the
// current one, whose log --previous prints.
func restarted(p *corev1.Pod, container string) bool {
	for _, statuses := range [][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses} {
		for _, cs := range statuses {
			if cs.Name == container {
				return cs.RestartCount > 0 || cs.LastTerminationState.Terminated != nil
			}
		}
	}
	return false
}

// NoPreviousError: --previous of a container that has not restarted.
type NoPreviousError struct {
	What, Container string
}

func (e *NoPreviousError) Error() string {
	msg := fmt.Sprintf("%s: container %s has no previous instance, it has not restarted", e.What, e.Container)
	if e.Container == spark.DriverContainerName || e.Container == spark.ExecutorContainerName {
		// Drivers and executors run with restartPolicy Never.
		msg += "; Spark's pods never restart their containers: an earlier run of the node is an earlier attempt (--attempt all)"
	}
	return msg
}
