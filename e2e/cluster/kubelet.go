package cluster

// What a kubelet writes, for tests whose cluster has none: a pod's status
// and its containers' states.

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// SetPodStatus changes the status of pod namespace/name as a kubelet
// would (its status subresource), reading it again and retrying on a
// conflict: the code under test may write the pod's metadata meanwhile.
func (c *Cluster) SetPodStatus(ctx context.Context, namespace, name string, change func(*corev1.PodStatus)) error {
	pods := c.Client.CoreV1().Pods(namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(&pod.Status)
		_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	})
}

// Running is a pod whose one container, name, runs since now, ready or
// not.
func Running(name string, ready bool) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: name, Ready: ready,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}}}
}

// Terminated is a pod in phase whose one container, name, ended with
// code, reason and message, having run from started to finished.
func Terminated(name string, phase corev1.PodPhase, code int32, reason, message string, started, finished time.Time) corev1.PodStatus {
	return corev1.PodStatus{Phase: phase, ContainerStatuses: []corev1.ContainerStatus{{Name: name, State: corev1.ContainerState{
		Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, Message: message,
			StartedAt: metav1.NewTime(started), FinishedAt: metav1.NewTime(finished)}}}}}
}

// Waiting is a Pending pod whose one container, name, waits for reason.
func Waiting(name, reason, message string) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: name,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}}}
}
