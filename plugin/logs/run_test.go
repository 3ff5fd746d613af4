package logs

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// These tests run Run against client-go's and Argo's fake clientsets: the
// fake answers every pod log with "fake logs" (no newline), which is
// enough to see which pods are printed, how, and with which options. The
// integration tests (cmd/sparkplug) run it against a real API server.

func fakes(wf *wfv1.Workflow, pods ...*corev1.Pod) (*kfake.Clientset, *wffake.Clientset) {
	var objs []runtime.Object
	for _, p := range pods {
		objs = append(objs, p)
	}
	return kfake.NewSimpleClientset(objs...), wffake.NewSimpleClientset(wf)
}

// logRequests are the pods whose logs were asked for, with the options.
func logRequests(kube *kfake.Clientset) map[string]*corev1.PodLogOptions {
	out := map[string]*corev1.PodLogOptions{}
	for _, a := range kube.Actions() {
		if a.GetSubresource() == "log" {
			g := a.(k8stesting.GenericAction)
			out[g.GetValue().(*corev1.PodLogOptions).Container] = g.GetValue().(*corev1.PodLogOptions)
		}
	}
	return out
}

func twoNodes() (*wfv1.Workflow, *corev1.Pod, *corev1.Pod) {
	wf := testWorkflow()
	addNode(wf, "wf-2", "wf.late", "late", "spark", wfv1.NodeTypePlugin, wfv1.NodeRunning, 9)
	addNode(wf, "wf-1", "wf.early", "early", "spark", wfv1.NodeTypePlugin, wfv1.NodeSucceeded, 1)
	return wf, driverPod(wf, "wf-1", 1), driverPod(wf, "wf-2", 1)
}

func run(t *testing.T, kube *kfake.Clientset, wfc *wffake.Clientset, o Options) (string, string, error) {
	t.Helper()
	var out, notices bytes.Buffer
	o.Namespace, o.Workflow, o.Notices = "ns", "wf", &notices
	if o.Tail == 0 {
		o.Tail = -1
	}
	err := Run(context.Background(), kube, wfc, o, &out)
	return out.String(), notices.String(), err
}

// One pod: its log as it is, no prefix.
func TestRunOneNode(t *testing.T) {
	wf, early, late := twoNodes()
	kube, wfc := fakes(wf, early, late)
	out, _, err := run(t, kube, wfc, Options{Node: "late"})
	if err != nil || out != "fake logs" {
		t.Fatalf("%q, %v", out, err)
	}
	opts := logRequests(kube)[spark.DriverContainerName]
	if opts == nil || opts.Follow || opts.TailLines != nil || opts.SinceSeconds != nil {
		t.Errorf("log options %+v", opts)
	}
	var lists []string
	for _, a := range kube.Actions() {
		if l, ok := a.(k8stesting.ListAction); ok {
			lists = append(lists, l.GetListRestrictions().Labels.String())
		}
	}
	if want := "spark-role=driver,sparkplug.io/workflow-uid=" + wfUID; len(lists) != 1 || lists[0] != want {
		t.Errorf("lists %q, want one of %q", lists, want)
	}
}

// Every Spark node, in the order they started, each line after its pod's
// name; a pod with a driver's labels that sparkplug did not make is not
// printed.
func TestRunEveryNodePrefixesLines(t *testing.T) {
	wf, early, late := twoNodes()
	forged := driverPod(wf, "wf-1", 2)
	forged.Name = "forged"
	kube, wfc := fakes(wf, late, forged, early)
	out, _, err := run(t, kube, wfc, Options{Tail: 10, Timestamps: true, Selection: Selection{Attempt: AllAttempts}})
	want := early.Name + ": fake logs\n" + late.Name + ": fake logs\n"
	if err != nil || out != want {
		t.Fatalf("%q, %v; want %q", out, err, want)
	}
	opts := logRequests(kube)[spark.DriverContainerName]
	if opts.TailLines == nil || *opts.TailLines != 10 || !opts.Timestamps {
		t.Errorf("log options %+v", opts)
	}
}

func TestRunExecutors(t *testing.T) {
	wf, early, _ := twoNodes()
	e1, e2 := executorPod(early, 1), executorPod(early, 2)
	kube, wfc := fakes(wf, early, e2, e1)
	out, _, err := run(t, kube, wfc, Options{Node: "wf-1", Selection: Selection{Executors: true}})
	want := early.Name + ": fake logs\n" + e1.Name + ": fake logs\n" + e2.Name + ": fake logs\n"
	if err != nil || out != want {
		t.Fatalf("%q, %v; want %q", out, err, want)
	}
	if logRequests(kube)[spark.ExecutorContainerName] == nil {
		t.Error("the executors' container was not asked for")
	}
}

