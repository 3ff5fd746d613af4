package drivertest

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// T0 is when the drivers are created.
var T0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// Opt changes a driver pod.
type Opt func(*corev1.Pod)

// Name is the name of the driver of attempt of node's run.
func Name(node string, attempt int) string { return fmt.Sprintf("%s-a%d-driver", node, attempt) }

// AppID is the application id of attempt of node's run.
func AppID(node string, attempt int) string { return fmt.Sprintf("spark-%s-%d", node, attempt) }

// Driver is the driver of attempt of node's run in namespace jobs,
// created at T0, Pending until an option says otherwise.
func Driver(node string, attempt int, opts ...Opt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: Name(node, attempt), Namespace: "jobs", UID: types.UID("uid-" + node + "-" + strconv.Itoa(attempt)),
			CreationTimestamp: metav1.NewTime(T0),
			Labels: map[string]string{spark.LabelRole: spark.RoleDriver, spark.LabelAttempt: strconv.Itoa(attempt),
				spark.LabelAppSelector: AppID(node, attempt)},
			Annotations: map[string]string{spark.AnnotationNodeID: node},
		},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: spark.DriverContainerName}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func containerState(p *corev1.Pod, s corev1.ContainerState) {
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: spark.DriverContainerName, State: s}}
}

// Running: the driver container runs since T0.
func Running() Opt {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		containerState(p, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(T0)}})
	}
}

// Exited: the driver container ended with code at T0+1m.
func Exited(code int32, reason string) Opt {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		if code == 0 {
			p.Status.Phase = corev1.PodSucceeded
		}
		containerState(p, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, FinishedAt: metav1.NewTime(T0.Add(time.Minute))}})
	}
}

// WaitingOn: the driver container waits on reason, saying message.
func WaitingOn(reason, message string) Opt {
	return func(p *corev1.Pod) {
		containerState(p, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}})
	}
}

// Evicted: the kubelet evicted the driver.
func Evicted() Opt {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.Reason, p.Status.Message = "Evicted", "The node was low on resource: memory."
	}
}

// Annotated: the driver carries annotation k=v.
func Annotated(k, v string) Opt {
	return func(p *corev1.Pod) { p.Annotations[k] = v }
}

// Ghost is the stand-in for a driver a node's entry names and the
// cluster lost: its name, attempt and application id as recorded, no
// uid, no creation time, no status.
func Ghost(node string, attempt int, appID string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: Name(node, attempt), Namespace: "jobs",
		Labels:      map[string]string{spark.LabelAttempt: strconv.Itoa(attempt), spark.LabelAppSelector: appID},
		Annotations: map[string]string{spark.AnnotationNodeID: node},
	}}
}

// Tomb is the tombstone of the driver of attempt of node's run, which
// sparkplug stopped at stoppedAt for limit, and the stand-in built from
// it.
func Tomb(node string, attempt int, limit string, stoppedAt time.Time) (*corev1.ConfigMap, *corev1.Pod) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: node + "-conf", Namespace: "jobs", CreationTimestamp: metav1.NewTime(stoppedAt),
		Labels: map[string]string{spark.LabelAttempt: strconv.Itoa(attempt)},
		Annotations: map[string]string{
			spark.AnnotationNodeID: node, spark.AnnotationDriver: Name(node, attempt),
			spark.AnnotationStopped: limit, spark.AnnotationStoppedAt: stoppedAt.UTC().Format(time.RFC3339),
			spark.AnnotationStoppedReason: limit, spark.AnnotationStoppedDetail: "stopped for " + limit,
		},
	}}
	stand := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: cm.Annotations[spark.AnnotationDriver], Namespace: cm.Namespace,
		Labels: cm.Labels, Annotations: cm.Annotations, CreationTimestamp: cm.CreationTimestamp}}
	return cm, stand
}
