package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

const (
	// LabelTest names the test that submitted a workflow.
	LabelTest = "e2e.sparkplug.test/test"
	// DefaultTimeout bounds each wait of a fixture.
	DefaultTimeout = 2 * time.Minute
	// pollInterval is how often waits look at the workflow.
	pollInterval = 100 * time.Millisecond
	// dumpLines is how much of each log a failed test prints.
	dumpLines = 40
)

// Given starts a test: what is submitted.
type Given struct {
	t        *testing.T
	env      *Env
	workflow map[string]any
	cron     map[string]any
	requires []map[string]any // WorkflowTemplates created first
	// namespace is where the workflow runs; empty: Env.Namespace.
	namespace string
}

// Given starts a fixture for t.
func (e *Env) Given(t *testing.T) *Given {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			e.failed(t.Name())
		}
	})
	return &Given{t: t, env: e}
}

// Namespace runs the workflow in ns instead of the environment's
// namespace (one with sparkplug installed by the test itself).
func (g *Given) Namespace(ns string) *Given {
	g.namespace = ns
	return g
}

// Workflow is the workflow to submit: YAML, or "@path" to read a file
// relative to the repository root (e.g. "@examples/spark-pi.yaml").
func (g *Given) Workflow(text string) *Given {
	g.t.Helper()
	g.workflow = g.decode(text, "Workflow")
	return g
}

// CronWorkflow is a CronWorkflow to create; SubmitWorkflow then submits one
// run of it now, as `argo submit --from cronwf/<name>` does.
func (g *Given) CronWorkflow(text string) *Given {
	g.t.Helper()
	g.cron = g.decode(text, "CronWorkflow")
	return g
}

// WorkflowTemplate is created before the workflow is submitted, and
// deleted after the test.
func (g *Given) WorkflowTemplate(text string) *Given {
	g.t.Helper()
	g.requires = append(g.requires, g.decode(text, "WorkflowTemplate"))
	return g
}

// Simulate makes the drivers of the spark templates of everything given
// so far behave as d; with names, only the templates with those names.
func (g *Given) Simulate(d sim.Driver, templates ...string) *Given {
	g.t.Helper()
	objs := append([]map[string]any{}, g.requires...)
	for _, o := range []map[string]any{g.workflow, g.cron} {
		if o != nil {
			objs = append(objs, o)
		}
	}
	total := 0
	for _, o := range objs {
		n, err := sim.Inject(o, d, templates...)
		if err != nil && len(templates) == 0 {
			g.t.Fatalf("simulate: %v", err)
		}
		total += n
	}
	if total == 0 {
		g.t.Fatalf("simulate: no spark template named %v in what is given", templates)
	}
	return g
}

// Object returns the workflow object as decoded, for changes a test makes.
func (g *Given) Object() map[string]any { return g.workflow }

func (g *Given) decode(text, kind string) map[string]any {
	g.t.Helper()
	b := []byte(text)
	if path, ok := strings.CutPrefix(text, "@"); ok {
		var err error
		if b, err = os.ReadFile(filepath.Join(g.env.RepoRoot, path)); err != nil {
			g.t.Fatal(err)
		}
	}
	var obj map[string]any
	if err := yaml.Unmarshal(b, &obj); err != nil {
		g.t.Fatalf("decode %s: %v", kind, err)
	}
	if obj["kind"] != kind {
		g.t.Fatalf("want a %s, got kind %v", kind, obj["kind"])
	}
	return obj
}

