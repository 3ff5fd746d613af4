//go:build e2e

package kueue

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
)

// envRun names the environment variable that runs this package's tests
// (make e2e-kueue sets it): they need Kueue built (hack/kueue.sh).
const envRun = "SPARKPLUG_E2E_KUEUE"

// env is the environment every test shares.
var env *framework.Env

func TestMain(m *testing.M) {
	if os.Getenv(envRun) == "" {
		fmt.Fprintf(os.Stderr, "kueue: skipped: these tests need Kueue built by hack/kueue.sh: set %s=1 (make e2e-kueue)\n", envRun)
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	e, err := framework.Start(context.Background(), framework.Options{
		Progress: os.Stderr,
		KeepDir:  os.Getenv("SPARKPLUG_E2E_KEEP") != "",
		// A prebuilt binary (make build's bin/sparkplug) instead of
		// building ./cmd/sparkplug.
		PluginBinary: os.Getenv("SPARKPLUG_E2E_PLUGIN"),
		// sidecar (default) or controller.
		Mode:  os.Getenv("SPARKPLUG_E2E_MODE"),
		Kueue: true,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "kueue: start the environment: %v\n", err)
		return 1
	}
	env = e
	fmt.Fprintf(os.Stderr, "kueue: versions: %s; sparkplug in %s mode; logs in %s\n", e.Versions, e.Mode(), e.LogDir())

	return framework.RunSuite(m, e, "kueue")
}

// Given starts a test's fixture.
func Given(t *testing.T) *framework.Given {
	t.Helper()
	return env.Given(t)
}
