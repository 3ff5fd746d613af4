package convert_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/convert"
	"github.com/sparkplug-io/sparkplug/plugin/golden"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/render"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/templates"
)

// ksoExamplesDir holds the Spark operator's examples/, byte for byte; its
// README.md says from which commit.
const ksoExamplesDir = "testdata/kso-examples"

// ksoExamplesCommit is that commit, named in each golden file.
const ksoExamplesCommit = "38082f3318e9d33f3e4a940c7cf165df6e40b422"

// ksoExample is how one of the operator's examples differs from the rule:
// one SparkApplication or ScheduledSparkApplication, converted with
// nothing the plugin would fail the step on, whose step renders.
type ksoExample struct {
	// rejected are the field paths of the spark body the plugin rejects:
	// the step fails with exactly these, and convert reports exactly these.
	rejected []string
	// skipped are the kinds of the file's other objects, in order, which
	// convert skips.
	skipped []string
	// fill makes a file that is not YAML as published (a placeholder) into
	// what its user would apply: old, new pairs for strings.NewReplacer.
	fill []string
}

// ksoExamples are the examples that do not simply render. Remove an entry
// (or a path of one) when sparkplug comes to accept it: the test fails
// until then.
var ksoExamples = map[string]ksoExample{
	// The file also creates the ConfigMaps and Secrets the pods read.
	// Rejected: its pod-level securityContexts carry two container fields,
	// which the operator drops silently (its template is schemaless and
	// decoded into a PodTemplateSpec), and its Spark containers set cpu
	// and memory, which Spark overwrites from cores, coreLimit, memory and
	// memoryOverhead (the file's own comments say they "will not work").
	"spark-pi-pod-template.yaml": {
		skipped: []string{"ConfigMap", "Secret", "ConfigMap", "Secret"},
		rejected: []string{
			"spark.driver.template.spec.containers[0].resources.limits[cpu]",
			"spark.driver.template.spec.containers[0].resources.limits[memory]",
			"spark.driver.template.spec.containers[0].resources.requests[cpu]",
			"spark.driver.template.spec.containers[0].resources.requests[memory]",
			"spark.driver.template.spec.securityContext.allowPrivilegeEscalation",
			"spark.driver.template.spec.securityContext.capabilities",
			"spark.executor.template.spec.containers[0].resources.limits[cpu]",
			"spark.executor.template.spec.containers[0].resources.limits[memory]",
			"spark.executor.template.spec.containers[0].resources.requests[cpu]",
			"spark.executor.template.spec.containers[0].resources.requests[memory]",
			"spark.executor.template.spec.securityContext.allowPrivilegeEscalation",
			"spark.executor.template.spec.securityContext.capabilities",
		},
	},
	// image: {IMAGE_REGISTRY}/{IMAGE_REPOSITORY}/... opens a YAML flow
	// mapping: no YAML parser reads the file (kubectl neither) until the
	// placeholders are filled in.
	"spark-pi-prometheus.yaml": {fill: []string{"{IMAGE_REGISTRY}/{IMAGE_REPOSITORY}/", "registry.example.com/spark/"}},
}