// Errors are one line that says what is wrong and what to do.
func TestRunErrors(t *testing.T) {
	wf, early, late := twoNodes()
	setOutputs(wf, "wf-1", early.Name, 1)
	pending := late.DeepCopy()
	pending.Status = pendingStatus(spark.DriverContainerName, "ContainerCreating")
	var gone *GoneError
	var pend *PendingError
	tests := []struct {
		name  string
		wf    *wfv1.Workflow
		pods  []*corev1.Pod
		o     Options
		want  string
		errAs any
	}{
		{"no workflow", otherWorkflow(), nil, Options{}, "workflow wf not found in namespace ns (is it in another? -n NAMESPACE)", nil},
		{"no such node", wf, []*corev1.Pod{early, late}, Options{Node: "mid"}, `workflow wf has no node "mid"; its Spark nodes: wf.early, wf.late`, nil},
		{"no Spark nodes", testWorkflow(), nil, Options{}, "workflow wf has no Spark nodes yet (phase Running)", nil},
		{"driver deleted", wf, []*corev1.Pod{late}, Options{Node: "early"}, "the driver " + early.Name + " of node wf.early (attempt 1) was deleted: its log is gone", &gone},
		{"driver pending", wf, []*corev1.Pod{early, pending}, Options{Node: "late"}, "driver " + late.Name + " of node wf.late (attempt 1) has not started yet (ContainerCreating): no log yet; sparkplug logs -f waits for it", &pend},
		{"no such container", wf, []*corev1.Pod{early}, Options{Node: "early", Selection: Selection{Container: "spark"}}, "pod " + early.Name + " has no container spark (-c)", nil},
		{"no such attempt", wf, []*corev1.Pod{early}, Options{Node: "early", Selection: Selection{Attempt: 2}}, "node wf.early has no attempt 2; its attempts: 1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kube, wfc := fakes(tt.wf, tt.pods...)
			_, _, err := run(t, kube, wfc, tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line with %q", err, tt.want)
			}
			if tt.errAs != nil && !errors.As(err, tt.errAs) {
				t.Errorf("error %T, want %T", err, tt.errAs)
			}
		})
	}
}

// What can be printed is, and the error names the rest; a node that has
// not launched its driver yet is only a notice then.
func TestRunPrintsWhatItCan(t *testing.T) {
	wf, early, late := twoNodes()
	late.Status = pendingStatus(spark.DriverContainerName, "ContainerCreating")
	addNode(wf, "wf-3", "wf.next", "next", "spark", wfv1.NodeTypePlugin, wfv1.NodePending, -1)
	kube, wfc := fakes(wf, early, late)
	out, notices, err := run(t, kube, wfc, Options{})
	if out != early.Name+": fake logs\n" {
		t.Errorf("output %q", out)
	}
	if err == nil || !strings.Contains(err.Error(), late.Name) || strings.Contains(err.Error(), "wf.next") {
		t.Errorf("error %v, want the pending driver's only", err)
	}
	if !strings.Contains(notices, "node wf.next has no driver yet") {
		t.Errorf("notices %q", notices)
	}
	// Two failures: one line naming both.
	late2 := early.DeepCopy()
	late2.Status = pendingStatus(spark.DriverContainerName, "ImagePullBackOff")
	kube, wfc = fakes(wf, late2, late)
	_, _, err = run(t, kube, wfc, Options{})
	var pe *ProblemsError
	if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), "2 logs could not be printed: ") || !strings.Contains(err.Error(), "(ImagePullBackOff)") {
		t.Errorf("two failures: %v", err)
	}
}

// A refusal says which permissions sparkplug logs needs.
func TestRunForbidden(t *testing.T) {
	wf, early, _ := twoNodes()
	kube, wfc := fakes(wf, early)
	kube.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, forbidden()
	})
	_, _, err := run(t, kube, wfc, Options{})
	if err == nil || !strings.Contains(err.Error(), "needs, in namespace ns: get workflows, list and watch pods, get pods/log") {
		t.Errorf("%v", err)
	}
}

