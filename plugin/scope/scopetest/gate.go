package scopetest

import (
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"
)

// A fake clientset's tracker keeps no history: a watch sees only what
// happens after it is opened. An informer lists, says it has synced, and
// only then opens its watch, so a test that writes right after the sync
// (a driver's status, say) can write into the gap, and the cache never
// sees it. A real API server resumes the watch from the list's
// resourceVersion; the fake cannot. A Gate closes the gap the way the
// server would: a test waits, after the sync, until every resource its
// caches listed is also watched.
type Gate struct {
	mu      sync.Mutex
	listed  map[string]bool
	watched map[string]bool
	delay   time.Duration
}

// fakeWithTracker is what every fake clientset here offers: reactors and
// the tracker behind them.
type fakeWithTracker interface {
	PrependReactor(verb, resource string, reaction k8stesting.ReactionFunc)
	PrependWatchReactor(resource string, reaction k8stesting.WatchReactionFunc)
	Tracker() k8stesting.ObjectTracker
}

// NewGate puts a gate in front of each fake clientset among clients
// (others are passed over). It must be called before any cache starts.
// With openDelay, every watch opens on the tracker only that long after
// it is asked for, as if the informer had been slow: a test of the gate
// widens the gap with it.
func NewGate(openDelay time.Duration, clients ...any) *Gate {
	g := &Gate{listed: map[string]bool{}, watched: map[string]bool{}, delay: openDelay}
	for _, c := range clients {
		f, ok := c.(fakeWithTracker)
		if !ok {
			continue
		}
		f.PrependReactor("list", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
			g.mu.Lock()
			g.listed[key(a)] = true
			g.mu.Unlock()
			return false, nil, nil
		})
		tracker := f.Tracker()
		f.PrependWatchReactor("*", func(a k8stesting.Action) (bool, watch.Interface, error) {
			gvr, ns, k := a.GetResource(), a.GetNamespace(), key(a)
			if g.delay > 0 {
				return true, g.late(tracker, gvr, ns, k), nil
			}
			// Open the watch here, as the default reactor would, so that
			// it is open before the gate says so.
			w, err := tracker.Watch(gvr, ns)
			if err != nil {
				return true, nil, err
			}
			g.opened(k)
			return true, w, nil
		})
	}
	return g
}

func (g *Gate) opened(k string) {
	g.mu.Lock()
	g.watched[k] = true
	g.mu.Unlock()
}

// late returns a watch that opens on the tracker only after the gate's
// delay, as if the informer had been slow to ask for it (a
// reactor cannot just sleep: the fake holds its lock around reactors).
func (g *Gate) late(tracker k8stesting.ObjectTracker, gvr schema.GroupVersionResource, ns, k string) watch.Interface {
	l := &lateWatch{ch: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(l.ch)
		select {
		case <-time.After(g.delay):
		case <-l.stop:
			return
		}
		w, err := tracker.Watch(gvr, ns)
		if err != nil {
			return
		}
		defer w.Stop()
		g.opened(k)
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				select {
				case l.ch <- ev:
				case <-l.stop:
					return
				}
			case <-l.stop:
				return
			}
		}
	}()
	return l
}

type lateWatch struct {
	ch   chan watch.Event
	stop chan struct{}
	once sync.Once
}

func (l *lateWatch) ResultChan() <-chan watch.Event { return l.ch }
func (l *lateWatch) Stop()                          { l.once.Do(func() { close(l.stop) }) }

func key(a k8stesting.Action) string {
	return a.GetResource().String() + " in " + a.GetNamespace()
}

// Wait returns once every resource listed so far is watched; call it
// after the caches say they have synced.
func (g *Gate) Wait(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		var missing []string
		for k := range g.listed {
			if !g.watched[k] {
				missing = append(missing, k)
			}
		}
		g.mu.Unlock()
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("listed but never watched: %v", missing)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
