package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/policy"
)

// A step queued with Kueue by its template's label shows the Workload
// the plugin creates first, in the queue the label names; the same step
// without the label shows none.
func TestRenderShowsAQueuedStepsWorkload(t *testing.T) {
	wf := func(labels string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: q}\nspec:\n  entrypoint: pi\n  templates:\n  - name: pi\n" +
			labels + "    plugin:\n      spark:\n" + indent(body, "        ")
	}
	for _, tc := range []struct {
		name, labels, want string
	}{
		{"queued", "    metadata:\n      labels: {kueue.x-k8s.io/queue-name: lq-spark}\n", "queueName: lq-spark"},
		{"not queued", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps, err := Render([]byte(wf(tc.labels)), newBuilder(t), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := Write(&out, steps); err != nil {
				t.Fatal(err)
			}
			docs := strings.Split(out.String(), "\n---\n")
			first := docs[0]
			switch {
			case tc.want == "" && strings.Contains(out.String(), "kind: Workload"):
				t.Errorf("a step without the queue label shows a Workload:\n%s", first)
			case tc.want != "" && (!strings.Contains(first, "kind: Workload") || !strings.Contains(first, tc.want) || !strings.Contains(first, "name: q-")):
				t.Errorf("the first object is not the Workload in %s:\n%s", tc.want, first)
			}
		})
	}
}

// render refuses a queued step naming a WorkloadPriorityClass
// --allowed-workload-priority-classes does not list, as the plugin does.
func TestRenderChecksTheWorkloadPriorityClass(t *testing.T) {
	wf := func(class string) string {
		return "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: q}\nspec:\n  entrypoint: pi\n  templates:\n  - name: pi\n" +
			"    metadata:\n      labels: {kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/priority-class: " + class + "}\n" +
			"    plugin:\n      spark:\n" + indent(body, "        ")
	}
	o := Options{Policy: policy.Policy{WorkloadPriorityClasses: []string{"batch"}}}
	for class, want := range map[string]string{
		"urgent": "WorkloadPriorityClass urgent is not allowed: name one of batch, or none (policy rule allowed-workload-priority-classes)",
		"batch":  "",
	} {
		steps, err := Render([]byte(wf(class)), newBuilder(t), o)
		if err != nil {
			t.Fatal(err)
		}
		switch got := steps[0].Err; {
		case want == "" && got != nil:
			t.Errorf("%s refused: %v", class, got)
		case want != "" && (got == nil || !strings.Contains(got.Error(), want)):
			t.Errorf("%s: error %v, want %q", class, got, want)
		}
	}
}
