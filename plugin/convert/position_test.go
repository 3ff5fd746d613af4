package convert

import (
	"reflect"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// Each finding is at its field's own line and column in the input file,
// across documents and List items: a key with dots (a label) and a
// list item are found; a missing field is reported at its parent.
func TestFindingsAtTheirLineAndColumn(t *testing.T) {
	input := `# a comment, then a skipped object
apiVersion: v1
kind: ConfigMap
---
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: pi
  labels:
    app.kubernetes.io/name: 7
spec:
  type: Scala
  image: spark:3.5.3
  mainClass: A
  mainApplicationFile: local:///a.jar
  volumes:
    - name: v
      hostPth: {path: /x}
  driver:
    memroy: 1g
---
apiVersion: v1
kind: List
items:
  - apiVersion: sparkoperator.k8s.io/v1beta2
    kind: ScheduledSparkApplication
    metadata: {name: s}
    spec:
      schedule: "0 25 * * *"
      concurrencyPolicy: Forbid
`
	type at struct {
		line, column int
		fails        bool
	}
	want := map[string]at{
		"kind":                                   {3, 1, false},
		"metadata.labels.app.kubernetes.io/name": {10, 5, false},
		"spec.driver.memroy":                     {20, 5, true},
		"spec.schedule":                          {29, 7, true},
		// No template: at spec, the field that has it.
		"spec.template": {28, 5, true},
	}
	got := map[string]at{}
	var volumes []Finding
	for _, r := range Convert([]byte(input), Options{}) {
		for _, f := range r.Findings {
			if strings.HasPrefix(f.Path, "spec.volumes") {
				volumes = append(volumes, f)
			}
			got[f.Path] = at{f.Line, f.Column, f.Fails}
		}
	}
	for path, w := range want {
		if g, ok := got[path]; !ok || g != w {
			t.Errorf("%s: at %d:%d (fails %v), want %d:%d (fails %v); found %v", path, g.line, g.column, g.fails, w.line, w.column, w.fails, ok)
		}
	}
	// spec.volumes[0]...: within the list's first item (line 17 or 18).
	if len(volumes) == 0 {
		t.Fatal("no finding of spec.volumes")
	}
	for _, f := range volumes {
		if f.Line != 17 && f.Line != 18 {
			t.Errorf("%s at %d:%d, want the volume's lines 17-18", f, f.Line, f.Column)
		}
	}
}

func TestNodeAtPaths(t *testing.T) {
	// b before b.c: the longest key that fits wins, not the first.
	n := parseNode([]byte("a:\n  b: {x: [10, 20]}\n  b.c:\n    d: 1\n  m: {key.with.dots: v}\n"))
	for _, tc := range []struct {
		path         string
		line, column int
	}{
		{"", 1, 1},
		{"a", 1, 1},
		{"a.b.c", 3, 3},
		{"a.b.c.d", 4, 5},
		{"a.b.x[1]", 2, 15},
		{"a.b.x[5]", 2, 7},           // no such item: the list's key
		{"a.m[key.with.dots]", 5, 7}, // field paths' form of a key with dots
		{"a.nothing.here", 1, 1},     // the deepest field there is
	} {
		got := nodeAt(n, tc.path)
		if got == nil || got.Line != tc.line || got.Column != tc.column {
			t.Errorf("nodeAt(%q) = %v, want %d:%d", tc.path, got, tc.line, tc.column)
		}
	}
}

// The comments before an object and in its spark body are written with
// it; the body's fields keep the input's order and quoting.
func TestMarshalResultKeepsComments(t *testing.T) {
	input := `# The nightly report.
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata:
  name: report # not kept: metadata is written anew
spec:
  # Scala, in cluster mode.
  type: Scala
  mode: cluster
  image: "spark:3.5.3"
  mainClass: A
  mainApplicationFile: local:///a.jar
  driver:
    cores: 1 # one is enough
`
	results := Convert([]byte(input), Options{})
	if len(results) != 1 || results[0].Object == nil {
		t.Fatalf("results %+v", results)
	}
	out, err := MarshalResult(results[0])
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{
		"# The nightly report.\napiVersion: argoproj.io/v1alpha1\n",
		"          # Scala, in cluster mode.\n          type: Scala\n          mode: cluster\n          image: \"spark:3.5.3\"\n",
		"            cores: 1 # one is enough\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	// The same object as Marshal writes.
	plain, err := Marshal(results[0].Object)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := sigsyaml.Unmarshal(out, &a); err != nil {
		t.Fatal(err)
	}
	if err := sigsyaml.Unmarshal(plain, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("MarshalResult wrote another object:\n%s\nMarshal:\n%s", out, plain)
	}
}
