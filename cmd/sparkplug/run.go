package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	wfrun "github.com/sparkplug-io/sparkplug/plugin/run"
)

const runSummary = `Submit a Workflow, wait for it to end and print how it ended: the workflow's phase,
then one line per Spark node (phase, message, application id, driver pod), as
argo submit --wait does, without Argo's CLI. The chart's helm test runs it, in a Pod
of the sparkplug image, on a Workflow with one small Spark step.

  sparkplug run -f examples/spark-pi.yaml -n spark-jobs
  sparkplug run -f wf.yaml --timeout 30m --keep

While it waits, a line goes to stderr each time a Spark node's phase changes. A
Workflow that Succeeded is deleted (its drivers with it) unless --keep; one that did
not, or did not end within --timeout, is kept and named, and the exit status is 1.
Interrupted, it stops waiting and leaves the Workflow running. -o json or yaml prints
the result as a SparkRun instead (the workflow's phase and each Spark step's phase,
message and outputs; docs/cli.md has its fields), the exit status the same.

Needs, in the namespace: create, get and delete on workflows.`

type runOptions struct {
	kubeconfig, context, file string
	output                    printFormat
	follow                    wfrun.Options
}

// runFlags binds run's flags to o.
func runFlags(o *runOptions, stdout io.Writer) *pflag.FlagSet {
	fs := newFlagSet("run -f FILE", runSummary, stdout)
	fs.StringVarP(&o.file, "filename", "f", "", "the Workflow to submit (YAML or JSON); - reads stdin")
	fs.SetNormalizeFunc(fileIsFilename)
	fs.StringVarP(&o.follow.Namespace, "namespace", "n", "", "the namespace to run it in (default: the kubeconfig context's)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)")
	fs.StringVar(&o.context, "context", "", "the kubeconfig context to use (default: its current context)")
	fs.DurationVar(&o.follow.Timeout, "timeout", 10*time.Minute, "how long to wait for the Workflow's end; 0: until interrupted")
	fs.DurationVar(&o.follow.Interval, "interval", wfrun.DefaultInterval, "the time between two reads of the Workflow")
	fs.BoolVar(&o.follow.Keep, "keep", false, "keep the Workflow when it Succeeded (one that did not is always kept)")
	bindPrintOutput(fs, &o.output, false, "lines to read; json and yaml hold each Spark step's phase, message and outputs")
	return fs
}

func runRun(args []string, stdout, stderr io.Writer) error {
	return runMain(args, os.Stdin, stdout, stderr)
}

func runMain(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	o := runOptions{}
	fs := runFlags(&o, stdout)
	if err := parseFlags(fs, "run", args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usageError("run", fmt.Errorf("unexpected arguments %q; give the Workflow with -f", fs.Args()))
	case o.file == "":
		return usageError("run", errors.New("give the Workflow to submit with -f FILE (- reads stdin)"))
	case o.follow.Timeout < 0:
		return usageError("run", fmt.Errorf("--timeout %s: must not be negative", o.follow.Timeout))
	case o.follow.Interval <= 0:
		return usageError("run", fmt.Errorf("--interval %s: must be positive", o.follow.Interval))
	}
	if err := inputExists(o.file); err != nil {
		return err
	}
	var data []byte
	var err error
	if o.file == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, maxRunFile+1))
	} else {
		data, err = readBounded(o.file)
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", o.file, err)
	}
	if len(data) > maxRunFile {
		return fmt.Errorf("%s: more than %d bytes; a Workflow is smaller", o.file, maxRunFile)
	}
	wf, err := wfrun.Parse(data)
	if err != nil {
		return fmt.Errorf("%s: %w", o.file, err)
	}
	_, wfc, ns, err := clusterClients(o.kubeconfig, o.context, o.follow.Namespace)
	if err != nil {
		return err
	}
	o.follow.Namespace = ns
	if err := wfrun.Place(wf, ns); err != nil {
		return fmt.Errorf("%s: %w", o.file, err)
	}
	o.follow.Out, o.follow.Progress = stdout, stderr
	if o.output.structured() {
		o.follow.Out = nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	last, err := wfrun.Follow(ctx, wfc, wf, o.follow)
	if last != nil && o.output.structured() {
		if werr := writeStructured(stdout, &o.output, wfrun.NewResult(last)); werr != nil && err == nil {
			err = werr
		}
	}
	return err
}

// maxRunFile bounds the file run reads: the API server takes objects of
// at most 1.5 MiB.
const maxRunFile = 3 << 20

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxRunFile+1))
}
