package step

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/templates"
)

const sparkPi = `{"spark":{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar"}}`

func tmpl(plugin, timeout string) *wfv1.Template {
	return &wfv1.Template{Name: "pi", Timeout: timeout, Plugin: &wfv1.Plugin{Object: wfv1.Object{Value: json.RawMessage(plugin)}}}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name      string
		t         *wfv1.Template
		ok        bool
		malformed bool
		wantErr   string
	}{
		{"a spark step", tmpl(sparkPi, "1h"), true, false, ""},
		{"another plugin's template", tmpl(`{"slack":{"text":"hi"}}`, ""), false, false, ""},
		{"a container template", &wfv1.Template{Name: "c", Container: nil}, false, false, ""},
		{"a plugin value that is no object", tmpl(`["spark"]`, ""), true, true, "template.plugin is not an object"},
		{"an invalid body names the field", tmpl(`{"spark":{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","driver":{"memory":"lots"}}}`, ""), true, false, "spark.driver.memory"},
		{"a timeout that is no duration", tmpl(sparkPi, "soon"), true, false, `template timeout "soon"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, ok, err := Parse(tc.t, spec.PluginDefaults{})
			if ok != tc.ok || errors.Is(err, ErrMalformed) != tc.malformed {
				t.Fatalf("ok=%v err=%v; want ok=%v malformed=%v", ok, err, tc.ok, tc.malformed)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.ok {
				if st != nil {
					t.Fatalf("a step %+v for a template that is none", st)
				}
				return
			}
			key, _ := Key(tc.t)
			if st.Key != key || st.Timeout != time.Hour || st.Body.MainClass == nil || *st.Body.MainClass != "Pi" {
				t.Fatalf("step key=%s timeout=%s body=%+v; want key %s, 1h, mainClass Pi", st.Key, st.Timeout, st.Body, key)
			}
		})
	}
}

// Build names the run as objects.NamesFor does and carries the step's key.
func TestBuildNamesTheRun(t *testing.T) {
	st, _, err := Parse(tmpl(sparkPi, ""), spec.PluginDefaults{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := objects.New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	wf := spark.WorkflowRef{Name: "nightly", Namespace: "jobs", UID: "u-1"}
	objs, err := st.Build(b, wf, "nightly-123", 2)
	if err != nil {
		t.Fatal(err)
	}
	want := objects.NamesFor(objects.Run{Workflow: wf, NodeID: "nightly-123", Attempt: 2})
	if objs.Driver.Name != want.DriverPod || objs.Driver.Namespace != "jobs" || objs.Driver.Labels[spark.LabelTemplate] != st.Key || objs.Driver.Labels[spark.LabelAttempt] != "2" {
		t.Fatalf("driver %s/%s labels %v; want %s/jobs with template %s, attempt 2", objs.Driver.Namespace, objs.Driver.Name, objs.Driver.Labels, want.DriverPod, st.Key)
	}
}
