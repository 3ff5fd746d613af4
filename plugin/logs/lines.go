package logs

import (
	"bytes"
	"io"
	"sync"
)

// Output is one writer that several pods' logs share. Each stream writes
// through its own LineWriter; Output writes each whole line (with the
// stream's prefix) in one Write under one lock, so lines of concurrent
// streams never mix and each stream's lines keep their order. The first
// write error is kept and returned to every stream after it: a closed
// stdout ends them all.
type Output struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

// NewOutput returns an Output writing to w.
func NewOutput(w io.Writer) *Output { return &Output{w: w} }

// write writes b in one call, unless an earlier write failed.
func (o *Output) write(b []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return o.err
	}
	if _, err := o.w.Write(b); err != nil {
		o.err = &writeError{err}
	}
	return o.err
}

// Err is the first write error, nil when every write succeeded.
func (o *Output) Err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// writeError marks a failure to write the output, which ends everything,
// apart from a failure to read one pod's log, which ends only that pod.
type writeError struct{ err error }

func (e *writeError) Error() string { return "write: " + e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// MaxLine is the longest line a prefixed stream holds back waiting for
// its end; a longer one is written in MaxLine pieces, each ended by a
// newline and prefixed, so one endless line cannot hold memory.
const MaxLine = 1 << 20

// Stream returns the writer of one pod's log. With a prefix ("pod: ")
// every line is written whole after it, and Close ends a last line that
// has no newline with one. Without one the bytes go through unchanged
// (one pod: the output is its log as it is).
func (o *Output) Stream(prefix string) *LineWriter {
	return &LineWriter{out: o, prefix: []byte(prefix)}
}

// LineWriter is one stream's writer (Output.Stream). It is not safe for
// concurrent use: each stream has its own.
type LineWriter struct {
	out    *Output
	prefix []byte
	// partial is the start of a line whose newline has not come yet.
	partial []byte
}

// Write writes every complete line of p (and of what came before it)
// and keeps the rest for the next Write or Close.
func (l *LineWriter) Write(p []byte) (int, error) {
	if len(l.prefix) == 0 {
		if err := l.out.write(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			take := min(len(p), MaxLine-len(l.partial))
			l.partial = append(l.partial, p[:take]...)
			p = p[take:]
			if len(l.partial) == MaxLine {
				if err := l.flush(); err != nil {
					return 0, err
				}
			}
			continue
		}
		if len(l.partial)+i > MaxLine {
			// The line's start fills a piece of its own first.
			take := MaxLine - len(l.partial)
			l.partial = append(l.partial, p[:take]...)
			p = p[take:]
			if err := l.flush(); err != nil {
				return 0, err
			}
			continue
		}
		l.partial = append(l.partial, p[:i]...)
		p = p[i+1:]
		if err := l.flush(); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// flush writes the held line with its prefix and a newline, in one Write.
func (l *LineWriter) flush() error {
	line := make([]byte, 0, len(l.prefix)+len(l.partial)+1)
	line = append(append(append(line, l.prefix...), l.partial...), '\n')
	l.partial = l.partial[:0]
	return l.out.write(line)
}

// Close writes a last line that had no newline, ending it with one.
func (l *LineWriter) Close() error {
	if len(l.prefix) == 0 || len(l.partial) == 0 {
		return l.out.Err()
	}
	return l.flush()
}
