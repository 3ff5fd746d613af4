package redact

import (
	"context"
	"fmt"
	"log/slog"
)

// Handler wraps a slog.Handler so that nothing logged through it shows a
// secret, whatever the call site: the message and every string attribute
// go through Value, an error's text and a fmt.Stringer's too, a []string
// (a command line) through Args, any other value whose printed form holds
// a secret is replaced by that form redacted, and the value of an
// attribute whose key is Sensitive is Redacted. Numbers, booleans,
// durations and times are left as they are. It costs a few scans of each
// string (Value), nothing more for text without =, @, " or a dash.
func Handler(h slog.Handler) slog.Handler {
	if r, ok := h.(handler); ok {
		return r
	}
	return handler{next: h}
}

type handler struct{ next slog.Handler }

func (h handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, Value(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	shown := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		shown[i] = attr(a)
	}
	return handler{next: h.next.WithAttrs(shown)}
}

func (h handler) WithGroup(name string) slog.Handler {
	return handler{next: h.next.WithGroup(name)}
}

// attr is a as Handler shows it.
func attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if Sensitive(a.Key) {
			return slog.String(a.Key, Redacted)
		}
		return slog.String(a.Key, Value(v.String()))
	case slog.KindGroup:
		group := v.Group()
		shown := make([]any, len(group))
		for i, g := range group {
			shown[i] = attr(g)
		}
		return slog.Group(a.Key, shown...)
	case slog.KindAny:
		if Sensitive(a.Key) {
			return slog.String(a.Key, Redacted)
		}
		return slog.Attr{Key: a.Key, Value: anyValue(v)}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// anyValue is an attribute's value of kind Any as Handler shows it.
func anyValue(v slog.Value) slog.Value {
	switch x := v.Any().(type) {
	case nil:
		return v
	case error:
		return slog.StringValue(Value(x.Error()))
	case []string:
		return slog.AnyValue(Args(x))
	case fmt.Stringer:
		return slog.StringValue(Value(x.String()))
	default:
		s := fmt.Sprint(x)
		if shown := Value(s); shown != s {
			return slog.StringValue(shown)
		}
		return v
	}
}
