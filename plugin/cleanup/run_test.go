package cleanup

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A process's one loop runs each part at its own interval, the search
// first when asked, and nothing once its context ends.
func TestRunRunsEachPartAtItsInterval(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var expires, searches atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, Loop{TTLInterval: 10 * time.Millisecond, Expire: func(context.Context) { expires.Add(1) },
			LeftoverInterval: time.Hour, Leftovers: func(context.Context) { searches.Add(1) }, SearchFirst: true})
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	<-done
	if n := expires.Load(); n < 3 {
		t.Errorf("Expire ran %d times in 100ms every 10ms, want several", n)
	}
	if n := searches.Load(); n != 1 {
		t.Errorf("Leftovers ran %d times with an hour's interval, want once, first", n)
	}
	after := expires.Load()
	time.Sleep(30 * time.Millisecond)
	if expires.Load() != after {
		t.Error("Expire ran after Run returned")
	}
}

// Without a LeftoverInterval the search runs every TTLInterval (the
// monitor's own), and not first unless asked.
func TestRunSearchesEveryTTLIntervalByDefault(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Millisecond)
	defer cancel()
	var searches atomic.Int32
	Run(ctx, Loop{TTLInterval: 10 * time.Millisecond, Leftovers: func(context.Context) { searches.Add(1) }})
	if n := searches.Load(); n < 3 {
		t.Errorf("Leftovers ran %d times in 55ms every 10ms, want several", n)
	}
}