// When submits and waits.
func (g *Given) When() *When {
	return &When{t: g.t, env: g.env, g: g, history: map[string]*nodeHistory{}}
}

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
	limit := DefaultTimeout
	if len(timeout) > 0 {
		limit = timeout[0]
	}
	start := time.Now()
	deadline := start.Add(limit)
	for {
		wf, err := w.env.Workflows.ArgoprojV1alpha1().Workflows(w.wf.Namespace).Get(w.ctx(), w.wf.Name, metav1.GetOptions{})
		if err != nil {
			w.t.Fatalf("waiting for %s: get workflow: %v", what, err)
		}
		w.wf = wf
		w.record(wf)
		ok, err := done(wf)
		if err != nil {
			w.t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			w.t.Logf("%s after %v", what, time.Since(start).Round(100*time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("timed out after %v waiting for %s; workflow %s %q", limit, what, wf.Status.Phase, wf.Status.Message)
		}
		if err := w.env.CheckAlive(); err != nil {
			w.t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(pollInterval)
	}
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

// Then holds the checks of a test.
type Then struct {
	t *testing.T
	w *When
}

// When returns to acting.
func (th *Then) When() *When { return th.w }

func (th *Then) refresh() *wfv1.Workflow {
	th.t.Helper()
	wf, err := th.w.env.Workflows.ArgoprojV1alpha1().Workflows(th.w.wf.Namespace).Get(context.Background(), th.w.wf.Name, metav1.GetOptions{})
	if err != nil {
		th.t.Fatalf("get workflow: %v", err)
	}
	th.w.wf = wf
	th.w.record(wf)
	return wf
}

// ExpectWorkflow checks the workflow.
func (th *Then) ExpectWorkflow(f func(t *testing.T, md *metav1.ObjectMeta, status *wfv1.WorkflowStatus)) *Then {
	th.t.Helper()
	wf := th.refresh()
	f(th.t, &wf.ObjectMeta, &wf.Status)
	return th
}

// ExpectNode checks the one node whose display name is displayName.
func (th *Then) ExpectNode(displayName string, f func(t *testing.T, n *wfv1.NodeStatus)) *Then {
	th.t.Helper()
	wf := th.refresh()
	var found []wfv1.NodeStatus
	for _, n := range wf.Status.Nodes {
		if isNode(wf, &n, displayName) {
			found = append(found, n)
		}
	}
	if len(found) != 1 {
		th.t.Fatalf("%d nodes named %s, want 1", len(found), displayName)
	}
	f(th.t, &found[0])
	return th
}

// ExpectPluginNodes checks every plugin node of the workflow.
func (th *Then) ExpectPluginNodes(f func(t *testing.T, nodes []wfv1.NodeStatus)) *Then {
	th.t.Helper()
	wf := th.refresh()
	var nodes []wfv1.NodeStatus
	for _, n := range wf.Status.Nodes {
		if n.Type == wfv1.NodeTypePlugin {
			nodes = append(nodes, n)
		}
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].DisplayName < nodes[j].DisplayName })
	f(th.t, nodes)
	return th
}

// ExpectHistory checks the states the node with displayName went through
// while the fixture waited.
func (th *Then) ExpectHistory(displayName string, f func(t *testing.T, states []NodeState)) *Then {
	th.t.Helper()
	var states []NodeState
	for _, h := range th.w.history {
		if h.displayName == displayName || (displayName == RootNode && h.root) {
			states = append(states, h.states...)
		}
	}
	f(th.t, states)
	return th
}

// ExpectDrivers checks the workflow's driver pods.
func (th *Then) ExpectDrivers(f func(t *testing.T, drivers []corev1.Pod)) *Then {
	th.t.Helper()
	drivers, err := th.w.env.Drivers(context.Background(), th.w.wf)
	if err != nil {
		th.t.Fatal(err)
	}
	f(th.t, drivers)
	return th
}

// Drivers returns the driver pods sparkplug launched for wf, by name.
func (e *Env) Drivers(ctx context.Context, wf *wfv1.Workflow) ([]corev1.Pod, error) {
	return e.sparkPods(ctx, wf, spark.RoleDriver)
}

// Executors returns the executor pods of wf's drivers, by name.
func (e *Env) Executors(ctx context.Context, wf *wfv1.Workflow) ([]corev1.Pod, error) {
	return e.sparkPods(ctx, wf, spark.RoleExecutor)
}

func (e *Env) sparkPods(ctx context.Context, wf *wfv1.Workflow, role string) ([]corev1.Pod, error) {
	pods, err := e.Kube.CoreV1().Pods(wf.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.Set{spark.LabelWorkflowUID: string(wf.UID), spark.LabelRole: role}.String(),
	})
	if err != nil {
		return nil, fmt.Errorf("list %s pods of %s: %w", role, wf.Name, err)
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	return pods.Items, nil
}

// dump prints what a failed test needs to see: the nodes and what they
// went through, the Spark pods, and the ends of the logs.
func (w *When) dump() {
	if w.wf == nil {
		return
	}
	t := w.t
	var b strings.Builder
	fmt.Fprintf(&b, "workflow %s: %s %q\n", w.wf.Name, w.wf.Status.Phase, w.wf.Status.Message)
	ids := make([]string, 0, len(w.history))
	for id := range w.history {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		h := w.history[id]
		fmt.Fprintf(&b, "  node %s (%s):\n", h.displayName, id)
		for _, s := range h.states {
			fmt.Fprintf(&b, "    %s\n", s)
		}
	}
	for _, role := range []string{spark.RoleDriver, spark.RoleExecutor} {
		pods, _ := w.env.sparkPods(context.Background(), w.wf, role)
		for _, p := range pods {
			fmt.Fprintf(&b, "  %s %s: %s %s node-id=%s\n", role, p.Name, p.Status.Phase, p.Status.Reason, p.Annotations[spark.AnnotationNodeID])
		}
	}
	t.Log(b.String())
	t.Logf("sparkplug sidecar logs, last %d lines of each:\n%s", dumpLines, w.env.Sidecars.LogTail(w.wf.Name, dumpLines))
	t.Logf("workflow-controller log, lines about %s:\n%s", w.wf.Name, grepTail(w.env.ControllerLogTail(2000), w.wf.Name, dumpLines))
	for _, p := range w.env.Agents.Logs() {
		if strings.Contains(filepath.Base(p), w.wf.Name) {
			b, _ := os.ReadFile(p)
			t.Logf("agent log %s, last %d lines:\n%s", p, dumpLines, grepTail(string(b), "", dumpLines))
		}
	}
}

// grepTail returns the last n lines of s that contain sub.
func grepTail(s, sub string, n int) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return strings.Join(out, "\n")
}

// convert decodes a YAML-decoded object into a typed one, strictly.
func convert(t *testing.T, obj map[string]any, into any) {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("decode %v: %v", obj["kind"], err)
	}
}

// labelValue makes a test name a label value.
func labelValue(s string) string {
	s = regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(s, "_")
	if len(s) > 63 {
		s = s[len(s)-63:]
	}
	return strings.Trim(s, "._-")
}
