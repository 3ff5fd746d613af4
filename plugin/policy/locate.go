package policy

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// located is every string of a body, value or map key, with its field
// path, in a stable order: where the objects' values came from. The
// builder copies values from many fields (a service account from
// driver.serviceAccount or from driver.template.spec.serviceAccountName, a
// Secret from a volume, secrets, env, envFrom, a sidecar); finding the
// value in the body names the field the author wrote, whichever it was.
type located struct {
	leaves []leaf
}

type leaf struct {
	path, value string
}

// mapFields are the body's fields that are maps: their keys are written
// as [key] in a path, as package spec writes them.
var mapFields = map[string]bool{"sparkConf": true, "hadoopConf": true, "envVars": true, "envSecretKeyRefs": true,
	"labels": true, "annotations": true, "nodeSelector": true, "serviceLabels": true, "serviceAnnotations": true,
	"ingressAnnotations": true}

// root is the path of the body, as package spec names it.
var root = field.NewPath("spark")

func locate(s *spec.SparkApplicationSpec) *located {
	l := &located{}
	raw, err := json.Marshal(s)
	if err != nil {
		return l
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return l
	}
	l.walk(root, "", v)
	return l
}

func (l *located) walk(p *field.Path, name string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			child := p.Child(k)
			if mapFields[name] {
				child = p.Key(k)
				l.leaves = append(l.leaves, leaf{path: child.String(), value: k})
			}
			l.walk(child, k, v[k])
		}
	case []any:
		for i, x := range v {
			l.walk(p.Index(i), name, x)
		}
	case string:
		l.leaves = append(l.leaves, leaf{path: p.String(), value: v})
	}
}

// find is the first path under one of prefixes, tried in order, whose
// value is v; fallback when there is none.
func (l *located) find(v, fallback string, prefixes ...string) string {
	for _, prefix := range prefixes {
		for _, lf := range l.leaves {
			if lf.value == v && (lf.path == prefix || strings.HasPrefix(lf.path, prefix+".") || strings.HasPrefix(lf.path, prefix+"[")) {
				return lf.path
			}
		}
	}
	return fallback
}
