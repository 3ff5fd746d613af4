package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// markerDone is the last line a kept demo writes before it waits: the
// foreground half stops following the log there.
const markerDone = "### demo finished, exit code "

// demo runs the whole demo in this process. With o.keep (as the background
// half) it then waits for SIGTERM before tearing down.
func demo(o options, out io.Writer) (code int, err error) {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	fmt.Fprintf(out, "sparkplug demo: a local Kubernetes control plane with Argo Workflows, sparkplug installed from manifests/, and %s.\n", o.workflow)
	fmt.Fprintf(out, "Everything is real except the inside of Spark's containers: each driver \"runs\" %v and exits 0 (KWOK), and its executors are created as Spark would.\n\n", o.run)

	env, err := framework.Start(ctx, framework.Options{Progress: out, PluginBinary: o.plugin})
	if err != nil {
		return 1, err
	}
	defer func() {
		if code != 0 {
			env.DumpLogs(out, 20)
		}
		fmt.Fprintln(out, "tearing down...")
		if stopErr := env.Stop(); stopErr != nil && err == nil {
			err = stopErr
		}
		if err == nil && !o.keep {
			nextSteps(out)
		}
	}()

	wf, err := submit(ctx, env, o)
	if err != nil {
		return 1, err
	}
	fmt.Fprintf(out, "\nsubmitted workflow %s/%s\n\n", wf.Namespace, wf.Name)
	final, err := follow(ctx, env, wf, o.timeout, out)
	if err != nil {
		return 1, err
	}
	fmt.Fprintln(out)
	printTree(out, final)
	fmt.Fprintln(out)
	if err := printDrivers(ctx, out, env, final); err != nil {
		return 1, err
	}
	code = 0
	if final.Status.Phase != wfv1.WorkflowSucceeded {
		fmt.Fprintf(out, "\nthe workflow did not succeed: %s %s\n", final.Status.Phase, final.Status.Message)
		code = 1
	}
	if o.keep {
		keptBanner(out, env, final)
		fmt.Fprintf(out, "%s%d\n", markerDone, code)
		<-ctx.Done()
	}
	return code, nil
}

