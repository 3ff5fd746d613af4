package manifests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/golden"
)

// The chart README's values table is generated: one row per value of
// values.schema.json, with its type, its default from values.yaml and the
// schema's description, written between two marker comments of the README
// (make update); the rest of the README is written by hand.
const (
	chartReadmeFile = "chart/sparkplug/README.md"
	chartSchemaFile = "chart/sparkplug/values.schema.json"
	chartValuesFile = "chart/sparkplug/values.yaml"

	valuesTableBegin = "<!-- values table: begin (make update writes it from values.schema.json and values.yaml) -->"
	valuesTableEnd   = "<!-- values table: end -->"
)

// TestChartGoldenValuesTable writes the values table of the chart's README
// from values.schema.json and values.yaml (make update), and fails while
// the README's differs. Runs without helm.
func TestChartGoldenValuesTable(t *testing.T) {
	schema, err := os.ReadFile(chartSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	values, err := os.ReadFile(chartValuesFile)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(chartReadmeFile)
	if err != nil {
		t.Fatal(err)
	}
	table, err := valuesTable(schema, values)
	if err != nil {
		t.Fatal(err)
	}
	// Blank lines around the table: Markdown ends a table at one.
	got, err := replaceBetween(string(readme), valuesTableBegin, valuesTableEnd, "\n"+table+"\n")
	if err != nil {
		t.Fatalf("%s: %v", chartReadmeFile, err)
	}
	golden.Compare(t, chartReadmeFile, got)
}

// schemaNode is the part of a JSON schema the values table shows.
type schemaNode struct {
	Type        schemaTypes `json:"type"`
	Description string      `json:"description"`
	Ref         string      `json:"$ref"`
	Enum        []any       `json:"enum"`
	Items       *schemaNode `json:"items"`
	Properties  properties  `json:"properties"`
}

// schemaTypes is a schema's "type": one name or a list of them.
type schemaTypes []string

func (s *schemaTypes) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*s = schemaTypes{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return fmt.Errorf("type: %w", err)
	}
	*s = many
	return nil
}

// property is one of an object's properties, in the schema's order.
type property struct {
	name string
	node *schemaNode
}

// properties keeps the order the schema lists them in, which is the
// table's.
type properties []property

func (p *properties) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("properties: not an object (%v)", err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("properties: %w", err)
		}
		name, _ := tok.(string)
		var node schemaNode
		if err := dec.Decode(&node); err != nil {
			return fmt.Errorf("property %s: %w", name, err)
		}
		*p = append(*p, property{name: name, node: &node})
	}
	return nil
}

// valueRow is one row of the values table.
type valueRow struct {
	path, typ, def, description string
}

// valuesTable renders the Markdown table of every value the schema
// declares, in the schema's order. An object whose properties have a
// description is expanded: its properties are rows, and it is a row above
// them (no default) when it has a description of its own. Any other value
// (resources, securityContext, free-form objects too) is one row, with its
// whole default from values.yaml, and needs a description.
func valuesTable(schemaJSON, valuesYAML []byte) (string, error) {
	var root struct {
		schemaNode
		Definitions map[string]*schemaNode `json:"definitions"`
	}
	if err := json.Unmarshal(schemaJSON, &root); err != nil {
		return "", fmt.Errorf("values.schema.json: %w", err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(valuesYAML, &values); err != nil {
		return "", fmt.Errorf("values.yaml: %w", err)
	}
	resolve := func(n *schemaNode) *schemaNode {
		if name, ok := strings.CutPrefix(n.Ref, "#/definitions/"); ok && root.Definitions[name] != nil {
			return root.Definitions[name]
		}
		return n
	}
	var rows []valueRow
	var errs []error
	var walk func(prefix []string, props properties)
	walk = func(prefix []string, props properties) {
		for _, p := range props {
			path := append(slices.Clone(prefix), p.name)
			key := strings.Join(path, ".")
			node := resolve(p.node)
			expand := slices.ContainsFunc(node.Properties, func(c property) bool { return c.node.Description != "" })
			if expand {
				if p.node.Description != "" {
					rows = append(rows, valueRow{path: key, typ: typeOf(node, resolve), description: p.node.Description})
				}
				walk(path, node.Properties)
				continue
			}
			if p.node.Description == "" {
				errs = append(errs, fmt.Errorf("%s has no description in values.schema.json", key))
			}
			row := valueRow{path: key, typ: typeOf(node, resolve), description: p.node.Description}
			if def, ok := lookup(values, path); ok {
				b, err := marshalDefault(def)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", key, err))
				}
				row.def = "`" + b + "`"
			}
			rows = append(rows, row)
		}
	}
	walk(nil, root.Properties)
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| value | type | default | |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.path, cell(r.typ), cell(r.def), cell(r.description))
	}
	return b.String(), nil
}

