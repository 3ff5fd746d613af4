package execute

import (
	"context"
	"reflect"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/sparkplug-io/sparkplug/plugin/kueue"
)

// How long a LocalQueue's positions are used before they are asked
// again, and how long a visibility API that did not answer is left
// alone: every queued node of a queue reads them on each pass.
const (
	positionsTTL     = 5 * time.Second
	positionsBackoff = time.Minute
)

// queuePositions are the positions of pending Workloads in their
// LocalQueue, from Kueue's visibility API when it is served (it is an
// option of Kueue's, off by default): one request per LocalQueue per
// positionsTTL, whatever the number of nodes waiting in it.
type queuePositions struct {
	mu sync.Mutex
	m  map[string]positionsEntry // by namespace/localqueue
}

type positionsEntry struct {
	at        time.Time
	positions map[string]int32
	// unavailable: the API did not answer (not served, forbidden); it is
	// asked again after positionsBackoff.
	unavailable bool
}

// position is Workload name's position in LocalQueue queue of
// namespace, 0 the next to be admitted; ok is false when it is not known.
func (c *Core) position(ctx context.Context, namespace, queue, name string) (int32, bool) {
	key := namespace + "/" + queue
	now := c.opts.Now()
	c.positions.mu.Lock()
	e, ok := c.positions.m[key]
	c.positions.mu.Unlock()
	fresh := ok && (now.Sub(e.at) < positionsTTL || e.unavailable && now.Sub(e.at) < positionsBackoff)
	if !fresh {
		e = positionsEntry{at: now, unavailable: true}
		if rc := c.restClient(); rc != nil {
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			body, err := rc.Get().AbsPath(kueue.PendingPath(namespace, queue)).DoRaw(rctx)
			cancel()
			if err == nil {
				if p, err := kueue.Positions(body); err == nil {
					e = positionsEntry{at: now, positions: p}
				}
			}
		}
		c.positions.mu.Lock()
		if c.positions.m == nil {
			c.positions.m = map[string]positionsEntry{}
		}
		for k, old := range c.positions.m {
			if now.Sub(old.at) > positionsBackoff {
				delete(c.positions.m, k) // queues no longer asked about
			}
		}
		c.positions.m[key] = e
		c.positions.mu.Unlock()
	}
	p, ok := e.positions[name]
	return p, ok
}

// restClient is the client of the API server's raw paths, nil without
// one (a fake clientset).
func (c *Core) restClient() rest.Interface {
	if c.clients.Kube == nil || c.clients.Kube.Discovery() == nil {
		return nil
	}
	rc := c.clients.Kube.Discovery().RESTClient()
	if rc == nil || reflect.ValueOf(rc).IsNil() {
		return nil
	}
	return rc
}
