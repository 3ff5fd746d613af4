package convert

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Where findings are: the input parsed once more, as YAML nodes, which
// keep their line and column (the JSON tree convert reads has none).

// parseNode is the node tree of one YAML document, or nil when it does
// not parse (its Finding then says so, at the document).
func parseNode(raw []byte) *yaml.Node {
	var n yaml.Node
	if err := yaml.Unmarshal(raw, &n); err != nil {
		return nil
	}
	return &n
}

// locateFindings sets the Line and Column of each finding from its Path in
// the object's node, the document starting on line first of the input.
func locateFindings(fs []Finding, obj *yaml.Node, first int) {
	if obj == nil {
		return
	}
	for i := range fs {
		if n := nodeAt(obj, fs[i].Path); n != nil && n.Line > 0 {
			fs[i].Line, fs[i].Column = first+n.Line-1, n.Column
		}
	}
	// In the order of the input, as a reader goes through it.
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
}

// nodeAt is the node a finding's path names: for a field the key (where a
// reader looks), for a list item the item; when the input lacks the field,
// the deepest of its enclosing fields it has. A path is keys joined by
// dots, "[n]" for a list item and "[key]" for a key with dots (field
// paths' form); since keys may hold dots (labels, Spark conf keys), the
// longest key that fits is taken.
func nodeAt(n *yaml.Node, path string) *yaml.Node {
	n = content(n)
	at := n // the key of the last field found, or the node itself
	for path != "" && n != nil {
		var next, key *yaml.Node
		switch {
		case strings.HasPrefix(path, "["):
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return at
			}
			inner := path[1:end]
			path = strings.TrimPrefix(path[end+1:], ".")
			if i, err := strconv.Atoi(inner); err == nil && n.Kind == yaml.SequenceNode {
				if i < 0 || i >= len(n.Content) {
					return at
				}
				next = n.Content[i]
				key = next
			} else {
				key, next = field(n, inner)
			}
		case n.Kind == yaml.MappingNode:
			best := -1
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				if (path == k || strings.HasPrefix(path, k+".") || strings.HasPrefix(path, k+"[")) && (best < 0 || len(k) > len(n.Content[best].Value)) {
					best = i
				}
			}
			if best < 0 {
				return at
			}
			key, next = n.Content[best], n.Content[best+1]
			path = strings.TrimPrefix(path[len(key.Value):], ".")
		default:
			return at
		}
		if next == nil {
			return at
		}
		at, n = key, content(next)
	}
	return at
}

// field is the key and value nodes of a mapping's field, or nils.
func field(n *yaml.Node, name string) (key, value *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == name {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// content skips a document node and follows an alias.
func content(n *yaml.Node) *yaml.Node {
	for n != nil {
		switch {
		case n.Kind == yaml.DocumentNode && len(n.Content) > 0:
			n = n.Content[0]
		case n.Kind == yaml.AliasNode:
			n = n.Alias
		default:
			return n
		}
	}
	return nil
}

// itemNode is the node of item i of a List document's items, or nil.
func itemNode(root *yaml.Node, i int) *yaml.Node {
	_, items := field(content(root), "items")
	if items = content(items); items == nil || items.Kind != yaml.SequenceNode || i >= len(items.Content) {
		return nil
	}
	return items.Content[i]
}

// Document is one YAML document of an input, as convert splits a stream:
// its text, and the line of the input it starts on.
type Document struct {
	Raw []byte
	// First is the line Raw starts on, from 1.
	First int
	node  *yaml.Node
}

// Documents splits a YAML stream into its documents, blank ones left out,
// each with the line it starts on, as convert reads them.
func Documents(data []byte) []Document {
	var out []Document
	for _, d := range splitDocuments(data) {
		out = append(out, Document{Raw: d.raw, First: d.first})
	}
	return out
}

// Position is where path (a field path, as a Finding's) is in the
// document: the line and column of the field's key in the input, or of
// its nearest enclosing field the document has; 0, 0 when the document
// does not parse.
func (d *Document) Position(path string) (line, column int) {
	if d.node == nil {
		if d.node = parseNode(d.Raw); d.node == nil {
			return 0, 0
		}
	}
	n := nodeAt(d.node, path)
	if n == nil || n.Line == 0 {
		return 0, 0
	}
	return d.First + n.Line - 1, n.Column
}