// submit creates the workflow with every Spark driver simulated to succeed.
func submit(ctx context.Context, env *framework.Env, o options) (*wfv1.Workflow, error) {
	b, err := os.ReadFile(filepath.Join(env.RepoRoot, o.workflow))
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := yaml.Unmarshal(b, &obj); err != nil {
		return nil, fmt.Errorf("%s: %w", o.workflow, err)
	}
	if _, err := sim.Inject(obj, sim.Succeed(o.run)); err != nil {
		return nil, fmt.Errorf("%s: %w", o.workflow, err)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var wf wfv1.Workflow
	if err := yaml.UnmarshalStrict(raw, &wf); err != nil {
		return nil, fmt.Errorf("%s: %w", o.workflow, err)
	}
	created, err := env.Workflows.ArgoprojV1alpha1().Workflows(env.Namespace).Create(ctx, &wf, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("submit %s: %w", o.workflow, err)
	}
	return created, nil
}

// follow prints a line each time a node's phase or message changes, until
// the workflow completes.
func follow(ctx context.Context, env *framework.Env, wf *wfv1.Workflow, timeout time.Duration, out io.Writer) (*wfv1.Workflow, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	seen := map[string]string{}
	for {
		got, err := env.Workflows.ArgoprojV1alpha1().Workflows(wf.Namespace).Get(ctx, wf.Name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("watch %s: %w", wf.Name, err)
		}
		for _, n := range sortedNodes(got) {
			state := string(n.Phase) + "\x00" + n.Message
			if seen[n.ID] == state {
				continue
			}
			seen[n.ID] = state
			fmt.Fprintf(out, "%6.1fs  %-16s %-10s %s\n", time.Since(start).Seconds(), displayName(got, n), n.Phase, n.Message)
		}
		if got.Status.Phase.Completed() {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("workflow %s did not complete: %w", wf.Name, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// sortedNodes orders nodes by start, then name.
func sortedNodes(wf *wfv1.Workflow) []wfv1.NodeStatus {
	nodes := make([]wfv1.NodeStatus, 0, len(wf.Status.Nodes))
	for _, n := range wf.Status.Nodes {
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool {
		a, b := nodes[i], nodes[j]
		if (a.ID == wf.Name) != (b.ID == wf.Name) {
			return a.ID == wf.Name // the root first
		}
		if !a.StartedAt.Equal(&b.StartedAt) {
			return a.StartedAt.Before(&b.StartedAt)
		}
		return a.DisplayName < b.DisplayName
	})
	return nodes
}

func displayName(wf *wfv1.Workflow, n wfv1.NodeStatus) string {
	if n.DisplayName != "" {
		return n.DisplayName
	}
	return n.Name
}

// printTree prints the workflow's nodes as a tree (children by boundary),
// with phase, message and outputs.result.
func printTree(out io.Writer, wf *wfv1.Workflow) {
	children := map[string][]wfv1.NodeStatus{}
	var root *wfv1.NodeStatus
	for _, n := range sortedNodes(wf) {
		if n.ID == wf.Name {
			root = &n
			continue
		}
		parent := n.BoundaryID
		if parent == "" {
			parent = wf.Name
		}
		children[parent] = append(children[parent], n)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tPHASE\tMESSAGE\tOUTPUTS.RESULT")
	var walk func(n wfv1.NodeStatus, prefix, branch string)
	walk = func(n wfv1.NodeStatus, prefix, branch string) {
		result := ""
		if n.Outputs != nil && n.Outputs.Result != nil {
			result = *n.Outputs.Result
		}
		fmt.Fprintf(tw, "%s%s%s\t%s\t%s\t%s\n", prefix, branch, displayName(wf, n), n.Phase, oneLine(n.Message), result)
		kids := children[n.ID]
		next := prefix
		switch branch {
		case "├─ ":
			next += "│  "
		case "└─ ":
			next += "   "
		}
		for i, k := range kids {
			b := "├─ "
			if i == len(kids)-1 {
				b = "└─ "
			}
			walk(k, next, b)
		}
	}
	if root != nil {
		walk(*root, "", "")
	}
	tw.Flush()
}

// printDrivers shows each Spark node's driver pod and the arguments it was
// started with: where the upstream application ids arrived.
func printDrivers(ctx context.Context, out io.Writer, env *framework.Env, wf *wfv1.Workflow) error {
	drivers, err := env.Drivers(ctx, wf)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tDRIVER POD\tAPPLICATION ARGUMENTS")
	for _, n := range sortedNodes(wf) {
		for _, d := range drivers {
			if d.Annotations[spark.AnnotationNodeID] != n.ID || len(d.Spec.Containers) == 0 {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", displayName(wf, n), d.Name, strings.Join(applicationArgs(d.Spec.Containers[0].Args), " "))
		}
	}
	return tw.Flush()
}

// applicationArgs are the arguments after the application's main file in a
// driver's args (driver --properties-file F --class C <file> <args...>).
func applicationArgs(args []string) []string {
	for i := 1; i < len(args); i++ {
		if strings.HasPrefix(args[i], "--") {
			i++ // the flag's value
			continue
		}
		return args[i+1:]
	}
	return nil
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// nextSteps is what to do after a demo that ended: where to read on, and
// how to look at the same run for longer, or on a cluster of one's own.
func nextSteps(out io.Writer) {
	fmt.Fprint(out, `
Next steps:
  README.md                 what a Spark step is, its outputs, pictures of it in the Argo UI
  make demo KEEP=1          the same demo, left running to look around (make demo-down stops it)
  sparkplug render -f FILE  the objects a step would create, without a cluster
  sparkplug run -f FILE     submit a Workflow to your cluster and wait for how it ends
  docs/install.md           install sparkplug on your own Argo Workflows (Helm, or manifests/)
`)
}

// keptBanner tells how to use and stop a kept environment.
func keptBanner(out io.Writer, env *framework.Env, wf *wfv1.Workflow) {
	fmt.Fprintf(out, `
The environment keeps running. To look around:

  export KUBECONFIG=%s
  export PATH=%s:$PATH
  kubectl -n %s get workflows,pods
  kubectl -n %s get workflow %s -o yaml

Logs: %s
Stop it with: make demo-down (or kill %d)
`, env.Kubeconfig(), env.BinDir(), env.Namespace, env.Namespace, wf.Name, env.LogDir(), os.Getpid())
}
