package spec

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// unknownField reports a key that names no field of its object, suggesting
// the nearest known field name.
func unknownField(p *field.Path, key string, v any, in reflect.Type, known *structFields) *field.Error {
	if u, ok := unsupportedAt(p.String()); ok {
		return field.Forbidden(p, unsupportedMessage(u))
	}
	detail := fmt.Sprintf("unknown field %q", Truncate(key, maxShownBytes))
	if s := suggest(key, known.names, known.lower); s != "" {
		detail += fmt.Sprintf("; did you mean %q?", s)
	} else if hint := misplaced(p, key, in); hint != "" {
		detail += "; " + hint
	}
	return field.Invalid(p, shown(v), detail)
}

// misplaced recognises a field written at the wrong level: a whole
// SparkApplication instead of its spec, a driver field under executor (or
// the other way round), a pod field at the top, a container's security
// setting in a pod's securityContext (in is the struct the field is
// unknown to).
func misplaced(p *field.Path, key string, in reflect.Type) string {
	if in == podSecurityContextType {
		if _, ok := jsonFields(containerSecurityContextType).byName[key]; ok {
			return "it is a field of a container's securityContext, not of the pod's: set it in the container's securityContext (spark.driver.securityContext and spark.executor.securityContext are the Spark container's)"
		}
	}
	switch p.String() {
	case "spark." + key:
		switch key {
		case "apiVersion", "kind", "metadata", "spec", "status":
			return "put the SparkApplication's spec under spark, not the whole object"
		}
		_, driver := jsonFields(reflect.TypeFor[DriverSpec]()).byName[key]
		_, executor := jsonFields(reflect.TypeFor[ExecutorSpec]()).byName[key]
		switch {
		case driver && executor:
			return "it is a field of spark.driver and spark.executor"
		case driver:
			return "it is a field of spark.driver"
		case executor:
			return "it is a field of spark.executor"
		}
	case "spark.driver." + key:
		if _, ok := jsonFields(reflect.TypeFor[ExecutorSpec]()).byName[key]; ok {
			return "it is a field of spark.executor"
		}
	case "spark.executor." + key:
		if _, ok := jsonFields(reflect.TypeFor[DriverSpec]()).byName[key]; ok {
			return "it is a field of spark.driver"
		}
	}
	return ""
}

// suggest returns the known name nearest to name, if it is within edit
// distance 2 (ignoring case) and nearer than the length of name; lower are
// the known names lower-cased.
func suggest(name string, known, lower []string) string {
	if len(name) > maxShownBytes {
		return "" // no field is that long: nothing to suggest, and no quadratic distance
	}
	const maxDist = 2
	best, bestDist := "", maxDist+1
	l := strings.ToLower(name)
	n := utf8.RuneCountInString(l)
	for i, k := range lower {
		// The distance is at least the difference in length.
		if diff := n - utf8.RuneCountInString(k); diff > maxDist || diff < -maxDist {
			continue
		}
		d := levenshtein(l, k)
		if d < bestDist && d < utf8.RuneCountInString(name) {
			best, bestDist = known[i], d
		}
	}
	return best
}

// levenshtein is the edit distance between a and b, in runes.
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
