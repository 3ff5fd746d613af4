package policy

import (
	"errors"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/kueue"
)

func TestCheckPriorityClass(t *testing.T) {
	allow := Policy{WorkloadPriorityClasses: []string{"batch", "low"}}
	labels := func(class string) map[string]string { return map[string]string{kueue.LabelPriorityClass: class} }
	for _, tc := range []struct {
		name   string
		p      Policy
		queue  string
		labels map[string]string
		want   string // the message; "": allowed
	}{
		{"another class", allow, "lq", labels("urgent"),
			"refused by the plugin's policy: metadata.labels[kueue.x-k8s.io/priority-class]: WorkloadPriorityClass urgent is not allowed: name one of batch, low, or none (policy rule allowed-workload-priority-classes)"},
		{"an allowed class", allow, "lq", labels("low"), ""},
		{"no class", allow, "lq", nil, ""},
		{"an empty class", allow, "lq", labels(""), ""},
		{"not queued: the label does nothing", allow, "", labels("urgent"), ""},
		{"no list: any class", Default(), "lq", labels("urgent"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPriorityClass(tc.p, tc.queue, tc.labels)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Fatalf("got %v\nwant %s", err, tc.want)
			}
			var pe *Error
			if err != nil && !errors.As(err, &pe) {
				t.Errorf("%T, want *Error", err)
			}
		})
	}
}
