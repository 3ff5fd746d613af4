//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/e2e/framework"
)

// env is the environment every test shares.
var env *framework.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	e, err := framework.Start(context.Background(), framework.Options{
		Progress: os.Stderr,
		KeepDir:  os.Getenv("SPARKPLUG_E2E_KEEP") != "",
		// A prebuilt binary (make build's bin/sparkplug) instead of
		// building ./cmd/sparkplug.
		PluginBinary: os.Getenv("SPARKPLUG_E2E_PLUGIN"),
		// mount-namespace or host-file; empty chooses.
		AgentTokenMode: argo.TokenMode(os.Getenv("SPARKPLUG_E2E_TOKEN_MODE")),
		// Another Argo version pinned by hack/argo.sh (make e2e ARGO=...).
		Argo: os.Getenv("SPARKPLUG_E2E_ARGO"),
		// sidecar (default) or controller (make e2e-controller).
		Mode: os.Getenv("SPARKPLUG_E2E_MODE"),
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: start the environment: %v\n", err)
		return 1
	}
	env = e
	fmt.Fprintf(os.Stderr, "e2e: versions: %s; sparkplug in %s mode\n", e.Versions, e.Mode())
	fmt.Fprintf(os.Stderr, "e2e: agents get the plugin token via %s; logs in %s\n", e.Agents.Mode(), e.LogDir())

	return framework.RunSuite(m, e, "e2e")
}

// slots are the suite's limit on the tests that run at once (eight), which
// starts the cron tests, which wait for whole minutes, first
// (framework.Slots). make e2e runs go test with -parallel 64, above the
// suite's number of tests, so that go test's own limit does not order them.
var slots = framework.NewSlots(8)

// parallel runs t beside the other tests, in one of the suite's slots. A
// test with parallel subtests calls t.Parallel instead (its subtests take
// the slots).
func parallel(t *testing.T) {
	t.Helper()
	slots.Parallel(t, framework.Normal)
}

// parallelLong is parallel for a test that waits for the clock (a cron
// minute): it gets a slot before the others.
func parallelLong(t *testing.T) {
	t.Helper()
	slots.Parallel(t, framework.Long)
}

// onceAcrossModes is for a test whose subject the mode does not change: an
// install (kustomize, the chart), a command a person runs (sparkplug logs,
// sparkplug monitor), what KWOK serves, Argo's own cron policies, the
// examples' validity. It runs in the sidecar tier (make e2e) and is
// skipped, saying why, in controller mode (make e2e-controller): there
// what it would also exercise of sparkplug (launching, following, results,
// restarts, stops) is covered by the tests that run in both modes. See
// docs/development.md, "Which e2e tests run in both modes".
func onceAcrossModes(t *testing.T, subject string) {
	t.Helper()
	if env.Mode() == framework.ModeController {
		t.Skipf("runs once, in sidecar mode (make e2e): its subject, %s, does not depend on the mode", subject)
	}
}

// Given starts a test's fixture.
func Given(t *testing.T) *framework.Given {
	t.Helper()
	return env.Given(t)
}
