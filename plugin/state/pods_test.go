package state

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Builders for the pods the tests observe: a pod is a phase plus options.

type podOpt func(*corev1.Pod)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// driverPod is a driver pod in phase with a spark-kubernetes-driver
// container that reports no status until an option gives it one.
func driverPod(phase corev1.PodPhase, opts ...podOpt) *corev1.Pod {
	return pod(spark.DriverContainerName, phase, opts...)
}

func executorPod(phase corev1.PodPhase, opts ...podOpt) *corev1.Pod {
	return pod(spark.ExecutorContainerName, phase, opts...)
}

func pod(container string, phase corev1.PodPhase, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pi-driver", Namespace: "jobs"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: container}}},
		Status:     corev1.PodStatus{Phase: phase},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// ctr sets the state of the pod's first container (the driver or executor).
func ctr(s corev1.ContainerState) podOpt {
	return func(p *corev1.Pod) { setStatus(p, p.Spec.Containers[0].Name, s) }
}

// sidecar adds a running sidecar container that keeps the pod up.
func sidecar() podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "istio-proxy"})
		setStatus(p, "istio-proxy", running())
	}
}

// renamed gives the pod's only container another name, as a pod template can.
func renamed(name string) podOpt {
	return func(p *corev1.Pod) { p.Spec.Containers[0].Name = name }
}

// specless drops the spec, as a cache transform that strips it would.
func specless() podOpt {
	return func(p *corev1.Pod) { p.Spec = corev1.PodSpec{} }
}

func initContainer(name string, s corev1.ContainerState) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: name})
		p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, corev1.ContainerStatus{Name: name, State: s})
	}
}

func deleting() podOpt {
	return func(p *corev1.Pod) {
		ts := metav1.NewTime(t0)
		p.DeletionTimestamp = &ts
	}
}

func podReason(reason, message string) podOpt {
	return func(p *corev1.Pod) { p.Status.Reason, p.Status.Message = reason, message }
}

func condition(typ corev1.PodConditionType, status corev1.ConditionStatus, reason, message string) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: typ, Status: status, Reason: reason, Message: message})
	}
}

func setStatus(p *corev1.Pod, name string, s corev1.ContainerState) {
	p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: name, State: s})
}

func waiting(reason, message string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}
}

func running() corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}
}

func exited(code int32, reason, message string) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: reason, Message: message}}
}

func pods(ps ...*corev1.Pod) []*corev1.Pod { return ps }

func repeat(n int, p *corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = p
	}
	return out
}

func code(c int32) *int32 { return &c }
