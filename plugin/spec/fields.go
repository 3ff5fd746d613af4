package spec

import (
	"reflect"
	"slices"
	"strings"
	"sync"
)

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// structFields are the JSON fields of a struct type, with the fields of
// embedded structs (`json:",inline"`) promoted as encoding/json does.
type structFields struct {
	byName map[string]jsonField
	names  []string // sorted
	lower  []string // names lower-cased, for suggest
}

type jsonField struct {
	typ   reflect.Type
	index []int
}

// fieldCache holds the fields of each struct type, worked out by reflection
// once per type and process, however many keys a body has.
var fieldCache sync.Map // reflect.Type -> *structFields

func jsonFields(t reflect.Type) *structFields {
	if f, ok := fieldCache.Load(t); ok {
		return f.(*structFields)
	}
	fs := &structFields{byName: map[string]jsonField{}}
	// Breadth first, so that a shallower field hides a deeper one of the
	// same name, as in encoding/json.
	type level struct {
		t     reflect.Type
		index []int
	}
	queue := []level{{t: t}}
	for len(queue) > 0 {
		var next []level
		for _, l := range queue {
			for i := range l.t.NumField() {
				sf := l.t.Field(i)
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				index := append(slices.Clone(l.index), i)
				if sf.Anonymous && name == "" {
					ft := sf.Type
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if ft.Kind() == reflect.Struct {
						next = append(next, level{t: ft, index: index})
						continue
					}
				}
				if !sf.IsExported() {
					continue
				}
				if name == "" {
					name = sf.Name
				}
				if _, seen := fs.byName[name]; !seen {
					fs.byName[name] = jsonField{typ: sf.Type, index: index}
				}
			}
		}
		queue = next
	}
	fs.names = sortedKeys(fs.byName)
	for _, n := range fs.names {
		fs.lower = append(fs.lower, strings.ToLower(n))
	}
	f, _ := fieldCache.LoadOrStore(t, fs)
	return f.(*structFields)
}
