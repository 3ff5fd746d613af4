package objects

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/templates"

	"github.com/sparkplug-io/sparkplug/plugin/golden"
)

// goldenRuns are the runs the golden inputs are built for; inputs not
// listed use the first.
var goldenRuns = map[string]Run{
	"default": {
		Workflow:    spark.WorkflowRef{Name: "nightly-etl-x7k2p", Namespace: "data", UID: "7c1e2f4a-2b8d-4e63-9a0f-1d2c3b4a5e6f"},
		NodeID:      "nightly-etl-x7k2p-3141592653",
		TemplateKey: "0a1b2c3d4e5f60718293",
		Attempt:     1,
		ConfKey:     "5f0c9a3e",
	},
	"kueue": {
		Workflow:    spark.WorkflowRef{Name: "queued-etl-4r8tw", Namespace: "data", UID: "3f2b1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d"},
		NodeID:      "queued-etl-4r8tw-1618033988",
		TemplateKey: "1234567890abcdef1234",
		Attempt:     1,
		KueueQueue:  "team-data",
		ConfKey:     "a41d07c2",
	},
	"kitchen-sink": {
		Workflow:    spark.WorkflowRef{Name: "kitchen-sink-9qz4m", Namespace: "analytics", UID: "0d6f9a52-8c1b-4f7e-b3a2-5e4d3c2b1a09"},
		NodeID:      "kitchen-sink-9qz4m-2718281828",
		TemplateKey: "ffeeddccbbaa99887766",
		Attempt:     2,
		ConfKey:     "e93b5d18",
	},
}

// Every golden input is a body the plugin accepts.
func TestGoldenInputsAreValid(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range inputs {
		raw, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := spec.Parse(js); err != nil {
			t.Errorf("%s: %v", in, err)
		}
	}
}

func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.input.yaml"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs in testdata: %v", err)
	}
	b := newBuilder(t)
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".input.yaml")
		t.Run(name, func(t *testing.T) {
			run, ok := goldenRuns[name]
			if !ok {
				run = goldenRuns["default"]
			}
			objs, err := b.Build(readBody(t, in), run)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			got := renderObjects(t, objs)
			golden.Compare(t, filepath.Join("testdata", name+".golden.yaml"), got)
		})
	}
}

// renderObjects writes the objects as one multi-document YAML file.
func renderObjects(t *testing.T, objs *Set) string {
	t.Helper()
	var docs []string
	var all []any
	if objs.PodGroup != nil {
		// An unstructured object encodes as JSON with sorted keys, its
		// quantities as the strings the builder wrote: deterministic.
		all = append(all, objs.PodGroup)
	}
	if objs.Workload != nil {
		all = append(all, objs.Workload)
	}
	all = append(all, objs.Driver, objs.ConfigMap, objs.Service)
	for _, o := range objs.Extra {
		all = append(all, o)
	}
	for _, o := range all {
		out, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(out))
	}
	return strings.Join(docs, "---\n")
}

// newBuilder builds from the embedded skeletons.
func newBuilder(t testing.TB) *Builder {
	t.Helper()
	b, err := New(templates.FS)
	if err != nil {
		t.Fatalf("New(templates.FS): %v", err)
	}
	return b
}

// readBody decodes a spark body from a file and defaults it as the plugin
// does before it builds (spec.SetDefaults).
func readBody(t testing.TB, path string) *spec.SparkApplicationSpec {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s spec.SparkApplicationSpec
	if err := yaml.UnmarshalStrict(raw, &s); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	spec.SetDefaults(&s)
	return &s
}