func otherWorkflow() *wfv1.Workflow {
	wf := testWorkflow()
	wf.Name, wf.UID = "other", "0f1e2d3c-0000-4000-8000-000000000002"
	return wf
}

func forbidden() error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New(`User "alice" cannot list resource "pods"`))
}

// The API server's refusals of a log, told apart.
func TestExplain(t *testing.T) {
	wf, early, _ := twoNodes()
	early.Spec.NodeName = "node-1"
	node := Node{ID: "wf-1", Name: "wf.early", RecordedAttempt: 1, HistoryUI: "https://shs/history/spark-1/"}
	driver := Target{Node: node, Pod: early, Attempt: 1, Container: spark.DriverContainerName}
	exec := Target{Node: node, Pod: executorPod(early, 1), Attempt: 1, Executor: true, Container: spark.ExecutorContainerName}
	exec.Pod.Spec.NodeName = "node-1"
	pods := schema.GroupResource{Resource: "pods"}
	tests := []struct {
		name string
		t    Target
		err  error
		want string
	}{
		{"the pod deleted", driver, apierrors.NewNotFound(pods, early.Name), "the driver " + early.Name + " of node wf.early (attempt 1) was deleted: its log is gone"},
		{"its node gone, as the API server says it", driver, apierrors.NewNotFound(pods, "node-1"), "ran on node node-1, which is gone: its log is gone"},
		{"its node gone, as it might say it", driver, apierrors.NewNotFound(schema.GroupResource{Resource: "nodes"}, "node-1"), "ran on node node-1, which is gone"},
		{"the History Server's page of the latest attempt", driver, apierrors.NewNotFound(pods, early.Name), "; the application in the Spark History Server: https://shs/history/spark-1/"},
		{"an executor deleted", exec, apierrors.NewNotFound(pods, exec.Pod.Name), "the executor " + exec.Pod.Name + " of node wf.early (attempt 1) was deleted"},
		{"not started", driver, apierrors.NewBadRequest(`container "spark-kubernetes-driver" in pod "d" is waiting to start: ContainerCreating`), "driver " + early.Name + " of node wf.early (attempt 1) has not started yet (ContainerCreating)"},
		{"removed from the kubelet", driver, apierrors.NewInternalError(errors.New("unable to retrieve container logs for containerd://abc")), "is no longer on its node's kubelet (its container was removed): its log is gone"},
		{"forbidden", driver, forbidden(), "sparkplug logs needs, in namespace ns: get workflows, list and watch pods, get pods/log"},
		{"anything else", driver, apierrors.NewTimeoutError("slow", 1), "log of driver " + early.Name + " of node wf.early (attempt 1): "},
	}
	for _, tt := range tests {
		if got := explain(tt.err, tt.t, wf.Namespace); !strings.Contains(got.Error(), tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := explain(apierrors.NewNotFound(pods, exec.Pod.Name), exec, "ns"); strings.Contains(got.Error(), "History Server: https") {
		t.Errorf("an executor gets its driver's History Server page: %v", got)
	}
}

// --previous asks for the log of the container's previous instance when
// it restarted, and says there is none when it has not, without asking.
func TestRunPrevious(t *testing.T) {
	wf, early, late := twoNodes()
	late.Status.ContainerStatuses[0].RestartCount = 1
	late.Status.ContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}
	kube, wfc := fakes(wf, early, late)
	out, _, err := run(t, kube, wfc, Options{Node: "late", Previous: true})
	if err != nil || out != "fake logs" {
		t.Fatalf("%q, %v", out, err)
	}
	if opts := logRequests(kube)[spark.DriverContainerName]; opts == nil || !opts.Previous {
		t.Errorf("log options %+v, want Previous", opts)
	}
	kube, wfc = fakes(wf, early, late)
	_, _, err = run(t, kube, wfc, Options{Node: "early", Previous: true})
	var none *NoPreviousError
	if !errors.As(err, &none) || !strings.Contains(err.Error(), "container "+spark.DriverContainerName+" has no previous instance, it has not restarted; Spark's pods never restart") {
		t.Errorf("a driver that has not restarted: %v", err)
	}
	if len(logRequests(kube)) != 0 {
		t.Errorf("a log was asked for: %v", logRequests(kube))
	}
	if _, _, err := run(t, kube, wfc, Options{Node: "late", Previous: true, Follow: true}); err == nil {
		t.Error("--previous with -f: no error")
	}
}
