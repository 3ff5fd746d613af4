package logs

import (
	"errors"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

func TestParseAttempt(t *testing.T) {
	for in, want := range map[string]Attempt{"latest": Latest, "": Latest, "all": AllAttempts, "1": 1, "12": 12} {
		if got, err := ParseAttempt(in); err != nil || got != want {
			t.Errorf("ParseAttempt(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "-1", "first", "1.5"} {
		if _, err := ParseAttempt(in); err == nil || !strings.Contains(err.Error(), "give latest, all, or an attempt's number") {
			t.Errorf("ParseAttempt(%q): %v", in, err)
		}
	}
}

// Only the drivers sparkplug made for the workflow count: labels copied
// onto another pod, or another workflow's driver, never do.
func TestDriversAreSparkplugsOwn(t *testing.T) {
	wf := testWorkflow()
	other := testWorkflow()
	other.Name, other.UID = "other", "0f1e2d3c-0000-4000-8000-000000000002"
	a1, a2, b1 := driverPod(wf, "wf-1", 1), driverPod(wf, "wf-1", 2), driverPod(wf, "wf-2", 1)

	copied := driverPod(wf, "wf-1", 3) // labels and owner copied, a name of its own
	copied.Name = "my-pod"
	notOwned := driverPod(wf, "wf-1", 4) // the right name, owned by no Workflow
	notOwned.OwnerReferences = nil
	ownedByOther := driverPod(wf, "wf-1", 5) // owned by another workflow
	ownedByOther.OwnerReferences[0].UID = other.UID
	otherUID := driverPod(other, "wf-1", 1) // another workflow's driver, its labels set to this uid
	otherUID.Labels[spark.LabelWorkflowUID] = string(wf.UID)
	executor := executorPod(a1, 1)
	noNode := driverPod(wf, "wf-3", 1)
	delete(noNode.Annotations, spark.AnnotationNodeID)

	got := Drivers(wf, []*corev1.Pod{a2, copied, b1, notOwned, ownedByOther, otherUID, executor, noNode, a1})
	want := map[string][]string{"wf-1": {a1.Name, a2.Name}, "wf-2": {b1.Name}}
	gotNames := map[string][]string{}
	for id, ps := range got {
		gotNames[id] = names(ps)
	}
	if diff := cmp.Diff(want, gotNames); diff != "" {
		t.Errorf("drivers (-want +got):\n%s", diff)
	}
}

// Executors are the driver's by app selector and role, owned by it, in
// executor id order.
func TestExecutors(t *testing.T) {
	wf := testWorkflow()
	d, other := driverPod(wf, "wf-1", 1), driverPod(wf, "wf-2", 1)
	e1, e2, e10 := executorPod(d, 1), executorPod(d, 2), executorPod(d, 10)
	forged := executorPod(d, 3) // the labels, but not owned by the driver
	forged.OwnerReferences = nil
	theirs := executorPod(other, 1)
	driverToo := driverPod(wf, "wf-1", 1)
	driverToo.UID = "another"
	tests := []struct {
		name   string
		driver *corev1.Pod
		pods   []*corev1.Pod
		want   []string
	}{
		{"owned, in id order", d, []*corev1.Pod{e10, theirs, e2, forged, driverToo, e1}, []string{e1.Name, e2.Name, e10.Name}},
		{"another driver's", other, []*corev1.Pod{e1, theirs}, []string{theirs.Name}},
		{"a driver without an app id", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: d.UID}}, []*corev1.Pod{e1}, nil},
	}
	for _, tt := range tests {
		if got := names(Executors(tt.driver, tt.pods)); !cmp.Equal(tt.want, got) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestAttempts(t *testing.T) {
	wf := testWorkflow()
	d1, d2, d3 := driverPod(wf, "wf-1", 1), driverPod(wf, "wf-1", 2), driverPod(wf, "wf-1", 3)
	node := func(recorded string, attempt int) Node {
		return Node{ID: "wf-1", Name: "wf.spark", Phase: wfv1.NodeRunning, RecordedDriver: recorded, RecordedAttempt: attempt}
	}
	var gone *GoneError
	var notLaunched *NotLaunchedError
	tests := []struct {
		name    string
		node    Node
		drivers []*corev1.Pod
		a       Attempt
		want    []string
		err     string
		errAs   any
	}{
		{"latest", node(d2.Name, 2), []*corev1.Pod{d1, d2}, Latest, []string{d2.Name}, "", nil},
		{"latest, launched but not reported yet", node(d1.Name, 1), []*corev1.Pod{d1, d2}, Latest, []string{d2.Name}, "", nil},
		{"latest, its driver deleted", node(d3.Name, 3), []*corev1.Pod{d1, d2}, Latest, nil, "the driver " + d3.Name + " of node wf.spark (attempt 3) was deleted: its log is gone", &gone},
		{"latest, no driver left", node(d1.Name, 1), nil, Latest, nil, "History Server", &gone},
		{"all", node(d3.Name, 3), []*corev1.Pod{d1, d2, d3}, AllAttempts, []string{d1.Name, d2.Name, d3.Name}, "", nil},
		{"all, the latest deleted", node(d3.Name, 3), []*corev1.Pod{d1, d2}, AllAttempts, []string{d1.Name, d2.Name}, "(attempt 3) was deleted", &gone},
		{"number", node(d3.Name, 3), []*corev1.Pod{d1, d2, d3}, 2, []string{d2.Name}, "", nil},
		{"number, deleted", node(d3.Name, 3), []*corev1.Pod{d2, d3}, 1, nil, "the driver of node wf.spark (attempt 1) was deleted", &gone},
		{"number, not there", node(d2.Name, 2), []*corev1.Pod{d1, d2}, 5, nil, "node wf.spark has no attempt 5; its attempts: 1, 2", nil},
		{"not launched", node("", 0), nil, Latest, nil, "node wf.spark has no driver yet (node Running); sparkplug logs -f waits for it", &notLaunched},
		{"not launched, every attempt", node("", 0), nil, AllAttempts, nil, "has no driver yet", &notLaunched},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := attempts(tt.node, tt.drivers, tt.a)
			if !cmp.Equal(tt.want, names(got)) {
				t.Errorf("drivers %q, want %q", names(got), tt.want)
			}
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("error %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Errorf("error %v, want %q", err, tt.err)
			case tt.errAs != nil && !errors.As(err, tt.errAs):
				t.Errorf("error %T, want %T", err, tt.errAs)
			}
		})
	}
	withCopies := node(d3.Name, 3)
	withCopies.HistoryUI, withCopies.ArchivedLog = "https://shs/history/spark-3/", "s3://logs/wf/d3/driver.log"
	_, err := attempts(withCopies, []*corev1.Pod{d1}, Latest)
	if err == nil || !strings.Contains(err.Error(), "its archived copy is the node's driver-log artifact, s3://logs/wf/d3/driver.log; the application in the Spark History Server: https://shs/history/spark-3/") {
		t.Errorf("a gone driver whose node says where to read it: %v", err)
	}
	if _, err := attempts(withCopies, []*corev1.Pod{d3}, 2); err == nil || strings.Contains(err.Error(), "s3://") || strings.Contains(err.Error(), "https://") {
		t.Errorf("an earlier attempt gets the latest's copies: %v", err)
	}
	finished := node("", 0)
	finished.Finished, finished.Phase = true, wfv1.NodeFailed
	if _, err := attempts(finished, nil, Latest); err == nil || !strings.Contains(err.Error(), "ended (Failed) without a driver") {
		t.Errorf("a node that ended without a driver: %v", err)
	}
}

// Plan orders the pods node by node, attempt by attempt, each driver
// followed by its executors, with each role's container.
func TestPlan(t *testing.T) {
	wf := testWorkflow()
	a1, a2, b1 := driverPod(wf, "wf-1", 1), driverPod(wf, "wf-1", 2), driverPod(wf, "wf-2", 1)
	pods := []*corev1.Pod{executorPod(a2, 2), executorPod(a1, 1), executorPod(a2, 1), executorPod(b1, 1)}
	nodes := []Node{{ID: "wf-1", Name: "wf.a"}, {ID: "wf-2", Name: "wf.b"}, {ID: "wf-3", Name: "wf.c"}}
	drivers := map[string][]*corev1.Pod{"wf-1": {a1, a2}, "wf-2": {b1}}
	all := func(*corev1.Pod) ([]*corev1.Pod, error) { return pods, nil }
	d, e := "/"+spark.DriverContainerName, "/"+spark.ExecutorContainerName
	tests := []struct {
		name string
		sel  Selection
		want []string
	}{
		{"latest drivers", Selection{}, []string{a2.Name + d, b1.Name + d}},
		{"every attempt", Selection{Attempt: AllAttempts}, []string{a1.Name + d, a2.Name + d, b1.Name + d}},
		{"with executors", Selection{Executors: true}, []string{a2.Name + d, pods[2].Name + e, pods[0].Name + e, b1.Name + d, pods[3].Name + e}},
		{"attempt 1 with executors", Selection{Attempt: 1, Executors: true}, []string{a1.Name + d, pods[1].Name + e, b1.Name + d, pods[3].Name + e}},
		{"a container of one's choosing", Selection{Container: "sidecar", Executors: true}, []string{a2.Name + "/sidecar", pods[2].Name + "/sidecar", pods[0].Name + "/sidecar", b1.Name + "/sidecar", pods[3].Name + "/sidecar"}},
	}
	for _, tt := range tests {
		targets, problems, err := Plan(nodes, drivers, tt.sel, all)
		must(t, err)
		if diff := cmp.Diff(tt.want, targetNames(targets)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
		var nl *NotLaunchedError
		if len(problems) != 1 || !errors.As(problems[0], &nl) || nl.Node != "wf.c" {
			t.Errorf("%s: problems %v, want node wf.c not launched", tt.name, problems)
		}
	}
	targets, _, _ := Plan(nodes[:1], drivers, Selection{Attempt: 1, Executors: true}, all)
	if targets[1].Attempt != 1 || !targets[1].Executor || targets[0].Executor {
		t.Errorf("an executor's target: %+v", targets[1])
	}
	if _, _, err := Plan(nodes, drivers, Selection{Executors: true}, func(*corev1.Pod) ([]*corev1.Pod, error) { return nil, errors.New("refused") }); err == nil {
		t.Error("an executor list's error is lost")
	}
}

func TestNotStarted(t *testing.T) {
	c := spark.DriverContainerName
	pod := func(s corev1.PodStatus, node string) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{NodeName: node}, Status: s}
	}
	restarted := pendingStatus(c, "CrashLoopBackOff")
	restarted.ContainerStatuses[0].LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1}
	terminated := corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: c, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}}
	unschedulable := corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/3 nodes are available:\n insufficient cpu."}}}
	pulling := pendingStatus(c, "ImagePullBackOff")
	pulling.ContainerStatuses[0].State.Waiting.Message = "Back-off pulling image " + strings.Repeat("x", 300)
	tests := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"running", pod(startedStatus(c), "n1"), ""},
		{"terminated", pod(terminated, "n1"), ""},
		{"restarted", pod(restarted, "n1"), ""},
		{"creating", pod(pendingStatus(c, "ContainerCreating"), "n1"), "ContainerCreating"},
		{"another container's status only", pod(startedStatus("other"), "n1"), ""},
		{"unscheduled", pod(corev1.PodStatus{}, ""), "Pending, not scheduled yet"},
		{"unschedulable", pod(unschedulable, ""), "not scheduled: Unschedulable: 0/3 nodes are available: insufficient cpu."},
		{"scheduled, no status yet", pod(corev1.PodStatus{Phase: corev1.PodPending}, "n1"), "Pending"},
	}
	for _, tt := range tests {
		if got := notStarted(tt.pod, c); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := notStarted(pod(pulling, "n1"), c); !strings.HasPrefix(got, "ImagePullBackOff: Back-off pulling image xxx") || len(got) > maxReason+3 {
		t.Errorf("a long message is not cut: %d characters", len(got))
	}
}

func TestHasContainer(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "d", UID: types.UID("u")}, Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init"}},
		Containers:     []corev1.Container{{Name: spark.DriverContainerName}, {Name: "sidecar"}},
	}}
	for _, c := range []string{spark.DriverContainerName, "sidecar", "init"} {
		if err := hasContainer(p, c); err != nil {
			t.Errorf("%s: %v", c, err)
		}
	}
	if err := hasContainer(p, "spark"); err == nil || err.Error() != "pod d has no container spark (-c); its containers: spark-kubernetes-driver, sidecar, init" {
		t.Errorf("a missing container: %v", err)
	}
}
