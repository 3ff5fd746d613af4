package archive

import (
	"bytes"
	"fmt"
	"io"
)

// tail keeps the last max bytes written to it, in a ring: a driver's
// log is cut at its start, since its end is where a failure shows.
type tail struct {
	ring    []byte
	next    int   // where the next byte goes
	full    bool  // the ring wrapped at least once
	dropped int64 // bytes overwritten
}

func newTail(max int) *tail { return &tail{ring: make([]byte, 0, max)} }

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	max := cap(t.ring)
	if !t.full {
		room := max - len(t.ring)
		if len(p) <= room {
			t.ring = append(t.ring, p...)
			t.next = len(t.ring) % max
			t.full = len(t.ring) == max
			return n, nil
		}
		t.ring = append(t.ring, p[:room]...)
		p = p[room:]
		t.next, t.full = 0, true
	}
	if len(p) > max {
		t.dropped += int64(len(p) - max)
		p = p[len(p)-max:]
	}
	t.dropped += int64(len(p))
	for len(p) > 0 {
		c := copy(t.ring[t.next:], p)
		p = p[c:]
		t.next = (t.next + c) % max
	}
	return n, nil
}

// bytes is what is stored: the kept bytes, after a line saying how many
// were dropped (from the first whole line kept).
func (t *tail) bytes() []byte {
	if t.dropped == 0 {
		return t.ring
	}
	kept := append(append([]byte(nil), t.ring[t.next:]...), t.ring[:t.next]...)
	dropped := t.dropped
	if i := bytes.IndexByte(kept, '\n'); i >= 0 && i < len(kept)-1 {
		dropped += int64(i + 1)
		kept = kept[i+1:]
	}
	head := fmt.Sprintf("[sparkplug: the first %d bytes of this log were dropped; the archive keeps its end, at most %d bytes]\n", dropped, cap(t.ring))
	return append([]byte(head), kept...)
}

// readTail reads r to its end, keeping the last max bytes.
func readTail(r io.Reader, max int) ([]byte, error) {
	t := newTail(max)
	if _, err := io.Copy(t, r); err != nil {
		return nil, err
	}
	return t.bytes(), nil
}
