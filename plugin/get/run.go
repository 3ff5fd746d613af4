package get

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Format is how the steps are printed.
type Format string

const (
	FormatTable Format = ""
	FormatWide  Format = "wide"
	FormatJSON  Format = "json"
	FormatYAML  Format = "yaml"
)

// Options are what `sparkplug get` lists and how.
type Options struct {
	// Namespace is where the Workflows are read; ignored with
	// AllNamespaces.
	Namespace     string
	AllNamespaces bool
	// Workflow, when not empty, lists only that Workflow's steps; a
	// Workflow of that name that does not exist is an error.
	Workflow string
	Format   Format
	// Watch prints the steps, then every step that changes, until ctx
	// ends: table rows, or with json and yaml one object per step.
	Watch bool
	// Now is the clock of AGE; nil is time.Now.
	Now func() time.Time
	// Notices gets what is not output: no steps found, Workflows whose
	// nodes sparkplug cannot read. Nil discards them.
	Notices io.Writer
}

// Run prints the steps o selects to out. wfc needs list (and with Watch,
// watch) on workflows; kube get on pods for -o wide, json and yaml. A
// refusal is one line naming the right that is missing.
func Run(ctx context.Context, kube kubernetes.Interface, wfc wfclient.Interface, o Options, out io.Writer) error {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Notices == nil {
		o.Notices = io.Discard
	}
	g := &getter{kube: kube, wfc: wfc, o: o, out: out, table: &Table{Wide: o.Format == FormatWide, AllNamespaces: o.AllNamespaces}, seen: map[string]Step{}}
	list, err := g.api().List(ctx, g.listOptions())
	if err != nil {
		return g.refused(err, "list", "workflows")
	}
	list.Items = slices.DeleteFunc(list.Items, func(wf wfv1.Workflow) bool {
		return o.Workflow != "" && wf.Name != o.Workflow // the field selector's work, for a server that ignores it
	})
	if o.Workflow != "" && len(list.Items) == 0 {
		return fmt.Errorf("workflow %s not found in namespace %s (is it in another? -n NAMESPACE, or -A)", o.Workflow, o.Namespace)
	}
	var steps []Step
	for i := range list.Items {
		s, err := g.steps(ctx, &list.Items[i])
		if err != nil {
			return err
		}
		steps = append(steps, s...)
	}
	Sort(steps)
	if err := g.printFirst(steps); err != nil {
		return err
	}
	if !o.Watch {
		return nil
	}
	return g.watch(ctx, list.ResourceVersion)
}

type getter struct {
	kube  kubernetes.Interface
	wfc   wfclient.Interface
	o     Options
	out   io.Writer
	table *Table
	// seen are the steps last printed, by key (--watch).
	seen map[string]Step
}

func (g *getter) api() interface {
	List(context.Context, metav1.ListOptions) (*wfv1.WorkflowList, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
} {
	ns := g.o.Namespace
	if g.o.AllNamespaces {
		ns = metav1.NamespaceAll
	}
	return g.wfc.ArgoprojV1alpha1().Workflows(ns)
}

func (g *getter) listOptions() metav1.ListOptions {
	var lo metav1.ListOptions
	if g.o.Workflow != "" {
		lo.FieldSelector = fields.OneTermEqualSelector("metadata.name", g.o.Workflow).String()
	}
	return lo
}

// where is the namespace, or every namespace, in messages.
func (g *getter) where() string {
	if g.o.AllNamespaces {
		return "all namespaces"
	}
	return "namespace " + g.o.Namespace
}

// refused is err of verb on resource; a refusal names the right missing.
func (g *getter) refused(err error, verb, resource string) error {
	if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
		return fmt.Errorf("sparkplug get needs %s on %s in %s, which the API server refused: %w", verb, resource, g.where(), err)
	}
	return fmt.Errorf("%s %s in %s: %w", verb, resource, g.where(), err)
}

// structured: the steps are printed as objects, with their drivers' status.
func (g *getter) structured() bool { return g.o.Format == FormatJSON || g.o.Format == FormatYAML }

// steps are wf's steps, with their drivers' status when printed.
func (g *getter) steps(ctx context.Context, wf *wfv1.Workflow) ([]Step, error) {
	if g.o.Workflow != "" && wf.Name != g.o.Workflow {
		return nil, nil // as in Run
	}
	if len(wf.Status.Nodes) == 0 && wf.Status.OffloadNodeStatusVersion != "" {
		fmt.Fprintf(g.o.Notices, "sparkplug: workflow %s/%s keeps its nodes in Argo's database (status.offloadNodeStatusVersion), which sparkplug get cannot read\n", wf.Namespace, wf.Name)
		return nil, nil
	}
	steps := Steps(wf)
	if g.o.Format == FormatTable {
		return steps, nil
	}
	ref := spark.WorkflowRef{Name: wf.Name, Namespace: wf.Namespace, UID: string(wf.UID)}
	for i := range steps {
		if steps[i].DriverPod == "" {
			continue
		}
		p, err := g.kube.CoreV1().Pods(wf.Namespace).Get(ctx, steps[i].DriverPod, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			p = nil
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
			return nil, fmt.Errorf("sparkplug get -o %s needs get on pods in namespace %s (the drivers' status), which the API server refused: %w", g.o.Format, wf.Namespace, err)
		case err != nil:
			return nil, fmt.Errorf("get driver %s of workflow %s/%s: %w", steps[i].DriverPod, wf.Namespace, wf.Name, err)
		}
		steps[i].DriverStatus = DriverStatus(p, ref)
	}
	return steps, nil
}

