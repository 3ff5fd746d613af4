package convert

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/golden"
)

// goldenOptions are the options an input is converted with, by name;
// inputs not listed use the zero Options.
var goldenOptions = map[string]Options{
	"keep-names":      {KeepNames: true},
	"service-account": {ServiceAccount: "spark-workflows"},
}

// renderGolden is what the converter makes of an input: its findings as
// comments, then every object written, as one multi-document YAML file.
func renderGolden(t *testing.T, results []Result) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# Written by go test ./plugin/convert/ -run Golden -update: do not edit.\n#\n# Findings:\n")
	n := 0
	for _, r := range results {
		for _, f := range r.Findings {
			mark := ""
			if f.Fails {
				mark = "FAILS "
			}
			fmt.Fprintf(&b, "#   %s%s: %s\n", mark, describeAt(r, f), f)
			n++
		}
	}
	if n == 0 {
		b.WriteString("#   none\n")
	}
	for _, r := range results {
		if r.Object == nil {
			continue
		}
		out, err := MarshalResult(r)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "---\n# from %s\n%s", describe(r), out)
	}
	return b.String()
}

// describeAt names a finding's place: its line and column when known,
// else its object's line; then item, kind and name.
func describeAt(r Result, f Finding) string {
	if f.Line == 0 {
		return describe(r)
	}
	at := r
	at.Line = f.Line
	return strings.Replace(describe(at), fmt.Sprintf("line %d", f.Line), fmt.Sprintf("line %d:%d", f.Line, f.Column), 1)
}

// describe names an input object: line, item, kind and name.
func describe(r Result) string {
	where := fmt.Sprintf("line %d", r.Line)
	if r.Item >= 0 {
		where += fmt.Sprintf(" items[%d]", r.Item)
	}
	if r.Kind == "" {
		return where
	}
	name := r.Name
	if r.Namespace != "" {
		name = r.Namespace + "/" + name
	}
	return fmt.Sprintf("%s %s %s", where, r.Kind, name)
}

func goldenInputs(t *testing.T) []string {
	t.Helper()
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.input.yaml"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs in testdata: %v", err)
	}
	return inputs
}

func TestGolden(t *testing.T) {
	for _, in := range goldenInputs(t) {
		name := strings.TrimSuffix(filepath.Base(in), ".input.yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got := renderGolden(t, Convert(data, goldenOptions[name]))
			golden.Compare(t, filepath.Join("testdata", name+".golden.yaml"), got)
		})
	}
}

// Every body written for the testdata inputs is the input's spec, and
// every object is within Argo's limits.
func TestGoldenBodiesAreTheSpecs(t *testing.T) {
	for _, in := range goldenInputs(t) {
		t.Run(filepath.Base(in), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			inputs := map[[2]int]map[string]any{}
			for _, r := range Convert(data, goldenOptions[strings.TrimSuffix(filepath.Base(in), ".input.yaml")]) {
				if r.Object == nil {
					continue
				}
				if inputs[[2]int{r.Document, r.Item}] != nil {
					t.Fatalf("two results for document %d item %d", r.Document, r.Item)
				}
				obj := inputObject(t, data, r)
				inputs[[2]int{r.Document, r.Item}] = obj
				spec, _ := obj["spec"].(map[string]any)
				var want any = spec
				if r.Kind == KindScheduledSparkApplication {
					want = spec["template"]
				}
				if want == nil {
					want = map[string]any{}
				}
				wantJSON, _ := json.Marshal(want)
				if meta, _ := obj["metadata"].(map[string]any); r.Kind == KindSparkApplication && meta["name"] != nil {
					wantJSON = withAppNameJSON(t, wantJSON, meta["name"].(string))
				}
				if diff := sameJSON(t, wantJSON, pluginBody(t, r.Object)); diff != "" {
					t.Errorf("%s: body differs from the input (-input +body):\n%s", describe(r), diff)
				}
				if n := r.Object.GetName(); len(n) > MaxWorkflowName || (r.Kind == KindScheduledSparkApplication && len(n) > MaxCronWorkflowName) {
					t.Errorf("%s: name %q is longer than Argo allows", describe(r), n)
				}
			}
		})
	}
}
