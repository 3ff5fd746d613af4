package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/redact"
)

// Write prints the objects of the steps that built as one YAML stream, in
// creation order (the PodGroup, if any, driver pod, ConfigMap, Service,
// then the extras). Each
// step's first document opens with comments naming its template and run.
// Status and creationTimestamp, which only the API server fills, are left
// out, and secret values are redacted (redactObject). A step of the spark-submit launcher opens with its run instead of
// the driver pod, which spark-submit creates: a document sparkSubmit with
// the argv (the program first) and the environment the plugin execs,
// secret values redacted as the plugin logs them, and the files it writes
// first (the driver and executor pod templates), by path.
func Write(w io.Writer, steps []Step) error {
	first := true
	for _, st := range steps {
		if st.Objects == nil {
			continue
		}
		objs := objectsOf(st)
		for i, o := range objs {
			var b strings.Builder
			if !first {
				b.WriteString("---\n")
			}
			first = false
			if i == 0 {
				if st.From != "" {
					fmt.Fprintf(&b, "# from: %s\n", st.From)
				}
				if st.Template != "" {
					fmt.Fprintf(&b, "# template: %s\n", st.Template)
				}
				for _, n := range st.Notes {
					fmt.Fprintf(&b, "# note: %s\n", n)
				}
				r := st.Run
				fmt.Fprintf(&b, "# run: workflow %s (uid %s) in namespace %s, node %s, attempt %d\n",
					r.Workflow.Name, r.Workflow.UID, r.Workflow.Namespace, r.NodeID, max(r.Attempt, 1))
				if st.Submit != nil {
					b.WriteString(submitComment)
				}
			}
			out, err := clean(o)
			if err != nil {
				return err
			}
			b.Write(out)
			if _, err := io.WriteString(w, b.String()); err != nil {
				return err
			}
		}
	}
	return nil
}

// objectsOf are what a rendered step shows, in the order the plugin
// creates them: the Kueue Workload, the PodGroup, the driver (or the
// spark-submit run that creates it), its companions.
func objectsOf(st Step) []any {
	var objs []any
	if st.Objects.Workload != nil {
		objs = append(objs, st.Objects.Workload)
	}
	if st.Objects.PodGroup != nil {
		objs = append(objs, st.Objects.PodGroup)
	}
	if st.Submit != nil {
		objs = append(objs, shown(st.Submit))
	} else {
		objs = append(objs, st.Objects.Driver)
	}
	for _, o := range st.Objects.Companions() {
		objs = append(objs, o)
	}
	return objs
}

// Objects are the rendered steps' objects, as Write shows them (redacted,
// without the fields only the API server fills), each as JSON: what
// render -o json lists.
func Objects(steps []Step) ([]json.RawMessage, error) {
	var out []json.RawMessage
	for _, st := range steps {
		if st.Objects == nil {
			continue
		}
		for _, o := range objectsOf(st) {
			m, err := cleanMap(o)
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(m)
			if err != nil {
				return nil, fmt.Errorf("encode: %w", err)
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// clean encodes an object without the fields only the API server fills.
func clean(o any) ([]byte, error) {
	m, err := cleanMap(o)
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(m)
}

// cleanMap is an object without the fields only the API server fills,
// its secrets redacted.
func cleanMap(o any) (map[string]any, error) {
	raw, err := json.Marshal(o)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	redactObject(m)
	return m, nil
}

// redactObject hides the secret values an object shows (redact.Object:
// env, args, annotations, and the shapes of secrets in every other
// string), and in a ConfigMap the secrets of its files: redactFile. The
// plugin creates the objects as they are; only what render prints is
// redacted.
func redactObject(m map[string]any) {
	data, _ := m["data"].(map[string]any)
	if m["kind"] == "ConfigMap" {
		delete(m, "data")
	}
	redact.Object(m)
	if m["kind"] != "ConfigMap" || data == nil {
		return
	}
	for k, v := range data {
		if s, ok := v.(string); ok {
			data[k] = redactFile(k, s)
		}
	}
	m["data"] = data
}

// redactFile hides the secrets of a file render shows, by its name: a pod
// template (.yaml) as an object, any other as a properties file.
func redactFile(name, s string) string {
	if strings.HasSuffix(name, ".yaml") {
		return redactYAML(s)
	}
	return redact.Properties(s)
}

// redactYAML redacts a YAML document (a pod template) as an object; a
// document with nothing to hide is returned as it is, and one that does
// not parse goes through redact.Value.
func redactYAML(s string) string {
	var doc any
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		return redact.Value(s)
	}
	before, err := json.Marshal(doc)
	if err != nil {
		return redact.Value(s)
	}
	redact.Object(doc)
	after, err := json.Marshal(doc)
	if err != nil {
		return redact.Value(s)
	}
	if string(after) == string(before) {
		return s
	}
	out, err := yaml.JSONToYAML(after)
	if err != nil {
		return redact.Value(s)
	}
	return string(out)
}

// Errors is every failed step's message, one per line, each after file
// and, when known, the line and column of its first problem's field
// (file:LINE:COLUMN:, as sparkplug convert reports): the plugin's message
// for the node, as it is for a single step, after the step's template (or
// node) when the input has several. Its text goes through redact.Value,
// as a node's message does.
func Errors(file string, steps []Step) error {
	var errs []error
	for _, st := range steps {
		where := file
		if st.Line > 0 {
			where = fmt.Sprintf("%s:%d:%d", file, st.Line, st.Column)
		}
		switch {
		case st.Err == nil:
		case len(steps) == 1:
			errs = append(errs, fmt.Errorf("%s: %w", where, st.Err))
		case st.Template != "":
			errs = append(errs, fmt.Errorf("%s: template %s: %w", where, st.Template, st.Err))
		default:
			errs = append(errs, fmt.Errorf("%s: node %s: %w", where, st.Run.NodeID, st.Err))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return shownError{errors.Join(errs...)}
}

// shownError is an error whose text shows no secret (redact.Value).
type shownError struct{ err error }

func (e shownError) Error() string { return redact.Value(e.err.Error()) }
func (e shownError) Unwrap() error { return e.err }