// printFirst prints the steps of the List.
func (g *getter) printFirst(steps []Step) error {
	for _, s := range steps {
		g.seen[s.key()] = s
	}
	if !g.o.Watch && g.structured() {
		return g.write(NewList(steps))
	}
	if len(steps) == 0 {
		fmt.Fprintf(g.o.Notices, "No Spark steps found in %s.\n", g.where())
		return nil
	}
	return g.print(steps)
}

// print prints steps as rows, or with --watch as one object each.
func (g *getter) print(steps []Step) error {
	if !g.structured() {
		_, err := io.WriteString(g.out, g.table.Print(steps, g.o.Now()))
		return err
	}
	for _, s := range steps {
		if err := g.write(s); err != nil {
			return err
		}
	}
	return nil
}

// write writes v as indented JSON, or as a YAML document (each after
// ---, so that several are one stream).
func (g *getter) write(v any) error {
	var b []byte
	var err error
	if g.o.Format == FormatJSON {
		b, err = json.MarshalIndent(v, "", "  ")
		b = append(b, '\n')
	} else {
		b, err = yaml.Marshal(v)
		if g.o.Watch {
			b = append([]byte("---\n"), b...)
		}
	}
	if err != nil {
		return fmt.Errorf("encode the steps: %w", err)
	}
	_, err = g.out.Write(b)
	return err
}

// watch prints the steps that change from resourceVersion rv on, until
// ctx ends. A watch the API server closes is opened again from the last
// version seen; one too old to resume lists again.
func (g *getter) watch(ctx context.Context, rv string) error {
	for ctx.Err() == nil {
		lo := g.listOptions()
		lo.ResourceVersion, lo.AllowWatchBookmarks = rv, true
		w, err := g.api().Watch(ctx, lo)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return g.refused(err, "watch", "workflows")
		}
		rv, err = g.events(ctx, w, rv)
		w.Stop()
		switch {
		case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
			list, err := g.api().List(ctx, g.listOptions())
			if err != nil {
				return g.refused(err, "list", "workflows")
			}
			if err := g.changed(ctx, list.Items); err != nil {
				return err
			}
			rv = list.ResourceVersion
		case err != nil:
			return g.refused(err, "watch", "workflows")
		}
	}
	return nil
}

// events prints the changes of w's events, and returns the last
// resource version seen when w ends.
func (g *getter) events(ctx context.Context, w watch.Interface, rv string) (string, error) {
	for {
		select {
		case <-ctx.Done():
			return rv, nil
		case ev, ok := <-w.ResultChan():
			if !ok {
				return rv, nil
			}
			switch ev.Type {
			case watch.Error:
				return rv, apierrors.FromObject(ev.Object)
			case watch.Bookmark:
				if m, err := metaOf(ev.Object); err == nil {
					rv = m.GetResourceVersion()
				}
				continue
			}
			wf, ok := ev.Object.(*wfv1.Workflow)
			if !ok {
				continue
			}
			rv = wf.ResourceVersion
			if ev.Type == watch.Deleted {
				g.forget(wf)
				continue
			}
			if err := g.changed(ctx, []wfv1.Workflow{*wf}); err != nil {
				return rv, err
			}
		}
	}
}

func metaOf(o any) (metav1.Object, error) {
	m, ok := o.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", o)
	}
	return m, nil
}

// changed prints the steps of wfs that differ from what was printed.
func (g *getter) changed(ctx context.Context, wfs []wfv1.Workflow) error {
	var out []Step
	for i := range wfs {
		steps, err := g.steps(ctx, &wfs[i])
		if err != nil {
			return err
		}
		for _, s := range steps {
			if old, ok := g.seen[s.key()]; ok && old == s {
				continue
			}
			g.seen[s.key()] = s
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return g.print(out)
}

// forget drops a deleted Workflow's steps: printed again should it come
// back under the same name.
func (g *getter) forget(wf *wfv1.Workflow) {
	for k, s := range g.seen {
		if s.Namespace == wf.Namespace && s.Workflow == wf.Name {
			delete(g.seen, k)
		}
	}
}
