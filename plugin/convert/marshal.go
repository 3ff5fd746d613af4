package convert

import (
	"bytes"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
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
	out, err := yaml.Marshal(tree)
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
