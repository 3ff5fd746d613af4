package state

import (
	"strings"
	"unicode"
)

// LastMeaningfulLine picks from a container's termination message (with
// terminationMessagePolicy FallbackToLogsOnError, the last lines of its log)
// the one line that says why it failed, trimmed and at most 300 runes:
//
//   - the uncaught exception of a JVM (`Exception in thread "main" X: msg`
//     gives `X: msg`), the last one if there are several;
//   - else the last top-level line naming an exception or error (containing
//     "Exception" or "error:" in any case), such as the final
//     `ValueError: msg` of a Python traceback. Indented lines (stack frames,
//     traceback source lines) never count, and "Caused by:" lines count only
//     when no top-level line does;
//   - else the last non-empty line that is not indented, else the last
//     non-empty line (a message holding only stack frames, its head cut off
//     by the kubelet's 2048-byte limit on FallbackToLogsOnError).
func LastMeaningfulLine(termMsg string) string {
	var uncaught, top, cause, lastTop, last string
	// A carriage return ends a line too: Spark's console progress bar
	// redraws itself with one, leaving "[Stage 0:>  (0 + 1) / 1]\r" in
	// front of the next line of the log.
	for _, line := range strings.FieldsFunc(termMsg, func(r rune) bool { return r == '\n' || r == '\r' }) {
		line = strings.TrimRightFunc(line, unicode.IsSpace)
		if strings.TrimSpace(line) == "" {
			continue
		}
		last = line
		if line[0] == ' ' || line[0] == '\t' {
			continue // stack frame or source line
		}
		lastTop = line
		switch {
		case strings.Contains(line, `Exception in thread "`):
			uncaught = afterThreadName(line)
		case strings.HasPrefix(line, "Caused by:"):
			cause = strings.TrimPrefix(line, "Caused by:")
		case strings.Contains(line, "Exception") || strings.Contains(strings.ToLower(line), "error:"):
			top = line
		}
	}
	for _, pick := range []string{uncaught, top, cause, lastTop, last} {
		if pick != "" {
			// py4j prints the Java exception of a Python call as ": X: msg".
			return truncate(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(pick), ":")))
		}
	}
	return ""
}

// afterThreadName returns what follows `Exception in thread "name" `.
func afterThreadName(line string) string {
	_, rest, _ := strings.Cut(line, `Exception in thread "`)
	if _, after, ok := strings.Cut(rest, `" `); ok {
		return after
	}
	return line
}
