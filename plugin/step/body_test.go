package step

import (
	"encoding/json"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
)

func TestBodyOf(t *testing.T) {
	plugin := func(v string) *wfv1.Template {
		tmpl := &wfv1.Template{Plugin: &wfv1.Plugin{}}
		tmpl.Plugin.Value = json.RawMessage(v)
		return tmpl
	}
	cases := []struct {
		name    string
		t       *wfv1.Template
		want    string
		ok, err bool
	}{
		{"spark step", plugin(`{"spark":{"image":"x"}}`), `{"image":"x"}`, true, false},
		{"another plugin", plugin(`{"slack":{}}`), "", false, false},
		{"not a plugin", &wfv1.Template{Name: "c"}, "", false, false},
		{"nil", nil, "", false, false},
		{"not an object", plugin(`["spark"]`), "", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, ok, err := BodyOf(tc.t)
			if ok != tc.ok || (err != nil) != tc.err || string(raw) != tc.want {
				t.Fatalf("BodyOf = %s, %v, %v", raw, ok, err)
			}
		})
	}
}
