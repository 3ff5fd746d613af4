package convert

import (
	"bytes"
	"encoding/json"

	sigsyaml "sigs.k8s.io/yaml"
)

// Reading the input: a YAML stream split into documents, each keeping the
// line it starts on, and decoded as a JSON tree.

// document is one YAML document of the input.
type document struct {
	raw []byte
	// line is the first line that is neither blank nor a comment, from
	// 1; 0 when there is none.
	line int
	// first is the line raw starts on, from 1.
	first int
}

// splitDocuments splits a YAML stream at its separator lines ("---",
// possibly followed by a comment) as Kubernetes' YAML reader does, and
// leaves out blank documents. Unlike that reader it keeps the line each
// document starts on.
func splitDocuments(data []byte) []document {
	var docs []document
	var cur []byte
	start := 0 // the first line of cur that is neither blank nor a comment
	first := 1 // the line cur starts on
	flush := func() {
		if len(bytes.TrimSpace(cur)) > 0 {
			docs = append(docs, document{raw: cur, line: start, first: first})
		}
		cur, start = nil, 0
	}
	for n, line := range bytes.SplitAfter(data, []byte("\n")) {
		if isSeparator(line) {
			flush()
			first = n + 2
			continue
		}
		if t := bytes.TrimSpace(line); start == 0 && len(t) > 0 && t[0] != '#' {
			start = n + 1
		}
		cur = append(cur, line...)
	}
	flush()
	return docs
}

// isSeparator says whether a line separates two YAML documents.
func isSeparator(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	if !ok {
		return false
	}
	rest = bytes.TrimSpace(rest)
	return len(rest) == 0 || rest[0] == '#'
}

// decode is a YAML document as a JSON tree: numbers stay json.Number, so
// that they are written again as they were; duplicate fields are errors.
func decode(raw []byte) (any, error) {
	j, err := sigsyaml.YAMLToJSONStrict(raw)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var tree any
	if err := d.Decode(&tree); err != nil {
		return nil, err
	}
	return tree, nil
}
