// Command sparkplug is the Argo Workflows executor plugin that runs Apache
// Spark applications as workflow steps. See `sparkplug --help`.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/sparkplug-io/sparkplug/plugin/redact"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		report(os.Stderr, err)
		os.Exit(exitCode(err))
	}
}

// report writes the line a failed command ends with; it may quote a flag's
// or a file's value, so it goes through redact.Value.
func report(w io.Writer, err error) {
	if msg := err.Error(); msg != "" {
		fmt.Fprintln(w, "sparkplug:", redact.Value(msg))
	}
}
