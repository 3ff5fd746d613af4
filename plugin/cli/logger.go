package cli

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/sparkplug-io/sparkplug/plugin/redact"
)

// NewLogger is the structured logger of every sparkplug binary, from its
// --log-level and --log-format (json or text) flags. Every line, at every
// level and from every call site (client-go's included), goes through the
// one rule set of package redact.
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: l}
	var h slog.Handler
	switch format {
	case "json":
		h = slog.NewJSONHandler(w, opts)
	case "text":
		h = slog.NewTextHandler(w, opts)
	default:
		return nil, fmt.Errorf("--log-format must be json or text, got %q", format)
	}
	return slog.New(redact.Handler(h)), nil
}
