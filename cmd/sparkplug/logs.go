package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sparkplug-io/sparkplug/plugin/logs"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

var logsSummary = fmt.Sprintf(`Print or follow the driver logs of a workflow's Spark nodes, as argo logs does for
its pods. The drivers are the pods sparkplug launched for the Workflow (its uid's
label, spark-role=driver, the name and owner sparkplug gives them); a pod that only
copies their labels is never printed.

NODE is one Spark node: Argo's node id, its name (wf.step, wf[0].step) or its
display name (step). Without it, every Spark node, in the order the nodes started.
Each node's latest attempt unless --attempt says otherwise; -e adds the executors.
-p prints the previous instance of each container, as kubectl logs -p; Spark's pods
never restart their containers (restartPolicy Never), so only a container that does,
such as a pod template's sidecar (-c), has one: a node's earlier run is an attempt.
When several pods are printed, each line starts with its pod's name.

  sparkplug logs spark-dag-x7k2p                  # every Spark node's driver
  sparkplug logs spark-dag-x7k2p pi-a -f          # follow one node, waiting for its driver
  sparkplug logs spark-dag-x7k2p pi-a --attempt all --tail 100
  sparkplug logs spark-dag-x7k2p pi-a -e --since 10m

-f follows until the nodes followed have finished (without NODE: the workflow) and
their logs ended, or until interrupted; it waits for drivers that do not exist or have
not started yet, and streams at most %d logs at once (the others wait for one to end).
A driver deleted (timeToLiveSeconds, the Workflow deleted) took its log with it: keep
logs with log archiving, or read the application in the Spark History Server.

Needs, in the namespace: get workflows, list and watch pods, get pods/log.`, logs.MaxStreams)

type logsOptions struct {
	kubeconfig, context, namespace string
	attempt, sinceTime             string
	run                            logs.Options
}

// logsFlags binds logs' flags to o.
func logsFlags(o *logsOptions, stdout io.Writer) *pflag.FlagSet {
	fs := newFlagSet("logs WORKFLOW [NODE]", logsSummary, stdout)
	fs.StringVarP(&o.namespace, "namespace", "n", "", "the workflow's namespace (default: the kubeconfig context's)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)")
	fs.StringVar(&o.context, "context", "", "the kubeconfig context to use (default: its current context)")
	fs.StringVar(&o.attempt, "attempt", "latest", "which attempts of each node (restartPolicy): latest, all, or a number from 1")
	fs.BoolVarP(&o.run.Executors, "executors", "e", false, "also print the executors of each driver printed")
	fs.StringVarP(&o.run.Container, "container", "c", "", "the container to print (default: "+spark.DriverContainerName+" of a driver, "+spark.ExecutorContainerName+" of an executor)")
	fs.BoolVarP(&o.run.Follow, "follow", "f", false, "stream the logs, waiting for drivers to appear and start")
	fs.BoolVarP(&o.run.Previous, "previous", "p", false, "print the log of the container's previous instance, as kubectl logs -p")
	fs.DurationVar(&o.run.Since, "since", 0, "only lines newer than this duration, e.g. 10m (default: all)")
	fs.StringVar(&o.sinceTime, "since-time", "", "only lines after this time, RFC 3339 (default: all)")
	fs.Int64Var(&o.run.Tail, "tail", -1, "the last lines of each log; -1: every line")
	fs.BoolVar(&o.run.Timestamps, "timestamps", false, "start each line with its time, as the kubelet recorded it")
	return fs
}

func (o *logsOptions) validate(args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return fmt.Errorf("give the workflow, and optionally one node: sparkplug logs WORKFLOW [NODE], got %d arguments", len(args))
	}
	o.run.Workflow = args[0]
	if len(args) == 2 {
		o.run.Node = args[1]
	}
	a, err := logs.ParseAttempt(o.attempt)
	if err != nil {
		return err
	}
	o.run.Attempt = a
	if o.run.Since < 0 {
		return fmt.Errorf("--since %s: must not be negative", o.run.Since)
	}
	if o.sinceTime != "" {
		if o.run.Since != 0 {
			return errors.New("give --since or --since-time, not both")
		}
		t, err := time.Parse(time.RFC3339, o.sinceTime)
		if err != nil {
			return fmt.Errorf("--since-time %q: want RFC 3339, e.g. 2026-03-29T10:00:00Z", o.sinceTime)
		}
		o.run.SinceTime = &metav1.Time{Time: t}
	}
	if o.run.Previous && o.run.Follow {
		return errors.New("give --previous or --follow, not both: a previous instance's log has ended")
	}
	if o.run.Tail < -1 {
		return fmt.Errorf("--tail %d: give a number of lines, or -1 for all", o.run.Tail)
	}
	return nil
}

