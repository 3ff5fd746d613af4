package framework

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// When acts on the submitted workflow.
type When struct {
	t       *testing.T
	env     *Env
	g       *Given
	wf      *wfv1.Workflow
	history map[string]*nodeHistory // by node id
}

// NodeState is a node's phase and message at one moment.
type NodeState struct {
	Phase   wfv1.NodePhase
	Message string
}

func (s NodeState) String() string { return fmt.Sprintf("%s %q", s.Phase, s.Message) }

type nodeHistory struct {
	displayName string
	root        bool
	states      []NodeState
}

// RootNode names the workflow's root node in ExpectNode, ExpectHistory and
// WaitForNode: in a workflow of one step, the step itself.
const RootNode = ""

// isNode reports whether n is the node a test names.
func isNode(wf *wfv1.Workflow, n *wfv1.NodeStatus, displayName string) bool {
	if displayName == RootNode {
		return n.ID == wf.Name
	}
	return n.DisplayName == displayName
}

func (w *When) ctx() context.Context { return context.Background() }

// SubmitWorkflow creates the WorkflowTemplates and the CronWorkflow
// given, then the workflow, labelled with the test's name. The workflow is
// deleted (and with it, through owner references, every driver) after the
// test; a failed test first prints what it knows.
func (w *When) SubmitWorkflow() *When {
	w.t.Helper()
	ctx := w.ctx()
	wfs := w.env.Workflows.ArgoprojV1alpha1()
	ns := w.env.Namespace
	if w.g.namespace != "" {
		ns = w.g.namespace
	}
	for _, obj := range w.g.requires {
		var tmpl wfv1.WorkflowTemplate
		convert(w.t, obj, &tmpl)
		if _, err := wfs.WorkflowTemplates(ns).Create(ctx, &tmpl, metav1.CreateOptions{}); err != nil {
			w.t.Fatalf("create WorkflowTemplate %s: %v", tmpl.Name, err)
		}
		w.t.Cleanup(func() { _ = wfs.WorkflowTemplates(ns).Delete(ctx, tmpl.Name, metav1.DeleteOptions{}) })
	}
	var wf wfv1.Workflow
	switch {
	case w.g.cron != nil:
		var cron wfv1.CronWorkflow
		convert(w.t, w.g.cron, &cron)
		created, err := wfs.CronWorkflows(ns).Create(ctx, &cron, metav1.CreateOptions{})
		if err != nil {
			w.t.Fatalf("create CronWorkflow %s: %v", cron.Name, err)
		}
		w.t.Cleanup(func() { _ = wfs.CronWorkflows(ns).Delete(ctx, created.Name, metav1.DeleteOptions{}) })
		created.APIVersion = wfv1.SchemeGroupVersion.String()
		wf = workflowFromCron(created)
	case w.g.workflow != nil:
		convert(w.t, w.g.workflow, &wf)
	default:
		w.t.Fatal("no workflow given")
	}
	if wf.Labels == nil {
		wf.Labels = map[string]string{}
	}
	wf.Labels[LabelTest] = labelValue(w.t.Name())
	created, err := wfs.Workflows(ns).Create(ctx, &wf, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatalf("submit workflow: %v", err)
	}
	w.wf = created
	w.t.Logf("submitted workflow %s/%s", ns, created.Name)
	w.t.Cleanup(func() {
		if w.t.Failed() {
			w.dump()
		}
		policy := metav1.DeletePropagationBackground
		if err := wfs.Workflows(ns).Delete(ctx, created.Name, metav1.DeleteOptions{PropagationPolicy: &policy}); err != nil && !apierrors.IsNotFound(err) {
			w.t.Logf("delete workflow %s: %v", created.Name, err)
		}
	})
	return w
}

// workflowFromCron is the Workflow `argo submit --from cronwf/<name>`
// creates (Argo's common.ConvertCronWorkflowToWorkflow).
func workflowFromCron(cron *wfv1.CronWorkflow) wfv1.Workflow {
	wf := wfv1.Workflow{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: cron.Name + "-",
			Labels:       map[string]string{"workflows.argoproj.io/cron-workflow": cron.Name},
			Annotations:  map[string]string{"workflows.argoproj.io/scheduled-time": time.Now().Format(time.RFC3339)},
		},
		Spec: cron.Spec.WorkflowSpec,
	}
	if md := cron.Spec.WorkflowMetadata; md != nil {
		for k, v := range md.Labels {
			wf.Labels[k] = v
		}
		for k, v := range md.Annotations {
			wf.Annotations[k] = v
		}
	}
	wf.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cron, wfv1.SchemeGroupVersion.WithKind("CronWorkflow"))}
	return wf
}

// WorkflowCondition says whether a workflow is where a test waits for it,
// or can never get there (an error).
type WorkflowCondition struct {
	Name string
	Done func(*wfv1.Workflow) (bool, error)
}

