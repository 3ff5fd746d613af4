package spec

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkplug-io/sparkplug/plugin/redact"
)

// InvalidError is a spark body that cannot run: the first problems found,
// and how many more there are.
type InvalidError struct {
	// Errs are the first MaxReportedErrors problems, at most.
	Errs field.ErrorList
	// More is how many problems were found beyond Errs.
	More int
}

// Bounds of InvalidError's message: it becomes the node's message, which
// Argo writes into the Workflow object, so what a body can make it grow is
// capped whatever the body's size.
const (
	// MaxReportedErrors is how many problems the message lists before
	// "and N more".
	MaxReportedErrors = 20
	// MaxMessageBytes caps the whole message.
	MaxMessageBytes = 4 << 10
	// maxShownBytes caps a value, a field path or a key echoed in it.
	maxShownBytes = 64
)

// Error is one line a person can act on: the problems, with their paths,
// in a stable order, the first MaxReportedErrors of them (as many as fit
// whole), each echoed value, path and key cut to a few dozen bytes, then
// how many more there are, at most MaxMessageBytes in all.
func (e *InvalidError) Error() string {
	const prefix = "invalid spark body: "
	// Room for the count of the rest, whatever it is.
	room := MaxMessageBytes - len(prefix) - len(moreProblems(len(e.Errs)+e.More))
	var b strings.Builder
	shown := 0
	for _, err := range e.Errs[:min(len(e.Errs), MaxReportedErrors)] {
		msg := bounded(err).Error()
		if shown > 0 {
			msg = "; " + msg
		}
		if b.Len()+len(msg) > room && shown > 0 {
			break
		}
		b.WriteString(msg)
		shown++
	}
	if more := len(e.Errs) - shown + e.More; more > 0 {
		b.WriteString(moreProblems(more))
	}
	return Truncate(prefix+b.String(), MaxMessageBytes)
}

// moreProblems is the tail of a message that lists only the first
// problems.
func moreProblems(n int) string {
	return fmt.Sprintf("; and %d more problems", n)
}

// bounded is err with what it echoes of the body cut short, and its value
// hidden where package redact says it is secret: the value of a sensitive
// key (sparkConf[...secret.key]), a password in a URL or DSN.
func bounded(err *field.Error) *field.Error {
	e := *err
	switch s, isString := e.BadValue.(string); {
	case e.BadValue != nil && redact.Sensitive(lastKey(e.Field)):
		e.BadValue = redact.Redacted
	case isString:
		e.BadValue = Truncate(redact.Value(s), maxShownBytes)
	}
	e.Field = boundedPath(e.Field)
	e.Detail = Truncate(e.Detail, 8*maxShownBytes)
	return &e
}

// boundedPath is a field path with its last key cut like an echoed value
// (a key of the body, which may be of any size), and cut as a whole to a
// few keys' length.
func boundedPath(path string) string {
	if key := lastKey(path); len(key) > maxShownBytes {
		closing := ""
		if strings.HasSuffix(path, "]") {
			closing = "]"
		}
		path = path[:len(path)-len(key)-len(closing)] + Truncate(key, maxShownBytes) + closing
	}
	return Truncate(path, 4*maxShownBytes)
}

// lastKey is the last element of a field path: a map key in brackets, else
// the last name (spark.sparkConf[a.b] is a.b, spark.driver.env is env).
func lastKey(path string) string {
	if strings.HasSuffix(path, "]") {
		if i := strings.LastIndex(path, "["); i >= 0 {
			return path[i+1 : len(path)-1]
		}
	}
	return path[strings.LastIndex(path, ".")+1:]
}

// Truncate cuts s to at most max bytes, on a rune boundary, saying how
// much was cut.
func Truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	more := len(s) - limit
	for {
		tail := fmt.Sprintf("... (%d bytes more)", more)
		cut := max(limit-len(tail), 0)
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		// The count says what was cut; its own digits can move the cut.
		if len(s)-cut == more || len(fmt.Sprint(len(s)-cut)) > len(fmt.Sprint(more)) {
			return s[:cut] + tail
		}
		more = len(s) - cut
	}
}

// Parse decodes, defaults and validates the JSON `spark` body of a plugin
// step, as ParseWith does for a plugin with no defaults of its own (no
// --ingress-url-format, ...): what the body means by itself.
func Parse(raw []byte) (*SparkApplicationSpec, error) {
	return ParseWith(raw, PluginDefaults{})
}

// ParseWith decodes, defaults and validates the JSON `spark` body of a
// plugin step run by a plugin whose flags set d. It returns either a spec
// the rest of sparkplug can run, or an *InvalidError with the first
// problems and how many more there are: decoding problems first, then
// validation problems, leaving out those about a field that could not be
// decoded (a value of the wrong type is not also reported as missing). The
// spec returned has what the body's sparkplug block leaves unset filled
// from d (sparkplug.uiIngress), so it says everything a run is built from.
func ParseWith(raw []byte, d PluginDefaults) (*SparkApplicationSpec, error) {
	probs := &problems{decoded: paths{}}
	s := decode(raw, probs)
	if s == nil {
		return nil, probs.invalid()
	}
	SetDefaults(s)
	for _, err := range append(Validate(s), validateWithDefaults(s, d)...) {
		if !probs.decoded.covers(err.Field) {
			probs.add(err)
		}
	}
	if probs.count() > 0 {
		return nil, probs.invalid()
	}
	d.apply(s)
	return s, nil
}

// problems collects what is wrong with a body: the first MaxReportedErrors
// problems in full, then only how many more there are, so that a body of a
// hundred thousand mistakes costs little more to describe than one of
// twenty.
type problems struct {
	errs field.ErrorList
	more int
	// decoded are the paths of the decoding problems, kept or counted.
	decoded paths
}

// full says whether the problems found from now on are only counted.
func (p *problems) full() bool { return len(p.errs) >= MaxReportedErrors }

func (p *problems) count() int { return len(p.errs) + p.more }

func (p *problems) add(errs ...*field.Error) {
	for _, e := range errs {
		if p.full() {
			p.more++
		} else {
			p.errs = append(p.errs, e)
		}
	}
}

// decoding adds problems of decoding, whose paths ParseWith leaves
// validation problems under out.
func (p *problems) decoding(errs ...*field.Error) {
	for _, e := range errs {
		p.decoded[e.Field] = true
	}
	p.add(errs...)
}

func (p *problems) invalid() *InvalidError {
	return &InvalidError{Errs: p.errs, More: p.more}
}

// paths are the field paths of some errors.
type paths map[string]bool

// covers says whether path is one of the paths, or inside one: it looks
// up path and each of its parents, so checking every error of a body is
// linear in the body, not quadratic.
func (p paths) covers(path string) bool {
	if p[path] {
		return true
	}
	for i := 0; i < len(path); i++ {
		if (path[i] == '.' || path[i] == '[') && p[path[:i]] {
			return true
		}
	}
	return false
}
