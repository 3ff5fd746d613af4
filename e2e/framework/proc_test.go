package framework

import (
	"os"
	"testing"
)

// A process's private memory is part of its resident set, and grows with
// what it allocates and touches.
func TestProcPrivateIsPartOfTheResidentSet(t *testing.T) {
	before, err := ProcPrivate(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<20)
	for i := range buf {
		if i%4096 == 0 {
			buf[i] = 1
		}
	}
	after, err := ProcPrivate(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	_, rss, err := ProcMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after-before < 48<<20 {
		t.Errorf("private memory grew by %d bytes after touching 64 MiB; want at least 48 MiB", after-before)
	}
	if after > rss {
		t.Errorf("private memory %d is more than the resident set %d", after, rss)
	}
	if buf[4096] != 1 {
		t.Fatal("unreachable: keeps buf alive")
	}
	if _, err := ProcPrivate(-1); err == nil {
		t.Error("ProcPrivate of no process: no error")
	}
}