// Workflow conditions.
var (
	ToBeRunning = WorkflowCondition{"to be Running", func(wf *wfv1.Workflow) (bool, error) {
		return wf.Status.Phase == wfv1.WorkflowRunning, nil
	}}
	ToBeSucceeded = phaseCondition(wfv1.WorkflowSucceeded)
	ToBeFailed    = phaseCondition(wfv1.WorkflowFailed)
	ToBeCompleted = WorkflowCondition{"to be completed", func(wf *wfv1.Workflow) (bool, error) {
		return wf.Status.Phase.Completed(), nil
	}}
)

func phaseCondition(want wfv1.WorkflowPhase) WorkflowCondition {
	return WorkflowCondition{"to be " + string(want), func(wf *wfv1.Workflow) (bool, error) {
		if !wf.Status.Phase.Completed() {
			return false, nil
		}
		if wf.Status.Phase != want {
			return false, fmt.Errorf("workflow %s: %s", wf.Status.Phase, wf.Status.Message)
		}
		return true, nil
	}}
}

// NodeCondition says whether a node is where a test waits for it.
type NodeCondition struct {
	Name string
	Done func(*wfv1.NodeStatus) bool
}

// Node conditions.
var (
	NodeRunning   = NodeCondition{"Running", func(n *wfv1.NodeStatus) bool { return n.Phase == wfv1.NodeRunning }}
	NodeSucceeded = NodeCondition{"Succeeded", func(n *wfv1.NodeStatus) bool { return n.Phase == wfv1.NodeSucceeded }}
	NodeCompleted = NodeCondition{"completed", func(n *wfv1.NodeStatus) bool { return n.Phase.Completed() }}
)

// NodeMessage waits for a node whose message matches re.
func NodeMessage(re string) NodeCondition {
	rx := regexp.MustCompile(re)
	return NodeCondition{"message matching " + re, func(n *wfv1.NodeStatus) bool { return rx.MatchString(n.Message) }}
}

// WaitForWorkflow polls the workflow until cond holds, recording every
// node's phases and messages on the way.
func (w *When) WaitForWorkflow(cond WorkflowCondition, timeout ...time.Duration) *When {
	w.t.Helper()
	w.poll("workflow "+cond.Name, timeout, func(wf *wfv1.Workflow) (bool, error) { return cond.Done(wf) })
	return w
}

// WaitForNode polls until the node with displayName meets cond.
func (w *When) WaitForNode(displayName string, cond NodeCondition, timeout ...time.Duration) *When {
	w.t.Helper()
	w.poll(fmt.Sprintf("node %s %s", displayName, cond.Name), timeout, func(wf *wfv1.Workflow) (bool, error) {
		for _, n := range wf.Status.Nodes {
			if isNode(wf, &n, displayName) && cond.Done(&n) {
				return true, nil
			}
		}
		if wf.Status.Phase.Completed() {
			return false, fmt.Errorf("workflow %s before node %s was %s", wf.Status.Phase, displayName, cond.Name)
		}
		return false, nil
	})
	return w
}

// WaitForDrivers polls until the workflow has n driver pods.
func (w *When) WaitForDrivers(n int, timeout ...time.Duration) *When {
	w.t.Helper()
	w.poll(fmt.Sprintf("%d driver pods", n), timeout, func(wf *wfv1.Workflow) (bool, error) {
		drivers, err := w.env.Drivers(w.ctx(), wf)
		return len(drivers) == n, err
	})
	return w
}

func (w *When) poll(what string, timeout []time.Duration, done func(*wfv1.Workflow) (bool, error)) {
	w.t.Helper()
	if w.wf == nil {
		w.t.Fatal("no workflow submitted")
	}
	took := pollUntil(w.t, w.env, what, timeoutOr(timeout), pollInterval, func() (bool, error) {
		wf, err := w.env.Workflows.ArgoprojV1alpha1().Workflows(w.wf.Namespace).Get(w.ctx(), w.wf.Name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Errorf("get workflow: %w", err)
		}
		w.wf = wf
		w.record(wf)
		return done(wf)
	}, func() string {
		return fmt.Sprintf("workflow %s %q", w.wf.Status.Phase, w.wf.Status.Message)
	})
	w.t.Logf("%s after %v", what, took.Round(100*time.Millisecond))
}

// record appends each node's state when it changed.
func (w *When) record(wf *wfv1.Workflow) {
	for id, n := range wf.Status.Nodes {
		h := w.history[id]
		if h == nil {
			h = &nodeHistory{displayName: n.DisplayName, root: id == wf.Name}
			w.history[id] = h
		}
		s := NodeState{Phase: n.Phase, Message: n.Message}
		if len(h.states) == 0 || h.states[len(h.states)-1] != s {
			h.states = append(h.states, s)
		}
	}
}

// Workflow is the workflow as last seen.
func (w *When) Workflow() *wfv1.Workflow { return w.wf }

// Then checks.
func (w *When) Then() *Then { return &Then{t: w.t, w: w} }
