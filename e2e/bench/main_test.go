//go:build bench

package bench

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
)

// env is the control plane every run shares.
var env *framework.Env

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	e, err := framework.Start(context.Background(), framework.Options{
		Progress: os.Stderr,
		KeepDir:  os.Getenv("SPARKPLUG_E2E_KEEP") != "",
		Defaults: true,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: start the environment: %v\n", err)
		return 1
	}
	env = e
	fmt.Fprintf(os.Stderr, "bench: %s; logs in %s\n", e.Versions, e.LogDir())
	code := m.Run()
	if code != 0 {
		e.DumpLogs(os.Stderr, 20)
	}
	if err := e.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: stop the environment: %v\n", err)
		return max(code, 1)
	}
	return code
}
