package framework

// The suite's own limit on the tests that run at once, which starts the
// longest first.

import (
	"sync"
	"testing"
	"time"
)

// Slots limits how many parallel tests run at once, as go test's -parallel
// does, but hands the free slots to the tests that wait longest for the
// clock first (Long): go test releases its parallel tests in no set order,
// so a cron test that waits whole minutes could start last and be the tier's
// tail by a minute. The suite runs go test with a -parallel above its
// number of tests and takes its limit here. A test with parallel subtests
// takes no slot (its subtests do): it would hold one while they wait.
type Slots struct {
	mu   sync.Mutex
	free int
	// settled is closed once the tests released together have had the
	// time to line up (settle), so that the first slots go by priority,
	// not by who came first.
	settled     chan struct{}
	settleOnce  sync.Once
	settleAfter time.Duration
	waiting     [2][]chan struct{} // by priority: Long, then the rest
}

// settle is how long the first test to ask waits for the others released
// with it before any slot is handed out: once per suite.
const settle = 500 * time.Millisecond

// NewSlots are n slots.
func NewSlots(n int) *Slots {
	return &Slots{free: n, settled: make(chan struct{}), settleAfter: settle}
}

// Priority orders the tests waiting for a slot.
type Priority int

const (
	// Long: the test waits for the clock (a cron minute), longer than
	// any other test runs.
	Long Priority = iota
	// Normal: every other test.
	Normal
)

// Parallel is t.Parallel, then a slot held until t ends.
func (s *Slots) Parallel(t *testing.T, p Priority) {
	t.Helper()
	t.Parallel()
	s.acquire(p)
	t.Cleanup(s.release)
}

// acquire waits for a slot.
func (s *Slots) acquire(p Priority) {
	s.settleOnce.Do(func() { time.AfterFunc(s.settleAfter, s.open) })
	ch := make(chan struct{})
	s.mu.Lock()
	s.waiting[p] = append(s.waiting[p], ch)
	s.grant()
	s.mu.Unlock()
	<-ch
}

// open starts handing out slots: the tests released together have lined
// up.
func (s *Slots) open() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.settled:
	default:
		close(s.settled)
	}
	s.grant()
}

// release frees a slot.
func (s *Slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free++
	s.grant()
}

// grant hands free slots to the waiting tests, highest priority first,
// once the first tests have lined up. s.mu is held.
func (s *Slots) grant() {
	select {
	case <-s.settled:
	default:
		return
	}
	for s.free > 0 {
		var ch chan struct{}
		for p := range s.waiting {
			if len(s.waiting[p]) > 0 {
				ch, s.waiting[p] = s.waiting[p][0], s.waiting[p][1:]
				break
			}
		}
		if ch == nil {
			return
		}
		s.free--
		close(ch)
	}
}
