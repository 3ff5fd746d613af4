package cluster

import (
	"context"
	"errors"
	"net"
	"syscall"
	"time"
)

// restartWait bounds how long an in-process client waits out a refused
// connection: the API server restarts in a few seconds.
const restartWait = 30 * time.Second

// dial is the dialer of the clients the tests use in process (Config,
// ConfigForServiceAccount): a connection refused while the API server
// restarts (RestartAPIServer) is tried again every 200 ms, for up to
// restartWait, rather than refused to the client.
//
// Why: client-go's reflectors wait after each refused connection, 0.8 s
// doubling to 30 s plus as much again of jitter, and forget the delay
// only after two minutes without one. The tests' own stand-ins (the
// kubelet of agent pods, the Spark simulator) would see theirs grow with
// each restart, and a soak's later runs wait up to a minute for them.
// The processes the tests start (sparkplug, Argo, KWOK) dial on their
// own, as they would in a cluster.
func (c *Cluster) dial(ctx context.Context, network, address string) (net.Conn, error) {
	var d net.Dialer
	deadline := time.Now().Add(restartWait)
	for {
		conn, err := d.DialContext(ctx, network, address)
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || c.stopped.Load() || time.Now().After(deadline) {
			return conn, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(200 * time.Millisecond):
		}
	}
}
