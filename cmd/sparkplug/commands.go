package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

type command struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "answer the Argo agent's template.execute calls (the plugin sidecar)", runServe},
		{"render", "print the objects the plugin would create for a spark step (and the spark-submit argv of that launcher), without a cluster", runRender},
		{"convert", "turn Spark operator (Scheduled)SparkApplications into (Cron)Workflows with a spark step", runConvert},
		{"schedule", "check a CronWorkflow schedule as Argo does and list its next runs", runSchedule},
		{"version", "print the version", func(_ []string, stdout, _ io.Writer) error {
			_, err := fmt.Fprintln(stdout, version)
			return err
		}},
	}
}

func usage() string {
	var b strings.Builder
	b.WriteString("sparkplug runs Apache Spark applications as Argo Workflows steps.\n\nUsage:\n  sparkplug <command> [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.summary)
	}
	b.WriteString("\nRun 'sparkplug <command> --help' for a command's flags.\n")
	return b.String()
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		_, err := io.WriteString(stdout, usage())
		return err
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(args[1:], stdout, stderr)
			if errors.Is(err, pflag.ErrHelp) {
				return nil
			}
			return err
		}
	}
	return fmt.Errorf("unknown command %q\n\n%s", args[0], usage())
}

// newFlagSet returns a flag set that prints its usage to stdout on --help.
func newFlagSet(name, summary string, stdout io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: sparkplug %s [flags]\n\n%s\n\nFlags:\n%s", name, summary, fs.FlagUsages())
	}
	return fs
}
