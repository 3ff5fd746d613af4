package execute

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

func TestExpired(t *testing.T) {
	end := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := func(ttl string, terminated bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{spark.LabelRole: spark.RoleDriver},
			Annotations: map[string]string{},
		}}
		if ttl != "" {
			p.Annotations[spark.AnnotationTTLSeconds] = ttl
		}
		cs := corev1.ContainerStatus{Name: spark.DriverContainerName}
		if terminated {
			cs.State.Terminated = &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(end)}
			p.Status.Phase = corev1.PodSucceeded
		} else {
			cs.State.Running = &corev1.ContainerStateRunning{}
			p.Status.Phase = corev1.PodRunning
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
		return p
	}
	cases := []struct {
		name string
		pod  *corev1.Pod
		now  time.Time
		want bool
	}{
		{"finished past its ttl", pod("60", true), end.Add(time.Minute), true},
		{"finished within its ttl", pod("60", true), end.Add(59 * time.Second), false},
		{"ttl 0 expires at once", pod("0", true), end, true},
		{"running drivers never expire", pod("0", false), end.Add(time.Hour), false},
		{"no ttl: lives as long as the workflow", pod("", true), end.Add(1000 * time.Hour), false},
		{"garbage ttl is ignored", pod("soon", true), end.Add(time.Hour), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := expired(tc.pod, tc.now); got != tc.want {
				t.Fatalf("expired = %v, want %v", got, tc.want)
			}
		})
	}
}
