package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"gopkg.in/yaml.v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// Marshal writes obj as YAML, without what a new object has empty: its
// status, a null creationTimestamp, and the empty objects Argo's types
// always encode (arguments: {}, inputs: {}, ...). The spark body is
// written as it is, empty objects and nulls included.
func Marshal(obj Object) ([]byte, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
	}
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var tree map[string]any
	if err := d.Decode(&tree); err != nil {
		return nil, err
	}
	delete(tree, "status")
	prune(tree)
	out, err := sigsyaml.Marshal(tree)
	if err != nil {
		return nil, fmt.Errorf("write %s %s as YAML: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
	}
	return out, nil
}

// prune removes, outside plugin bodies, null creationTimestamps and empty
// objects, innermost first.
func prune(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if k == "plugin" {
				continue
			}
			prune(child)
			switch c := child.(type) {
			case nil:
				if k == "creationTimestamp" {
					delete(v, k)
				}
			case map[string]any:
				if len(c) == 0 {
					delete(v, k)
				}
			}
		}
	case []any:
		for _, child := range v {
			prune(child)
		}
	}
}

// MarshalResult writes r.Object as Marshal does, and keeps the input's
// comments where they carry over: those before the object, and those in
// the spark body, which is written as the input has it: its fields in the
// input's order, its scalars quoted as they were (the input's own node is
// written). Lists are indented under their key, as most hand-written
// YAML has them.
func MarshalResult(r Result) ([]byte, error) {
	out, err := Marshal(r.Object)
	if err != nil || r.node == nil {
		return out, err
	}
	in := content(r.node)
	var written yaml.Node
	if err := yaml.Unmarshal(out, &written); err != nil {
		return nil, fmt.Errorf("read %s %s again: %w", r.Kind, r.Name, err)
	}
	root := content(&written)
	// The comments before the object: the document's, or its first key's.
	head := strings.TrimSpace(r.node.HeadComment + "\n" + in.HeadComment)
	if len(in.Content) > 0 {
		head = strings.TrimSpace(head + "\n" + in.Content[0].HeadComment)
	}
	root.HeadComment = head
	// The spark body: the input's spec (a ScheduledSparkApplication's
	// spec.template) in place of the written copy, the same value.
	from, to := "spec", "spec.templates[0].plugin.spark"
	if r.Kind == KindScheduledSparkApplication {
		from, to = "spec.template", "spec.workflowSpec.templates[0].plugin.spark"
	}
	if body := valueAt(in, from); body != nil && body.Kind == yaml.MappingNode {
		if r.appName != "" {
			setSparkConf(body, spark.ConfAppName, r.appName)
		}
		setValue(root, to, body)
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&written); err != nil {
		return nil, fmt.Errorf("write %s %s as YAML: %w", r.Kind, r.Name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// valueAt is the value node at a path of plain keys and [n] (no dotted
// keys), or nil.
func valueAt(n *yaml.Node, path string) *yaml.Node {
	_, v := walk(content(n), path)
	return v
}

// setValue replaces the value node at such a path.
func setValue(n *yaml.Node, path string, v *yaml.Node) {
	parent, last := path, ""
	if i := strings.LastIndex(path, "."); i >= 0 {
		parent, last = path[:i], path[i+1:]
	}
	_, p := walk(content(n), parent)
	if p == nil || p.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(p.Content); i += 2 {
		if p.Content[i].Value == last {
			p.Content[i+1] = v
		}
	}
}

// walk follows a path of plain keys and [n] from n: the last key node and
// its value, or nils.
func walk(n *yaml.Node, path string) (key, value *yaml.Node) {
	value = n
	for _, part := range strings.Split(path, ".") {
		name, index, indexed := strings.Cut(part, "[")
		key, value = field(value, name)
		value = content(value)
		if indexed {
			i, err := strconv.Atoi(strings.TrimSuffix(index, "]"))
			if err != nil || value == nil || value.Kind != yaml.SequenceNode || i >= len(value.Content) {
				return nil, nil
			}
			key, value = value.Content[i], content(value.Content[i])
		}
		if value == nil {
			return nil, nil
		}
	}
	return key, value
}
