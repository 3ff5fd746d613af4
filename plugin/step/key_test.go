package step

import (
	"encoding/json"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"

	"github.com/sparkplug-io/sparkplug/plugin/identity"
)

func templateOf(t *testing.T, s string) *wfv1.Template {
	t.Helper()
	var tmpl wfv1.Template
	if err := json.Unmarshal([]byte(s), &tmpl); err != nil {
		t.Fatal(err)
	}
	return &tmpl
}

func TestKeyIgnoresEncoding(t *testing.T) {
	a := templateOf(t, `{"name":"pi","plugin":{"spark":{"image":"spark:3.5","mainClass":"Pi"}}}`)
	b := templateOf(t, `{ "plugin" : { "spark" : { "mainClass" : "Pi", "image" : "spark:3.5" } }, "name" : "pi" }`)
	ka, err := Key(a)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := Key(b)
	if err != nil {
		t.Fatal(err)
	}
	if ka != kb {
		t.Fatalf("same template, different keys: %s vs %s", ka, kb)
	}
	if len(ka) != identity.KeyLength {
		t.Fatalf("key %q has %d characters, want %d", ka, len(ka), identity.KeyLength)
	}
}

func TestKeyDistinguishesTemplates(t *testing.T) {
	a := templateOf(t, `{"name":"pi","plugin":{"spark":{"arguments":["1"]}}}`)
	b := templateOf(t, `{"name":"pi","plugin":{"spark":{"arguments":["2"]}}}`)
	ka, _ := Key(a)
	kb, _ := Key(b)
	if ka == kb {
		t.Fatalf("different templates share key %s", ka)
	}
}

func TestKeySurvivesArgoRoundTrip(t *testing.T) {
	// The agent decodes the template from the TaskSet and re-encodes it.
	orig := templateOf(t, `{"name":"pi","inputs":{"parameters":[{"name":"n","value":"3"}]},"plugin":{"spark":{"arguments":["{{inputs.parameters.n}}"]}},"timeout":"1h"}`)
	raw, err := json.Marshal(orig)
	if err != nil {
		t.Fatal(err)
	}
	again := templateOf(t, string(raw))
	k1, _ := Key(orig)
	k2, _ := Key(again)
	if k1 != k2 {
		t.Fatalf("round trip changed the key: %s vs %s", k1, k2)
	}
}

func TestKeyRejectsNil(t *testing.T) {
	if _, err := Key(nil); err == nil {
		t.Fatal("Key(nil) returned no error")
	}
}
