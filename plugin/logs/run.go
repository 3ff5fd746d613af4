package logs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Options are what `sparkplug logs` prints.
type Options struct {
	Namespace, Workflow string
	// Node names one Spark node (FindNode); empty: every Spark node.
	Node string
	Selection
	// Since, SinceTime, Tail and Timestamps are kubectl logs' --since,
	// --since-time, --tail (negative: every line) and --timestamps.
	Since      time.Duration
	SinceTime  *metav1.Time
	Tail       int64
	Timestamps bool
	// Follow streams the logs until every node followed has finished and
	// its streams ended (Follow), or ctx ends.
	Follow bool
	// Previous prints the log of the container's previous instance, as
	// kubectl logs --previous; not with Follow. A container that has not
	// restarted has none: a NoPreviousError.
	Previous bool
	// Notices gets what is not log: what is waited for, nodes without a
	// driver yet. Nil discards them.
	Notices io.Writer
	// Poll is how often Follow reads the Workflow again (0: every 2s).
	Poll time.Duration
}

// MaxStreams is the most logs Follow streams at once; a pod beyond it
// waits for one of them to end.
const MaxStreams = 32

// Run prints the logs o selects of workflow o.Workflow to out. kube needs
// list and watch on pods and get on pods/log, wfc get on workflows. Every
// error is one line a person reads: the workflow or node not found, no
// Spark nodes, a driver not started yet, a log that is gone. When some
// logs could be printed and others not, the printable ones are printed
// first and the error names the others.
func Run(ctx context.Context, kube kubernetes.Interface, wfc wfclient.Interface, o Options, out io.Writer) error {
	if o.Notices == nil {
		o.Notices = io.Discard
	}
	if o.Follow && o.Previous {
		return errors.New("--previous prints a log that has ended: it cannot be followed (-f)")
	}
	wf, err := getWorkflow(ctx, wfc, o)
	if err != nil {
		return err
	}
	if o.Follow {
		return follow(ctx, kube, wfc, o, wf, out)
	}
	pods, err := listPods(ctx, kube, o.Namespace, driverSelector(wf))
	if err != nil {
		return err
	}
	drivers := Drivers(wf, pods)
	nodes, err := chooseNodes(wf, SparkNodes(wf, drivers), o.Node)
	if err != nil {
		return err
	}
	targets, problems, err := Plan(nodes, drivers, o.Selection, func(d *corev1.Pod) ([]*corev1.Pod, error) {
		return listPods(ctx, kube, o.Namespace, executorSelector(d))
	})
	if err != nil {
		return err
	}
	output := NewOutput(out)
	for _, t := range targets {
		err := printLog(ctx, kube, o, t, false, output.Stream(prefixOf(t, len(targets) > 1)))
		if err == nil {
			continue
		}
		if fatal(ctx, err) {
			return err
		}
		problems = append(problems, err)
	}
	return summarize(problems, len(targets) > 0, o.Notices)
}

// getWorkflow reads the Workflow; not found suggests -n.
func getWorkflow(ctx context.Context, wfc wfclient.Interface, o Options) (*wfv1.Workflow, error) {
	wf, err := wfc.ArgoprojV1alpha1().Workflows(o.Namespace).Get(ctx, o.Workflow, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("workflow %s not found in namespace %s (is it in another? -n NAMESPACE)", o.Workflow, o.Namespace)
	case err != nil:
		return nil, apiError(err, "get workflow "+o.Workflow, o.Namespace)
	}
	if len(wf.Status.Nodes) == 0 && wf.Status.OffloadNodeStatusVersion != "" {
		return nil, fmt.Errorf("workflow %s keeps its nodes in Argo's database (status.offloadNodeStatusVersion), which sparkplug logs cannot read", wf.Name)
	}
	return wf, nil
}

// chooseNodes is the node arg names, or every Spark node when arg is empty.
func chooseNodes(wf *wfv1.Workflow, nodes []Node, arg string) ([]Node, error) {
	if arg != "" {
		n, err := FindNode(wf, nodes, arg)
		if err != nil {
			return nil, err
		}
		return []Node{n}, nil
	}
	if len(nodes) == 0 {
		return nil, noSparkNodes(wf)
	}
	return nodes, nil
}

// driverSelector selects the workflow's drivers, as the plugin labels them.
func driverSelector(wf *wfv1.Workflow) string {
	return labels.Set{spark.LabelWorkflowUID: string(wf.UID), spark.LabelRole: spark.RoleDriver}.String()
}

// executorSelector selects a driver's executors, as Spark does.
func executorSelector(driver *corev1.Pod) string {
	return labels.Set{spark.LabelAppSelector: driver.Labels[spark.LabelAppSelector], spark.LabelRole: spark.RoleExecutor}.String()
}

