// Command sparkplug is the Argo Workflows executor plugin that runs Apache
// Spark applications as workflow steps. See `sparkplug --help`.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(os.Stderr, "sparkplug:", msg)
		}
		os.Exit(exitCode(err))
	}
}