func runLogs(args []string, stdout, stderr io.Writer) error {
	o := logsOptions{}
	fs := logsFlags(&o, stdout)
	if err := parseFlags(fs, "logs", args); err != nil {
		return err
	}
	if err := o.validate(fs.Args()); err != nil {
		return usageError("logs", err)
	}
	kube, wfc, ns, err := o.clients()
	if err != nil {
		return err
	}
	o.run.Namespace = ns
	o.run.Notices = stderr
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := logs.Run(ctx, kube, wfc, o.run, stdout); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// clients are the API clients of the kubeconfig and context the flags
// name, and the namespace: --namespace, else the context's.
func (o *logsOptions) clients() (kubernetes.Interface, wfclient.Interface, string, error) {
	return clusterClients(o.kubeconfig, o.context, o.namespace)
}

// clusterClients are the API clients of kubeconfig (empty: $KUBECONFIG,
// ~/.kube/config, else in-cluster) and its context, and the namespace:
// namespace, else the context's.
func clusterClients(kubeconfig, context, namespace string) (kubernetes.Interface, wfclient.Interface, string, error) {
	cfg, ns, err := clusterConfig(kubeconfig, context, namespace)
	if err != nil {
		return nil, nil, "", err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, "", err
	}
	wfc, err := wfclient.NewForConfig(cfg)
	if err != nil {
		return nil, nil, "", err
	}
	return kube, wfc, ns, nil
}

// clusterConfig is the REST config of kubeconfig and its context, and the
// namespace, as clusterClients reads them.
func clusterConfig(kubeconfig, context, namespace string) (*rest.Config, string, error) {
	if err := kubeconfigExists(kubeconfig, os.Getenv(clientcmd.RecommendedConfigPathEnvVar)); err != nil {
		return nil, "", err
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	ns := namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil {
			return nil, "", fmt.Errorf("kubeconfig: %w", err)
		}
	}
	return cfg, ns, nil
}

// kubeconfigExists fails, naming the files, when the kubeconfig given
// is not there: client-go skips the files of $KUBECONFIG that do not
// exist and, when none does, says only that no configuration has been
// provided. explicit is --kubeconfig (client-go names that one itself),
// env the value of $KUBECONFIG, a list of files.
func kubeconfigExists(explicit, env string) error {
	if explicit != "" {
		if _, err := os.Stat(explicit); err != nil {
			return fmt.Errorf("kubeconfig: --kubeconfig %s: %w", explicit, err)
		}
		return nil
	}
	var named []string
	var errs []error
	for _, f := range filepath.SplitList(env) {
		if f == "" {
			continue
		}
		named = append(named, f)
		if _, err := os.Stat(f); err != nil {
			errs = append(errs, err)
		}
	}
	if len(named) == 0 || len(errs) < len(named) {
		return nil // none named, or one to read: client-go merges what exists
	}
	return fmt.Errorf("kubeconfig: $KUBECONFIG names %s, and none can be read: %w", strings.Join(named, string(filepath.ListSeparator)), errors.Join(errs...))
}

// completeTimeout bounds a completion's requests: a shell waits for it.
const completeTimeout = 5 * time.Second

// runComplete is the hidden command the completion scripts run for the
// arguments of a command that completes from the cluster (logs and ui:
// the namespace's workflows, then a workflow's Spark nodes; get: the
// workflows): args are the command's
// name and the words typed after it so far. It prints one candidate per
// line; a cluster it cannot reach gives none.
func runComplete(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || !fromCluster[args[0]] {
		return nil
	}
	var kubeconfig, kubecontext, namespace *string
	var fs *pflag.FlagSet
	switch args[0] {
	case "get":
		o := getOptions{}
		fs, kubeconfig, kubecontext, namespace = getFlags(&o, io.Discard), &o.kubeconfig, &o.context, &o.run.Namespace
	case "ui":
		o := uiOptions{}
		fs, kubeconfig, kubecontext, namespace = uiFlags(&o, io.Discard), &o.kubeconfig, &o.context, &o.namespace
	default:
		o := logsOptions{}
		fs, kubeconfig, kubecontext, namespace = logsFlags(&o, io.Discard), &o.kubeconfig, &o.context, &o.namespace
	}
	fs.ParseErrorsAllowlist.UnknownFlags = true
	_ = fs.Parse(args[1:]) // a half-typed line: what parsed is enough
	_, wfc, ns, err := clusterClients(*kubeconfig, *kubecontext, *namespace)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), completeTimeout)
	defer cancel()
	typed := fs.Args()
	if args[0] == "get" && len(typed) > 0 {
		return nil // get takes one workflow, and no node
	}
	words, err := logs.Candidates(ctx, wfc, ns, typed)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return nil
	}
	for _, w := range words {
		if _, err := fmt.Fprintln(stdout, w); err != nil {
			return err
		}
	}
	return nil
}