func listPods(ctx context.Context, kube kubernetes.Interface, ns, selector string) ([]*corev1.Pod, error) {
	list, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, apiError(err, "list pods", ns)
	}
	out := make([]*corev1.Pod, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

// prefixOf is what each line of t's log starts with: its pod's name, as
// argo logs writes it, when several pods are printed.
func prefixOf(t Target, several bool) string {
	if !several {
		return ""
	}
	return t.Pod.Name + ": "
}

// printLog copies t's log to w and closes w. Without follow, a container
// that has not started is a PendingError rather than the API server's
// refusal.
func printLog(ctx context.Context, kube kubernetes.Interface, o Options, t Target, follow bool, w *LineWriter) error {
	if err := hasContainer(t.Pod, t.Container); err != nil {
		return err
	}
	if o.Previous {
		if !restarted(t.Pod, t.Container) {
			return &NoPreviousError{What: t.what(), Container: t.Container}
		}
	} else if reason := notStarted(t.Pod, t.Container); reason != "" && !follow {
		return &PendingError{What: t.what(), Reason: reason}
	}
	opts := &corev1.PodLogOptions{Container: t.Container, Follow: follow, Previous: o.Previous, Timestamps: o.Timestamps, SinceTime: o.SinceTime}
	if o.Since > 0 {
		s := int64((o.Since + time.Second - 1) / time.Second) // kubectl rounds up
		opts.SinceSeconds = &s
	}
	if o.Tail >= 0 {
		opts.TailLines = &o.Tail
	}
	rc, err := openLog(ctx, kube, o.Namespace, t.Pod.Name, opts)
	if err != nil {
		return explain(err, t, o.Namespace)
	}
	defer rc.Close()
	_, err = io.Copy(w, rc)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	var we *writeError
	if err != nil && !errors.As(err, &we) && ctx.Err() == nil {
		return fmt.Errorf("reading the log of %s: %w", t.what(), err)
	}
	return err
}

// openLog opens a pod's log; tests replace it to hold streams open.
var openLog = func(ctx context.Context, kube kubernetes.Interface, ns, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
	return kube.CoreV1().Pods(ns).GetLogs(pod, opts).Stream(ctx)
}

// explain turns the API server's refusal of a log into what it means.
func explain(err error, t Target, ns string) error {
	var status apierrors.APIStatus
	details := &metav1.StatusDetails{}
	if errors.As(err, &status) && status.Status().Details != nil {
		details = status.Status().Details
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "previous terminated container"):
		return &NoPreviousError{What: t.what(), Container: t.Container}
	case apierrors.IsNotFound(err) && nodeGone(t.Pod, details):
		return goneOf(t, fmt.Sprintf("ran on node %s, which is gone", t.Pod.Spec.NodeName))
	case apierrors.IsNotFound(err):
		return goneOf(t, "was deleted")
	case strings.Contains(msg, "is waiting to start"), strings.Contains(msg, "ContainerCreating"), strings.Contains(msg, "PodInitializing"):
		return &PendingError{What: t.what(), Reason: lastPart(msg)}
	case strings.Contains(msg, "unable to retrieve container logs"), strings.Contains(msg, "failed to try resolving symlinks"):
		return goneOf(t, "is no longer on its node's kubelet (its container was removed)")
	}
	return apiError(err, "log of "+t.what(), ns)
}

// nodeGone: a NotFound of a pod's log is about its Kubernetes node, not
// the pod. The API server answers the node's absence as a NotFound whose
// kind the client fills in as "pods", named after the node.
func nodeGone(p *corev1.Pod, d *metav1.StatusDetails) bool {
	return d.Kind == "nodes" || p.Spec.NodeName != "" && d.Name == p.Spec.NodeName && d.Name != p.Name
}

// goneOf is the GoneError of t's pod, with where its node says the
// attempt can still be read.
func goneOf(t Target, why string) *GoneError {
	e := &GoneError{Pod: t.Pod.Name, Node: t.Node.Name, Attempt: t.Attempt, Why: why, Executor: t.Executor}
	if t.Attempt == t.Node.RecordedAttempt && !t.Executor {
		e.ArchivedLog, e.HistoryUI = t.Node.ArchivedLog, t.Node.HistoryUI
	}
	return e
}

func lastPart(msg string) string {
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}

// apiError is err of what; a refusal says which permissions sparkplug
// logs needs.
func apiError(err error, what, ns string) error {
	if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
		return fmt.Errorf("%s: %w (sparkplug logs needs, in namespace %s: get workflows, list and watch pods, get pods/log)", what, err, ns)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// fatal: err ends the whole command, not only one pod's log.
func fatal(ctx context.Context, err error) bool {
	var we *writeError
	return errors.As(err, &we) || ctx.Err() != nil || apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)
}

// summarize is the error of the logs that could not be printed. A node
// without a driver yet is only a notice when other logs were printed:
// the workflow has not come that far.
func summarize(problems []error, printed bool, notices io.Writer) error {
	var failed []error
	for _, p := range problems {
		var nl *NotLaunchedError
		if printed && errors.As(p, &nl) {
			fmt.Fprintf(notices, "sparkplug: %v\n", p)
			continue
		}
		failed = append(failed, p)
	}
	switch len(failed) {
	case 0:
		return nil
	case 1:
		return failed[0]
	}
	msgs := make([]string, len(failed))
	for i, f := range failed {
		msgs[i] = f.Error()
	}
	return &ProblemsError{Problems: failed, msg: fmt.Sprintf("%d logs could not be printed: %s", len(failed), strings.Join(msgs, "; "))}
}

// ProblemsError is several logs that could not be printed.
type ProblemsError struct {
	Problems []error
	msg      string
}

func (e *ProblemsError) Error() string   { return e.msg }
func (e *ProblemsError) Unwrap() []error { return e.Problems }
