package execute

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/sparkplug-io/sparkplug/plugin/kueue"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
)

// The queue positions come from Kueue's visibility API, one request per
// LocalQueue per positionsTTL however many nodes ask; an API that does
// not answer (Kueue without its visibility server) is left alone for
// positionsBackoff, and a position it does not list is not known.
func TestQueuePositionsAreAskedOncePerQueue(t *testing.T) {
	var asked, servedQueue atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		switch r.URL.Path {
		case kueue.PendingPath("data", "lq"):
			servedQueue.Add(1)
			fmt.Fprint(w, `{"items":[{"metadata":{"name":"a-kueue"},"positionInLocalQueue":0},{"metadata":{"name":"b-kueue"},"positionInLocalQueue":3}]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	c := &Core{opts: Options{Now: func() time.Time { return now }},
		clients: scope.Clients{Kube: kubernetes.NewForConfigOrDie(&rest.Config{Host: srv.URL})}}
	ctx := context.Background()

	if p, ok := c.kueuePosition(ctx, "data", "lq", "b-kueue"); !ok || p != 3 {
		t.Errorf("b-kueue: %d, %v; want 3", p, ok)
	}
	if p, ok := c.kueuePosition(ctx, "data", "lq", "a-kueue"); !ok || p != 0 {
		t.Errorf("a-kueue: %d, %v; want 0", p, ok)
	}
	if _, ok := c.kueuePosition(ctx, "data", "lq", "gone-kueue"); ok {
		t.Error("a Workload the queue does not list has a position")
	}
	if n := asked.Load(); n != 1 {
		t.Errorf("%d requests for three nodes of one queue within %v, want 1", n, positionsTTL)
	}
	now = now.Add(positionsTTL)
	c.kueuePosition(ctx, "data", "lq", "a-kueue")
	if n := servedQueue.Load(); n != 2 {
		t.Errorf("%d requests once %v passed, want 2", n, positionsTTL)
	}

	// No visibility API: not known, and not asked again for a while.
	if _, ok := c.kueuePosition(ctx, "data", "other", "c-kueue"); ok {
		t.Error("a position from an API that answered 404")
	}
	before := asked.Load()
	now = now.Add(positionsTTL)
	c.kueuePosition(ctx, "data", "other", "c-kueue")
	if asked.Load() != before {
		t.Errorf("the missing API was asked again after %v, want not before %v", positionsTTL, positionsBackoff)
	}
	now = now.Add(positionsBackoff)
	c.kueuePosition(ctx, "data", "other", "c-kueue")
	if asked.Load() != before+1 {
		t.Errorf("the missing API was not asked again after %v", positionsBackoff)
	}
	if len(c.kueuePositions.m) != 1 {
		t.Errorf("%d queues remembered, want 1: a queue not asked about for %v is forgotten", len(c.kueuePositions.m), positionsBackoff)
	}
}
