//go:build bench

package bench

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
)

// env is the control plane the current runs share: one per mode, started
// by startEnv, one after the other.
var env *framework.Env

// unplayed, while set, leaves every agent pod unplayed (no argoexec, no
// plugin sidecar process): controller mode's runs of more one-step
// workflows than this machine has room for agent processes.
var unplayed atomic.Bool

func TestMain(m *testing.M) { os.Exit(m.Run()) }

// startEnv starts the control plane with sparkplug in mode (stopping it
// when the test ends) and makes it env.
func startEnv(t *testing.T, mode string) {
	t.Helper()
	e, err := framework.Start(context.Background(), framework.Options{
		Progress:        os.Stderr,
		KeepDir:         os.Getenv("SPARKPLUG_E2E_KEEP") != "",
		Defaults:        true,
		Mode:            mode,
		ControllerPprof: true,
		IgnoreAgent:     func(*corev1.Pod) bool { return unplayed.Load() },
	})
	if err != nil {
		t.Fatalf("bench: start the environment (%s mode): %v", mode, err)
	}
	env = e
	fmt.Fprintf(os.Stderr, "bench: %s; sparkplug in %s mode; logs in %s\n", e.Versions, e.Mode(), e.LogDir())
	t.Cleanup(func() {
		if t.Failed() {
			e.DumpLogs(os.Stderr, 20)
		}
		stopOperator()
		if err := e.Stop(); err != nil {
			t.Errorf("bench: stop the environment: %v", err)
		}
	})
}
