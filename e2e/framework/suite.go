package framework

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
)

// RunSuite runs a package's tests in e, started by its TestMain, and
// stops e after them: on SIGINT or SIGTERM too (the environment's
// processes would outlive the test binary). When a test failed, it dumps
// the last lines of every component's log and then names the failed
// tests, last, as the dump is long. name prefixes what it prints.
func RunSuite(m *testing.M, e *Env, name string) int {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(signals)
	go func() {
		sig, ok := <-signals
		if !ok {
			return
		}
		fmt.Fprintf(os.Stderr, "%s: %v: stopping the environment\n", name, sig)
		_ = e.Stop()
		os.Exit(1)
	}()

	code := m.Run()
	if code != 0 {
		e.DumpLogs(os.Stderr, 40)
		fmt.Fprintf(os.Stderr, "%s: failed tests: %s\n", name, strings.Join(e.FailedTests(), ", "))
	}
	if err := e.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: stop the environment: %v\n", name, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
