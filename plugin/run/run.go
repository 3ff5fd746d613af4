package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Options say where and how long to follow a Workflow.
type Options struct {
	// Namespace is where the Workflow is created.
	Namespace string
	// Timeout bounds the wait for the Workflow's end; 0 waits until ctx ends.
	Timeout time.Duration
	// Interval is the time between two Gets of the Workflow.
	Interval time.Duration
	// Keep keeps a Workflow that Succeeded (one that did not is always kept).
	Keep bool
	// Out receives the Report of how the Workflow ended (or was last
	// seen); nil writes none.
	Out io.Writer
	// Progress receives a line when the Workflow is created and each time a
	// Spark node's phase changes, the latter starting with the time since
	// the create ("[  42s]"); nil prints nothing.
	Progress io.Writer
}

// DefaultInterval is Options.Interval when it is 0.
const DefaultInterval = 2 * time.Second

// Parse reads one Workflow from YAML or JSON, refusing fields a Workflow
// does not have.
func Parse(data []byte) (*wfv1.Workflow, error) {
	var head metav1.TypeMeta
	if err := yaml.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not a Workflow: %w", err)
	}
	if head.Kind != "Workflow" || head.APIVersion != wfv1.SchemeGroupVersion.String() {
		return nil, fmt.Errorf("want one Workflow (apiVersion %s, kind Workflow), got apiVersion %q, kind %q",
			wfv1.SchemeGroupVersion, head.APIVersion, head.Kind)
	}
	var wf wfv1.Workflow
	if err := yaml.UnmarshalStrict(data, &wf); err != nil {
		return nil, fmt.Errorf("the Workflow: %w", err)
	}
	if wf.Name == "" && wf.GenerateName == "" {
		return nil, errors.New("the Workflow has neither metadata.name nor metadata.generateName: give one")
	}
	wf.Status = wfv1.WorkflowStatus{}
	return &wf, nil
}

// Place puts wf in namespace. A namespace the Workflow names must be that
// one: the file says where it meant to run, as kubectl holds it.
func Place(wf *wfv1.Workflow, namespace string) error {
	if wf.Namespace != "" && wf.Namespace != namespace {
		return fmt.Errorf("the Workflow's metadata.namespace %q is not the namespace asked for, %q: drop it from the file or ask for %q",
			wf.Namespace, namespace, wf.Namespace)
	}
	wf.Namespace = namespace
	return nil
}

// Follow creates wf in o.Namespace and gets it every o.Interval until it
// ended, writes the Report of the last Workflow it read to o.Out (when it
// read one and o.Out is not nil), then deletes it if it Succeeded (unless
// o.Keep). It returns the last Workflow it read (nil when none was
// created) and an error when the Workflow did not succeed, did not end in
// time or could not be created.
func Follow(ctx context.Context, wfc wfclient.Interface, wf *wfv1.Workflow, o Options) (*wfv1.Workflow, error) {
	api := wfc.ArgoprojV1alpha1().Workflows(o.Namespace)
	last, err := wait(ctx, api, wf, o)
	if last != nil && o.Out != nil {
		if rerr := Report(o.Out, last); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil || o.Keep {
		return last, err
	}
	uid := last.UID
	if err := api.Delete(ctx, last.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}); err != nil {
		return last, fmt.Errorf("workflow %s Succeeded, but deleting it failed: %w", last.Name, err)
	}
	progress(o.Progress, "workflow %s deleted\n", last.Name)
	return last, nil
}

// wait creates wf and reads it until it ended (Follow), returning an error
// unless it Succeeded.
func wait(ctx context.Context, api wfapi, wf *wfv1.Workflow, o Options) (*wfv1.Workflow, error) {
	created, err := api.Create(ctx, wf, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create the Workflow in namespace %s: %w", o.Namespace, err)
	}
	name, start := created.Name, time.Now()
	progress(o.Progress, "workflow %s created in namespace %s\n", name, o.Namespace)
	interval := o.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	bounded := ctx
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		bounded, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	last, seen := created, map[string]wfv1.NodePhase{}
	var getErr error
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for !last.Status.Fulfilled() {
		select {
		case <-bounded.Done():
			return last, notEnded(name, o, last, getErr, ctx.Err() != nil)
		case <-tick.C:
		}
		got, err := api.Get(bounded, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return last, fmt.Errorf("workflow %s was deleted before it ended (last seen %s)", name, ended(last))
		}
		if err != nil {
			getErr = err
			continue
		}
		getErr, last = nil, got
		for _, n := range SparkNodes(last) {
			if seen[n.ID] != n.Phase {
				seen[n.ID] = n.Phase
				progress(o.Progress, "%s  %s\n", since(start), n.line())
			}
		}
	}
	if last.Status.Phase != wfv1.WorkflowSucceeded {
		return last, fmt.Errorf("workflow %s %s; kept: read it with kubectl -n %s get workflow %s -o yaml, delete it with kubectl -n %s delete workflow %s",
			name, ended(last), o.Namespace, name, o.Namespace, name)
	}
	return last, nil
}

// wfapi is what Follow asks of the Workflows of a namespace.
type wfapi interface {
	Create(context.Context, *wfv1.Workflow, metav1.CreateOptions) (*wfv1.Workflow, error)
	Get(context.Context, string, metav1.GetOptions) (*wfv1.Workflow, error)
}

// notEnded is the error of a Workflow that was not seen to end.
func notEnded(name string, o Options, last *wfv1.Workflow, getErr error, interrupted bool) error {
	why := fmt.Sprintf("did not end within %s", o.Timeout)
	if interrupted || o.Timeout <= 0 {
		why = "was still running when interrupted"
	}
	phase := string(last.Status.Phase)
	if phase == "" {
		phase = "not started"
	}
	err := fmt.Errorf("workflow %s %s (last seen %s); it goes on: delete it with kubectl -n %s delete workflow %s",
		name, why, phase, o.Namespace, name)
	if getErr != nil {
		err = fmt.Errorf("%w; the last read of it failed: %w", err, getErr)
	}
	return err
}

// since is the time since start as a progress line starts: "[  42s]",
// which the report's lines do not.
func since(start time.Time) string {
	return fmt.Sprintf("[%5s]", time.Since(start).Round(time.Second))
}

func progress(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format, args...)
	}
}
