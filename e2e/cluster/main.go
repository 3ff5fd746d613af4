package cluster

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// dumpLines is how much of each component's log Main prints on failure.
const dumpLines = 40

// Main starts one cluster for a whole test binary, hands it to set, runs
// the tests, prints the end of every component's log if they failed, and
// stops the cluster, also on SIGINT/SIGTERM. Use it from TestMain:
//
//	var testCluster *cluster.Cluster
//
//	func TestMain(m *testing.M) {
//		os.Exit(cluster.Main(m, cluster.Options{ControllerManager: true},
//			func(c *cluster.Cluster) { testCluster = c }))
//	}
//
// If the test binary dies without returning (a panic in a test goroutine,
// the -timeout), Pdeathsig still kills every component.
func Main(m *testing.M, opts Options, set func(*Cluster)) int {
	c, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "start test cluster: %v\n", err)
		return 1
	}

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	go func() {
		sig := <-signals
		fmt.Fprintf(os.Stderr, "%v: stopping test cluster\n", sig)
		_ = c.Stop()
		os.Exit(1)
	}()

	set(c)
	code := m.Run()
	if code != 0 {
		c.DumpLogs(os.Stderr, dumpLines)
	}
	if err := c.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stop test cluster: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
