package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
)

const (
	defaultWorkflow = "examples/spark-dag.yaml"
	// defaultRun is how long each simulated driver runs.
	defaultRun = 6 * time.Second
	// defaultTimeout bounds the wait for the workflow.
	defaultTimeout = 5 * time.Minute
)

type options struct {
	workflow string
	run      time.Duration
	timeout  time.Duration
	keep     bool
	stateDir string
	plugin   string
	// daemon: this process is the background half of --keep.
	daemon bool
	down   bool
}

func (o options) validate() error {
	if o.run < 0 || o.timeout <= 0 {
		return errors.New("--run must not be negative and --timeout must be positive")
	}
	if o.stateDir == "" {
		return errors.New("--state-dir is required")
	}
	return nil
}

// run parses args and runs the demo, keeps it, or takes a kept one down.
// It returns the exit code.
func run(args []string, stdout, stderr io.Writer) (int, error) {
	o := options{}
	fs := pflag.NewFlagSet("demo", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: demo [flags]     run examples/spark-dag.yaml on a local control plane\n       demo down         stop a demo left running with --keep\n\nFlags:\n%s", fs.FlagUsages())
	}
	fs.StringVar(&o.workflow, "workflow", defaultWorkflow, "the workflow to run, relative to the repository root")
	fs.DurationVar(&o.run, "run", defaultRun, "how long each simulated Spark driver runs before it exits 0")
	fs.DurationVar(&o.timeout, "timeout", defaultTimeout, "how long to wait for the workflow")
	fs.BoolVar(&o.keep, "keep", false, "leave the environment running in the background (stop it with: demo down)")
	fs.StringVar(&o.stateDir, "state-dir", filepath.Join(os.TempDir(), "sparkplug-demo"), "where a kept demo keeps its pid and log")
	fs.StringVar(&o.plugin, "plugin", "", "a sparkplug binary to run instead of building ./cmd/sparkplug")
	fs.BoolVar(&o.daemon, "daemon", false, "internal: run as the background half of --keep")
	_ = fs.MarkHidden("daemon")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0, nil
		}
		return 2, err
	}
	switch rest := fs.Args(); {
	case len(rest) == 1 && rest[0] == "down":
		o.down = true
	case len(rest) > 0:
		fs.Usage()
		return 2, fmt.Errorf("unexpected arguments %q", rest)
	}
	if err := o.validate(); err != nil {
		return 2, err
	}
	switch {
	case o.down:
		return down(o, stdout)
	case o.keep && !o.daemon:
		return startKept(o, stdout)
	default:
		return demo(o, stdout)
	}
}
