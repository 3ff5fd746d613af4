package sim

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/e2e/stages"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// A running driver that the driver-exit Stage will end already has its
// last lines, stamped with the time the Stage ends it: a log read just
// after KWOK ended it must not miss them. One that runs until deleted, or
// is evicted, has none.
func TestDriverLogOfARunningDriverHoldsItsPlannedEnd(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	running := func(annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", Annotations: annotations, Labels: map[string]string{spark.LabelAppName: "app"}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: spark.DriverContainerName,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(start)}}}}},
		}
	}
	fails := Fail(2*time.Second, 3, "java.lang.IllegalStateException: no input").Annotations()
	log := DriverLog(running(fails))
	for _, want := range []string{
		"2026-11-29T12:00:02Z stdout F ERROR SparkContext: java.lang.IllegalStateException: no input",
		"2026-11-29T12:00:02Z stdout F INFO ShutdownHookManager: exiting with code 3",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log of a driver that will fail lacks %q:\n%s", want, log)
		}
	}
	if log := DriverLog(running(Succeed(time.Second).Annotations())); !strings.Contains(log, "2026-11-29T12:00:01Z stdout F INFO SparkContext: Successfully stopped SparkContext") {
		t.Errorf("the log of a driver that will succeed lacks its last line:\n%s", log)
	}
	evicted := map[string]string{stages.AnnotationEvict: "true"}
	for k, v := range fails {
		evicted[k] = v
	}
	for name, a := range map[string]map[string]string{"runs until deleted": nil, "evicted": evicted} {
		if log := DriverLog(running(a)); strings.Contains(log, "ShutdownHookManager") || strings.Contains(log, "stopped SparkContext") {
			t.Errorf("a driver that %s has an end in its log:\n%s", name, log)
		}
		if log := DriverLog(running(a)); !strings.Contains(log, "Submitted application: app") {
			t.Errorf("a driver that %s lacks its first lines:\n%s", name, log)
		}
	}
}
