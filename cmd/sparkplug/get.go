package main

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/sparkplug-io/sparkplug/plugin/get"
)

var getSummary = fmt.Sprintf(`List the Spark steps of a namespace, or of every namespace (-A), as kubectl get
sparkapplications lists the Spark operator's: the Spark nodes of the Workflows, with
their phase, message (cut at %d characters; whole with -o wide), application id,
driver pod and age. WORKFLOW lists only that Workflow's steps. Alias: list.

  sparkplug get                          # the steps of the kubeconfig context's namespace
  sparkplug get -A                       # of every namespace
  sparkplug get spark-dag-x7k2p -o wide  # one workflow's, with the driver's status, attempt, times
  sparkplug get -w                       # then each step that changes, until interrupted
  sparkplug get -o json                  # a %s of the steps (docs/cli.md has its fields)

--watch prints the steps, then a row for each step that changes (with -o json or yaml,
one object each), until interrupted.

Needs: list workflows (and watch workflows for --watch), and get pods for -o wide,
json and yaml (the drivers' status), in the namespace, or in every namespace with -A.`, get.TableMessage, get.ListKind)

type getOptions struct {
	kubeconfig, context string
	output              printFormat
	run                 get.Options
}

// getFlags binds get's flags to o.
func getFlags(o *getOptions, stdout io.Writer) *pflag.FlagSet {
	fs := newFlagSet("get [WORKFLOW]", getSummary, stdout)
	fs.StringVarP(&o.run.Namespace, "namespace", "n", "", "the namespace to list (default: the kubeconfig context's)")
	fs.BoolVarP(&o.run.AllNamespaces, "all-namespaces", "A", false, "list the steps of every namespace")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)")
	fs.StringVar(&o.context, "context", "", "the kubeconfig context to use (default: its current context)")
	bindPrintOutput(fs, &o.output, true, "a table")
	fs.BoolVarP(&o.run.Watch, "watch", "w", false, "after the list, print each step that changes, until interrupted")
	return fs
}

func runGet(args []string, stdout, stderr io.Writer) error {
	o := getOptions{}
	fs := getFlags(&o, stdout)
	if err := parseFlags(fs, "get", args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 1:
		return usageError("get", fmt.Errorf("give at most one workflow: sparkplug get [WORKFLOW], got %d arguments", fs.NArg()))
	case fs.NArg() == 1 && o.run.AllNamespaces:
		return usageError("get", fmt.Errorf("give a workflow or -A, not both: a workflow is named in one namespace (-n)"))
	case fs.NArg() == 1:
		o.run.Workflow = fs.Arg(0)
	}
	kube, wfc, ns, err := clusterClients(o.kubeconfig, o.context, o.run.Namespace)
	if err != nil {
		return err
	}
	o.run.Namespace, o.run.Format, o.run.Notices = ns, get.Format(o.output.value), stderr
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := get.Run(ctx, kube, wfc, o.run, stdout); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}
