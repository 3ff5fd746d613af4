package main

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"

	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/ui"
)

var uiSummary = fmt.Sprintf(`Forward the Spark UI of a running Spark step's driver to a local port, as kubectl
port-forward does (and sparkctl forward for a SparkApplication), and print its URL.

NODE is one Spark node: Argo's node id, its name (wf.step) or its display name
(step). Without it, the workflow's one running Spark node. The pod is the driver the
node's outputs name (driver-pod), only when it is the one sparkplug launched for the
Workflow; the port is its driver container's spark-ui port (spark.ui.port, where a
UI Service of sparkUIOptions forwards), else %d.

  sparkplug ui spark-dag-x7k2p pi-a           # at http://127.0.0.1:%d
  sparkplug ui spark-dag-x7k2p --port 0       # any free local port
  sparkplug ui spark-dag-x7k2p pi-a --address 0.0.0.0 --port 8080

It forwards until interrupted, or until the driver ends or its connection is lost
(exit 1). A node that is not running, or has no driver, is a one-line error: an
ended node's application is in the Spark History Server (its history-ui output).

Needs, in the namespace: %s.`, spark.UIPort, spark.UIPort, ui.Rights)

type uiOptions struct {
	kubeconfig, context, namespace string
	run                            ui.Options
}

// uiFlags binds ui's flags to o.
func uiFlags(o *uiOptions, stdout io.Writer) *pflag.FlagSet {
	fs := newFlagSet("ui WORKFLOW [NODE]", uiSummary, stdout)
	fs.StringVarP(&o.namespace, "namespace", "n", "", "the workflow's namespace (default: the kubeconfig context's)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)")
	fs.StringVar(&o.context, "context", "", "the kubeconfig context to use (default: its current context)")
	fs.StringSliceVar(&o.run.Addresses, "address", []string{"127.0.0.1"}, "the local addresses to listen on, comma-separated (localhost, or IP addresses)")
	fs.IntVar(&o.run.Port, "port", spark.UIPort, "the local port; 0: any free one")
	return fs
}

func (o *uiOptions) validate(args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return fmt.Errorf("give the workflow, and optionally one node: sparkplug ui WORKFLOW [NODE], got %d arguments", len(args))
	}
	o.run.Workflow = args[0]
	if len(args) == 2 {
		o.run.Node = args[1]
	}
	if o.run.Port < 0 || o.run.Port > 65535 {
		return fmt.Errorf("--port %d: give a port from 1 to 65535, or 0 for any free one", o.run.Port)
	}
	if len(o.run.Addresses) == 0 {
		return fmt.Errorf("--address: give at least one address")
	}
	return nil
}

func runUI(args []string, stdout, stderr io.Writer) error {
	o := uiOptions{}
	fs := uiFlags(&o, stdout)
	if err := parseFlags(fs, "ui", args); err != nil {
		return err
	}
	if err := o.validate(fs.Args()); err != nil {
		return usageError("ui", err)
	}
	cfg, ns, err := clusterConfig(o.kubeconfig, o.context, o.namespace)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	wfc, err := wfclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	o.run.Namespace, o.run.ErrOut = ns, stderr
	o.run.Ready = func(f ui.Forwarding) {
		fmt.Fprintf(stdout, "The Spark UI of node %s (driver %s, port %d): %s (Ctrl-C stops)\n", f.Node, f.Driver, f.Port, strings.Join(f.URLs, " "))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := ui.Run(ctx, kube, wfc, cfg, o.run); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}
