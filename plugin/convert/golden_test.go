package convert

import (
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
	"keep-names": {KeepNames: true},
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
			fmt.Fprintf(&b, "#   %s: %s\n", describe(r), f)
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
		out, err := Marshal(r.Object)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "---\n# from %s\n%s", describe(r), out)
	}
	return b.String()
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