// Each of the Spark operator's examples, taken as a user moving off the
// operator takes it: sparkplug convert, then the step's spark body through
// the plugin's decoding, defaults, validation and object building
// (render.Render, as sparkplug render). It renders, or fails exactly as
// ksoExamples says; testdata/kso-examples/rendered/<file>.golden.yaml shows
// what it becomes.
func TestGoldenKSOExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(ksoExamplesDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples in %s: %v", ksoExamplesDir, err)
	}
	for name := range ksoExamples {
		if !slices.Contains(files, filepath.Join(ksoExamplesDir, name)) {
			t.Errorf("ksoExamples lists %s, which is not in %s", name, ksoExamplesDir)
		}
	}
	builder, err := objects.New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			want := ksoExamples[name]
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			fmt.Fprintf(&out, "# examples/%s of kubeflow/spark-operator at %s,\n", name, ksoExamplesCommit)
			out.WriteString("# converted by sparkplug convert and rendered by sparkplug render.\n")
			out.WriteString("# Written by go test ./plugin/convert/ -run Golden -update: do not edit.\n")
			if len(want.fill) > 0 {
				results := convert.Convert(data, convert.Options{})
				if len(results) != 1 || results[0].Object != nil || len(results[0].Findings) != 1 || !strings.HasPrefix(results[0].Findings[0].Message, "not valid YAML") {
					t.Fatalf("as published: %+v; want only a not-valid-YAML finding (else drop fill from ksoExamples)", results)
				}
				fmt.Fprintf(&out, "#\n# As published the file is not YAML (%s); filled in:\n", results[0].Findings[0].Message)
				for i := 0; i+1 < len(want.fill); i += 2 {
					fmt.Fprintf(&out, "#   %s -> %s\n", want.fill[i], want.fill[i+1])
				}
				data = []byte(strings.NewReplacer(want.fill...).Replace(string(data)))
			}

			results := convert.Convert(data, convert.Options{})
			var found []convert.Result
			var skipped []string
			out.WriteString("#\n# sparkplug convert:\n")
			n := 0
			for _, r := range results {
				if r.Object != nil {
					found = append(found, r)
				} else {
					skipped = append(skipped, r.Kind)
				}
				for _, f := range r.Findings {
					fmt.Fprintf(&out, "#   %s: %s\n", convert.Describe(r), f)
					n++
				}
			}
			if n == 0 {
				out.WriteString("#   nothing to report\n")
			}
			if !slices.Equal(skipped, want.skipped) {
				t.Errorf("convert skipped kinds %q, want %q", skipped, want.skipped)
			}
			if len(found) != 1 {
				t.Fatalf("convert wrote %d objects, want 1", len(found))
			}
			r := found[0]
			var reported []string
			for _, f := range r.Findings {
				if strings.HasPrefix(f.Message, "the plugin would fail the step") {
					reported = append(reported, bodyPath(r.Kind, f.Path))
				}
			}
			slices.Sort(reported)
			if !slices.Equal(reported, want.rejected) {
				t.Errorf("convert reports the plugin failing the step at\n  %q\nwant\n  %q", reported, want.rejected)
			}

			written, err := convert.Marshal(r.Object)
			if err != nil {
				t.Fatal(err)
			}
			steps, err := render.Render(written, builder, render.Options{})
			if err != nil {
				t.Fatalf("render the converted %s: %v", r.Object.GetObjectKind().GroupVersionKind().Kind, err)
			}
			if len(steps) != 1 {
				t.Fatalf("%d steps rendered, want 1", len(steps))
			}
			st := steps[0]
			var rejected []string
			if st.Err != nil {
				var invalid *spec.InvalidError
				if !errors.As(st.Err, &invalid) {
					t.Fatalf("the step fails, not on its body: %v", st.Err)
				}
				out.WriteString("#\n# sparkplug render: the step fails with\n")
				for _, e := range invalid.Errs {
					rejected = append(rejected, e.Field)
					fmt.Fprintf(&out, "#   %s\n", e.Error())
				}
			}
			slices.Sort(rejected)
			switch {
			case !slices.Equal(rejected, want.rejected) && len(want.rejected) > 0 && st.Err == nil:
				t.Errorf("the step renders now: remove %s from ksoExamples (it lists %q as rejected)", name, want.rejected)
			case !slices.Equal(rejected, want.rejected):
				t.Errorf("the plugin rejects\n  %q\nwant\n  %q\n(%v)", rejected, want.rejected, st.Err)
			}
			if st.Err == nil {
				if st.Objects == nil || st.Objects.Driver == nil || st.Objects.ConfigMap == nil || st.Objects.Service == nil {
					t.Fatalf("rendered %+v, want a driver pod, its ConfigMap and Service", st.Objects)
				}
				out.WriteString("#\n# sparkplug render:\n")
				if err := render.Write(&out, steps); err != nil {
					t.Fatal(err)
				}
			}
			golden.Compare(t, filepath.Join(ksoExamplesDir, "rendered", strings.TrimSuffix(name, ".yaml")+".golden.yaml"), out.String())
		})
	}
}

// bodyPath is the path in the spark body of a path in a converted object:
// spec.x of a SparkApplication, spec.template.x of a
// ScheduledSparkApplication.
func bodyPath(kind, path string) string {
	prefix := "spec"
	if kind == convert.KindScheduledSparkApplication {
		prefix = "spec.template"
	}
	if rest, ok := strings.CutPrefix(path, prefix); ok {
		return spec.PluginName + rest
	}
	return path
}
