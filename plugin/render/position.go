package render

// Where a step is in the input: the YAML documents it was read from, and
// the line and column of its first problem (as convert reports them).

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/convert"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// locate sets where the first problem of a step's Err is in the input,
// when Err names a field of the spark body.
func locate(st *Step) {
	var invalid *spec.InvalidError
	if st.doc == nil || !errors.As(st.Err, &invalid) || len(invalid.Errs) == 0 {
		return
	}
	field, ok := strings.CutPrefix(invalid.Errs[0].Field, spec.PluginName)
	if !ok {
		return
	}
	path := st.bodyPath + field
	if st.bodyPath == "" {
		path = strings.TrimPrefix(field, ".")
	}
	st.Line, st.Column = st.doc.Position(path)
}

// document is one YAML document of the input: as JSON, what is read, and
// as YAML, where its fields are.
type document struct {
	json []byte
	yaml *convert.Document
}

// documents splits a YAML stream into its non-empty documents, at the
// separator lines Kubernetes' YAML reader splits at.
func documents(input []byte) ([]document, error) {
	var out []document
	for _, d := range convert.Documents(input) {
		js, err := yaml.YAMLToJSON(d.Raw)
		if err != nil {
			return nil, fmt.Errorf("read YAML: %w", err)
		}
		if t := bytes.TrimSpace(js); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue
		}
		out = append(out, document{json: js, yaml: &d})
	}
	return out, nil
}

// at is st with its spark body at path in its document.
func at(st Step, path string) Step {
	st.bodyPath = path
	return st
}
