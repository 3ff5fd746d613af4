package examples

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	_ "time/tzdata" // CronWorkflow time zones, whatever the machine has

	"github.com/argoproj/argo-workflows/v3/pkg/apis/workflow"
	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// decodeFile splits a file into its YAML documents and decodes each.
func decodeFile(path string) ([]*document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var docs []*document
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for i := 0; ; i++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		var probe map[string]any
		if err := yaml.Unmarshal(raw, &probe); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(probe) == 0 {
			continue // only comments
		}
		d, err := decodeDocument(raw)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		d.file, d.index = filepath.Base(path), i
		docs = append(docs, d)
	}
	if len(docs) == 0 {
		return nil, errors.New("no YAML documents")
	}
	return docs, nil
}

// decodeDocument decodes a document strictly into the Argo type its kind
// names: droppedFields finds unknown fields by path, also where Argo's own
// JSON decoders (ParallelSteps, ...) would drop them silently, and
// sigs.k8s.io/yaml's strict mode rejects duplicate fields.
func decodeDocument(raw []byte) (*document, error) {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(raw, &tm); err != nil {
		return nil, err
	}
	if tm.APIVersion != wfv1.SchemeGroupVersion.String() {
		return nil, fmt.Errorf("apiVersion %q: examples hold only %s objects", tm.APIVersion, wfv1.SchemeGroupVersion)
	}
	d := &document{raw: raw, kind: tm.Kind}
	switch tm.Kind {
	case workflow.WorkflowKind:
		o := &wfv1.Workflow{}
		d.obj, d.meta, d.spec = o, &o.ObjectMeta, &o.Spec
	case workflow.WorkflowTemplateKind:
		o := &wfv1.WorkflowTemplate{}
		d.obj, d.meta, d.spec = o, &o.ObjectMeta, &o.Spec
	case workflow.CronWorkflowKind:
		o := &wfv1.CronWorkflow{}
		d.obj, d.meta, d.spec = o, &o.ObjectMeta, &o.Spec.WorkflowSpec
	default:
		return nil, fmt.Errorf("kind %q: examples hold only Workflow, WorkflowTemplate and CronWorkflow", tm.Kind)
	}
	// Unknown fields first, by path; then sigs.k8s.io/yaml's strict
	// checks (duplicate fields), which name no path.
	if err := yaml.Unmarshal(raw, d.obj); err != nil {
		return nil, fmt.Errorf("decode %s: %w", tm.Kind, err)
	}
	dropped, err := droppedFields(raw, d.obj)
	if err != nil {
		return nil, err
	}
	if len(dropped) > 0 {
		return nil, fmt.Errorf("decode %s: unknown fields: %s", tm.Kind, strings.Join(dropped, ", "))
	}
	if err := yaml.UnmarshalStrict(raw, d.obj); err != nil {
		return nil, fmt.Errorf("decode %s: %w", tm.Kind, err)
	}
	if d.meta.Name == "" && d.meta.GenerateName == "" {
		return nil, fmt.Errorf("%s has neither metadata.name nor metadata.generateName", tm.Kind)
	}
	return d, nil
}

// droppedFields lists the fields of raw, with a non-empty value, that are
// missing once obj, decoded from raw, is encoded again.
func droppedFields(raw []byte, obj any) ([]string, error) {
	var in, out any
	if err := yaml.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	var dropped []string
	walkDropped("", in, out, &dropped)
	return dropped, nil
}

func walkDropped(path string, in, out any, dropped *[]string) {
	switch in := in.(type) {
	case map[string]any:
		o, _ := out.(map[string]any)
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range in {
				if !yield(k) {
					return
				}
			}
		}) {
			ov, ok := o[k]
			if !ok {
				if !isEmpty(in[k]) {
					*dropped = append(*dropped, path+"."+k)
				}
				continue
			}
			walkDropped(path+"."+k, in[k], ov, dropped)
		}
	case []any:
		o, _ := out.([]any)
		for i, v := range in {
			p := fmt.Sprintf("%s[%d]", path, i)
			if i >= len(o) {
				if !isEmpty(v) {
					*dropped = append(*dropped, p)
				}
				continue
			}
			walkDropped(p, v, o[i], dropped)
		}
	}
}

func isEmpty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case bool:
		return !v
	case float64:
		return v == 0
	case int64:
		return v == 0
	case string:
		return v == ""
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

func TestExamplesDecodeStrictly(t *testing.T) {
	for _, f := range exampleFiles(t) {
		t.Run(f, func(t *testing.T) {
			if _, err := decodeFile(f); err != nil {
				t.Error(err)
			}
		})
	}
}

// A deliberately broken document must fail the strict decode, or the test
// above proves nothing.
func TestDecodeRejectsBrokenDocuments(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"unknown field", `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: x-}
spec: {entrypoint: a, templates: [{name: a, pluginn: {spark: {}}}]}`, "unknown fields: .spec.templates[0].pluginn"},
		{"duplicate field", `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: x-}
spec: {entrypoint: a, entrypoint: b, templates: [{name: a, suspend: {}}]}`, `key "entrypoint" already set`},
		{"unknown field inside a step's arguments", `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: x-}
spec:
  entrypoint: a
  templates:
    - name: a
      steps: [[{name: b, template: c, arguments: {parameters: [{name: p, valeu: "1"}]}}]]
    - name: c
      suspend: {}`, `.spec.templates[0].steps[0][0].arguments.parameters[0].valeu`},
		{"wrong type", `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: x-}
spec: {entrypoint: a, parallelism: many, templates: [{name: a, suspend: {}}]}`, "parallelism"},
		{"another kind", `
apiVersion: v1
kind: ConfigMap
metadata: {name: x}`, "examples hold only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeDocument([]byte(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("decode: %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
