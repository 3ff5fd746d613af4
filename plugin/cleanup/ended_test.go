package cleanup

import (
	"errors"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// pod is a driver (or executor) pod created at t0, changed by opts as a
// kubelet would change it.
func pod(role string, opts ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "jobs", UID: "uid-p",
		CreationTimestamp: metav1.NewTime(t0),
		Labels:            map[string]string{spark.LabelRole: role, spark.LabelAttempt: "1"}}}
	for _, o := range opts {
		o(p)
	}
	return p
}

func driverRunning(after time.Duration) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: spark.DriverContainerName,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0.Add(after))}}}}
	}
}

func driverExited(code int32, started, finished time.Duration, ph corev1.PodPhase) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Phase = ph
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: spark.DriverContainerName,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code,
				StartedAt: metav1.NewTime(t0.Add(started)), FinishedAt: metav1.NewTime(t0.Add(finished))}}}}
	}
}

// The one rule, over what each mode reads of a Workflow: the whole
// object (a sidecar's cache, the controller's, a read by Argo's client)
// or its metadata (the monitor's cache and reads).
func TestEnded(t *testing.T) {
	deleting := &metav1.Time{Time: t0}
	completed := map[string]string{spark.ArgoLabelCompleted: "true"}
	cases := []struct {
		name string
		w    metav1.Object
		want bool
	}{
		{"phase Succeeded", &wfv1.Workflow{Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowSucceeded}}, true},
		{"phase Failed", &wfv1.Workflow{Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowFailed}}, true},
		{"phase Error", &wfv1.Workflow{Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowError}}, true},
		{"labelled completed (a Workflow's metadata)", &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Labels: completed}}, true},
		{"labelled completed, phase not read yet", &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Labels: completed}}, true},
		{"being deleted, running", &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: deleting}, Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning}}, true},
		{"being deleted (metadata)", &metav1.ObjectMeta{DeletionTimestamp: deleting}, true},
		{"running", &wfv1.Workflow{Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning}}, false},
		{"pending, no phase yet", &wfv1.Workflow{}, false},
		{"running (metadata)", &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{spark.ArgoLabelCompleted: "false"}}}, false},
		{"retried: running again, label dropped", &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{spark.ArgoLabelCompleted: "false"}},
			Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning}}, false},
		{"stopped, exit handlers still running: ending, not ended", &wfv1.Workflow{Spec: wfv1.WorkflowSpec{Shutdown: wfv1.ShutdownStrategyStop},
			Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning}}, false},
	}
	for _, tc := range cases {
		if got := Ended(tc.w); got != tc.want {
			t.Errorf("%s: Ended %v, want %v", tc.name, got, tc.want)
		}
	}
	stopped := &wfv1.Workflow{Spec: wfv1.WorkflowSpec{Shutdown: wfv1.ShutdownStrategyTerminate}, Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning}}
	if !Ending(stopped) || Ending(&wfv1.Workflow{Status: wfv1.WorkflowStatus{Phase: wfv1.WorkflowRunning}}) {
		t.Error("Ending: want a terminated workflow ending, a running one not")
	}
}

func TestStateOf(t *testing.T) {
	notFound := apierrors.NewNotFound(schema.GroupResource{Group: "argoproj.io", Resource: "workflows"}, "w")
	wf := func(uid string, ended bool) metav1.Object {
		w := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{UID: k8stypes.UID("uid-" + uid)}}
		if ended {
			w.Status.Phase = wfv1.WorkflowSucceeded
		}
		return w
	}
	cases := []struct {
		name    string
		w       metav1.Object
		err     error
		want    State
		wantErr bool
	}{
		{"not found", nil, notFound, Gone, false},
		{"another workflow took its name", wf("other", true), nil, Gone, false},
		{"ended", wf("w", true), nil, EndedState, false},
		{"running", wf("w", false), nil, Running, false},
		{"cannot tell", nil, errors.New("connection refused"), Running, true},
	}
	for _, tc := range cases {
		got, err := StateOf(tc.w, tc.err, "uid-w")
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%s: StateOf %v, %v; want %v, error %v", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestVerdict(t *testing.T) {
	now := t0.Add(2 * time.Hour)
	ttl := func(s string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Annotations = map[string]string{spark.AnnotationTTLSeconds: s} }
	}
	deleting := func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: now} }
	running := driverRunning(time.Minute)
	ended := driverExited(0, time.Minute, time.Hour, corev1.PodSucceeded)
	cases := []struct {
		name string
		pod  *corev1.Pod
		wf   State
		want string
	}{
		{"a running workflow's drivers are its sidecar's", pod(spark.RoleDriver, running), Running, ""},
		{"even expired ones", pod(spark.RoleDriver, ended, ttl("0")), Running, ""},
		{"running, workflow ended", pod(spark.RoleDriver, running), EndedState, ReasonWorkflowEnded},
		{"pending, workflow ended", pod(spark.RoleDriver), EndedState, ReasonWorkflowEnded},
		{"finished, workflow ended, no ttl: kept with the workflow", pod(spark.RoleDriver, ended), EndedState, ""},
		{"finished, workflow ended, ttl not run out", pod(spark.RoleDriver, ended, ttl("7200")), EndedState, ""},
		{"finished, workflow ended, ttl run out", pod(spark.RoleDriver, ended, ttl("60")), EndedState, ReasonExpired},
		{"finished, workflow gone, ttl run out", pod(spark.RoleDriver, ended, ttl("60")), Gone, ReasonExpired},
		{"finished, workflow gone", pod(spark.RoleDriver, ended), Gone, ReasonWorkflowDeleted},
		{"running, workflow gone", pod(spark.RoleDriver, running), Gone, ReasonWorkflowDeleted},
		{"being deleted already", pod(spark.RoleDriver, running, deleting), Gone, ""},
	}
	for _, tc := range cases {
		if got := Verdict(tc.pod, tc.wf, now); got != tc.want {
			t.Errorf("%s: verdict %q, want %q", tc.name, got, tc.want)
		}
	}
}
