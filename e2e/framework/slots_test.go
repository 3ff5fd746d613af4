package framework

import (
	"sync"
	"testing"
	"time"
)

// Tests released together get the slots by priority, the long ones first,
// and never more than the slots run at once.
func TestSlotsStartTheLongTestsFirst(t *testing.T) {
	s := NewSlots(2)
	s.settleAfter = time.Hour // opened below, once all five wait
	var mu sync.Mutex
	var order []string
	running, most := 0, 0
	done := make(chan struct{})
	var wg sync.WaitGroup
	start := func(name string, p Priority) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.acquire(p)
			mu.Lock()
			order = append(order, name)
			running++
			most = max(most, running)
			mu.Unlock()
			<-done
			mu.Lock()
			running--
			mu.Unlock()
			s.release()
		}()
	}
	// The normal tests ask first, as go test may release them.
	for _, name := range []string{"n1", "n2", "n3"} {
		start(name, Normal)
	}
	start("l1", Long)
	start("l2", Long)
	waitUntil(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.waiting[Long])+len(s.waiting[Normal]) == 5
	})
	s.open()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(order)
		mu.Unlock()
		if n == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	first := append([]string(nil), order...)
	mu.Unlock()
	if len(first) != 2 || first[0][0] != 'l' || first[1][0] != 'l' {
		t.Errorf("the first two slots went to %v, want l1 and l2", first)
	}
	close(done)
	wg.Wait()
	if len(order) != 5 {
		t.Errorf("%d tests got a slot, want 5: %v", len(order), order)
	}
	if most > 2 {
		t.Errorf("%d tests ran at once with 2 slots", most)
	}
}

func waitUntil(t *testing.T, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !done(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}