// typeOf is a value's type as the table shows it: the schema's types,
// "array of" the items' type, and the allowed values of an enum but the
// empty string and null (the types and the description say what those
// mean).
func typeOf(n *schemaNode, resolve func(*schemaNode) *schemaNode) string {
	types := slices.Clone(n.Type)
	var enum []any = n.Enum
	for i, t := range types {
		if t == "array" && n.Items != nil {
			items := resolve(n.Items)
			if len(items.Type) > 0 {
				types[i] = "array of " + strings.Join(items.Type, " or ")
			}
			if len(enum) == 0 {
				enum = items.Enum
			}
		}
	}
	s := strings.Join(types, " or ")
	var allowed []string
	for _, v := range enum {
		if v == nil || v == "" {
			continue
		}
		allowed = append(allowed, fmt.Sprintf("`%v`", v))
	}
	if len(allowed) > 0 {
		s += ": " + strings.Join(allowed, ", ")
	}
	return s
}

// lookup finds the value at path in values.yaml.
func lookup(values map[string]any, path []string) (any, bool) {
	var v any = values
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// marshalDefault is a default as compact JSON, keys sorted.
func marshalDefault(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("default: %w", err)
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// cell escapes what would end a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// replaceBetween puts block between the lines begin and end of doc,
// keeping both lines and everything outside them.
func replaceBetween(doc, begin, end, block string) (string, error) {
	before, rest, ok := strings.Cut(doc, begin+"\n")
	if !ok {
		return "", fmt.Errorf("no line %q", begin)
	}
	_, after, ok := strings.Cut(rest, end+"\n")
	if !ok {
		return "", fmt.Errorf("no line %q after %q", end, begin)
	}
	return before + begin + "\n" + block + end + "\n" + after, nil
}

func TestValuesTable(t *testing.T) {
	schema := `{
  "properties": {
    "mode": {"type": "string", "enum": ["", "a", "b"], "description": "how"},
    "names": {"type": "array", "items": {"$ref": "#/definitions/name"}, "description": "who | whom"},
    "pods": {
      "type": "object",
      "description": "the pods",
      "properties": {
        "replicas": {"type": ["integer", "null"], "description": "how many"},
        "resources": {"type": "object", "description": "theirs", "properties": {"cpu": {"type": "string"}}}
      }
    },
    "extra": {"type": "object", "description": "not in values.yaml"}
  },
  "definitions": {"name": {"type": "string"}}
}`
	values := "mode: a\nnames: [x]\npods:\n  replicas: null\n  resources: {cpu: 1m}\n"
	got, err := valuesTable([]byte(schema), []byte(values))
	if err != nil {
		t.Fatal(err)
	}
	want := "| value | type | default | |\n|---|---|---|---|\n" +
		"| `mode` | string: `a`, `b` | `\"a\"` | how |\n" +
		"| `names` | array of string | `[\"x\"]` | who \\| whom |\n" +
		"| `pods` | object |  | the pods |\n" +
		"| `pods.replicas` | integer or null | `null` | how many |\n" +
		"| `pods.resources` | object | `{\"cpu\":\"1m\"}` | theirs |\n" +
		"| `extra` | object |  | not in values.yaml |\n"
	if got != want {
		t.Errorf("valuesTable:\n%s\nwant:\n%s", got, want)
	}

	_, err = valuesTable([]byte(`{"properties": {"a": {"type": "string"}, "b": {"type": "object", "properties": {"c": {"type": "string", "description": "c"}}}}}`), []byte("{}"))
	if err == nil || err.Error() != "a has no description in values.schema.json" {
		t.Errorf("a value without a description: %v, want an error naming a alone (b is expanded)", err)
	}
}

func TestReplaceBetween(t *testing.T) {
	got, err := replaceBetween("top\n<b>\nold\n<e>\nend\n", "<b>", "<e>", "new\n")
	if err != nil || got != "top\n<b>\nnew\n<e>\nend\n" {
		t.Errorf("replaceBetween = %q, %v", got, err)
	}
	if _, err := replaceBetween("top\n<e>\n", "<b>", "<e>", "x\n"); err == nil {
		t.Error("replaceBetween without the begin line: no error")
	}
	if _, err := replaceBetween("top\n<b>\n", "<b>", "<e>", "x\n"); err == nil {
		t.Error("replaceBetween without the end line: no error")
	}
}
