package submit

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// A pod under a run's name is that run's only with the run's identity
// labels and annotations; the others do not count.
func TestNotThisRun(t *testing.T) {
	want := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "d",
		Labels:      map[string]string{spark.LabelWorkflowUID: "u", spark.LabelNode: "n", spark.LabelAttempt: "1", spark.LabelManagedBy: "sparkplug", "team": "a"},
		Annotations: map[string]string{spark.AnnotationNodeID: "wf-1", spark.AnnotationIncarnation: "2024-01-01T00:00:00Z"},
	}}
	tests := []struct {
		name   string
		mutate func(p *corev1.Pod)
		why    string
	}{
		{"the run's", func(*corev1.Pod) {}, ""},
		{"other labels of its own", func(p *corev1.Pod) { p.Labels["team"] = "b"; p.Labels["spark-app-selector"] = "x" }, ""},
		{"another workflow", func(p *corev1.Pod) { p.Labels[spark.LabelWorkflowUID] = "v" }, `pod d has label sparkplug.io/workflow-uid="v", not this run's "u"`},
		{"no labels", func(p *corev1.Pod) { p.Labels = nil }, `has label sparkplug.io/workflow-uid="", not this run's "u"`},
		{"another attempt", func(p *corev1.Pod) { p.Labels[spark.LabelAttempt] = "2" }, "sparkplug.io/attempt"},
		{"another incarnation", func(p *corev1.Pod) { p.Annotations[spark.AnnotationIncarnation] = "x" }, "has annotation sparkplug.io/incarnation"},
		{"a long value, shortened", func(p *corev1.Pod) { p.Annotations[spark.AnnotationNodeID] = strings.Repeat("x", 10000) }, "bytes more)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := want.DeepCopy()
			tt.mutate(p)
			got := NotThisRun("pod", p, want)
			if (tt.why == "") != (got == "") || !strings.Contains(got, tt.why) || len(got) > 300 {
				t.Errorf("NotThisRun = %q, want %q", got, tt.why)
			}
		})
	}
}
