package logs

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
)

func TestLineWriter(t *testing.T) {
	tests := []struct {
		name   string
		prefix string
		writes []string
		want   string
	}{
		{"prefixed lines", "p: ", []string{"a\nb\n"}, "p: a\np: b\n"},
		{"a line across writes", "p: ", []string{"he", "llo", " world\nnext", "\n"}, "p: hello world\np: next\n"},
		{"a last line without newline gets one", "p: ", []string{"a\nb"}, "p: a\np: b\n"},
		{"an empty line", "p: ", []string{"\n\n"}, "p: \np: \n"},
		{"no prefix: the bytes as they are", "", []string{"a\nb", "c"}, "a\nbc"},
		{"nothing", "p: ", nil, ""},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		w := NewOutput(&buf).Stream(tt.prefix)
		for _, s := range tt.writes {
			if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
				t.Fatalf("%s: Write = %d, %v", tt.name, n, err)
			}
		}
		must(t, w.Close())
		if buf.String() != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, buf.String(), tt.want)
		}
	}
}

// A line longer than MaxLine is written in pieces, each a prefixed line.
func TestLongLinesAreSplit(t *testing.T) {
	var buf bytes.Buffer
	w := NewOutput(&buf).Stream("p: ")
	long := strings.Repeat("x", 2*MaxLine+10)
	for _, chunk := range []string{long[:100], long[100:], "\nend\n"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 4 || lines[3] != "p: end" {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
	for i, want := range []int{MaxLine, MaxLine, 10} {
		if len(lines[i]) != len("p: ")+want || !strings.HasPrefix(lines[i], "p: x") {
			t.Errorf("piece %d: %d characters, want %d", i, len(lines[i])-3, want)
		}
	}
	// A newline just past the limit: the line's first MaxLine bytes
	// first, then the rest.
	buf.Reset()
	w = NewOutput(&buf).Stream("p: ")
	_, _ = w.Write([]byte(strings.Repeat("y", MaxLine+1) + "\n"))
	if got := strings.Split(buf.String(), "\n"); len(got) != 3 || got[1] != "p: y" {
		t.Errorf("%d lines, second %q", len(got), got[1])
	}
}

// recorder is a writer that records each Write call apart, as a terminal
// or pipe would receive them.
type recorder struct {
	mu     sync.Mutex
	writes []string
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, string(p))
	return len(p), nil
}

// Concurrent streams writing in chunks of any size never mix two lines:
// every Write to the output is whole lines of one stream, prefixed, and
// each stream's lines keep their order.
func TestConcurrentStreamsWriteWholeLines(t *testing.T) {
	const streams, lines = 8, 500
	rec := &recorder{}
	out := NewOutput(rec)
	var wg sync.WaitGroup
	for s := 0; s < streams; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			var log strings.Builder
			for i := 0; i < lines; i++ {
				fmt.Fprintf(&log, "stream %d line %d %s\n", s, i, strings.Repeat("z", i%37))
			}
			w := out.Stream(fmt.Sprintf("pod-%d: ", s))
			rnd := rand.New(rand.NewSource(int64(s)))
			b := []byte(log.String())
			for len(b) > 0 {
				n := min(len(b), 1+rnd.Intn(64))
				if _, err := w.Write(b[:n]); err != nil {
					t.Error(err)
					return
				}
				b = b[n:]
			}
			if err := w.Close(); err != nil {
				t.Error(err)
			}
		}(s)
	}
	wg.Wait()
	next := make([]int, streams)
	for _, write := range rec.writes {
		if strings.Count(write, "\n") != 1 || !strings.HasSuffix(write, "\n") {
			t.Fatalf("a write that is not one whole line: %q", write)
		}
		var s, s2, i int
		if _, err := fmt.Sscanf(write, "pod-%d: stream %d line %d", &s, &s2, &i); err != nil || s != s2 {
			t.Fatalf("a mixed line: %q (%v)", write, err)
		}
		if want := fmt.Sprintf("pod-%d: stream %d line %d %s\n", s, s, i, strings.Repeat("z", i%37)); write != want {
			t.Fatalf("line %q, want %q", write, want)
		}
		if i != next[s] {
			t.Fatalf("stream %d: line %d after %d", s, i, next[s]-1)
		}
		next[s]++
	}
	for s, n := range next {
		if n != lines {
			t.Errorf("stream %d: %d lines, want %d", s, n, lines)
		}
	}
}

type failing struct{ n int }

func (f *failing) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("broken pipe")
}

// The first write error ends every stream, and is kept.
func TestWriteErrorEndsEveryStream(t *testing.T) {
	f := &failing{}
	out := NewOutput(f)
	a, b := out.Stream("a: "), out.Stream("b: ")
	if _, err := a.Write([]byte("x\n")); err == nil {
		t.Fatal("no error")
	}
	_, err := b.Write([]byte("y\n"))
	var we *writeError
	if !errors.As(err, &we) || f.n != 1 || out.Err() == nil {
		t.Errorf("second stream: %v after %d writes", err, f.n)
	}
}
