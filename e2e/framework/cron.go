package framework

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Argo's words for the runs of a CronWorkflow (workflow/common).
const (
	// LabelCronWorkflow is on every Workflow a CronWorkflow starts, on
	// schedule or by hand: the CronWorkflow's name.
	LabelCronWorkflow = "workflows.argoproj.io/cron-workflow"
	// AnnotationScheduledTime is when a run was due (on schedule) or
	// submitted (by hand), RFC 3339.
	AnnotationScheduledTime = "workflows.argoproj.io/scheduled-time"
)

// cronPollInterval is how often cron waits look. The cron controller acts
// on whole minutes, and reads of its log cost more than a Get.
const cronPollInterval = 500 * time.Millisecond

// CreateCronWorkflow creates the WorkflowTemplates and the CronWorkflow
// given and submits nothing: the workflow-controller's cron scheduler
// starts the runs, on the real clock. Its runs carry the test's label
// (added to spec.workflowMetadata.labels). After the test the CronWorkflow
// and its runs are deleted; a failed test first prints the CronWorkflow,
// its runs, the run the fixture follows and what the controller logged
// about them.
func (w *When) CreateCronWorkflow() *When {
	w.t.Helper()
	if w.g.cron == nil {
		w.t.Fatal("no CronWorkflow given")
	}
	ctx := w.ctx()
	wfs := w.env.Workflows.ArgoprojV1alpha1()
	ns := w.env.Namespace
	for _, obj := range w.g.requires {
		var tmpl wfv1.WorkflowTemplate
		convert(w.t, obj, &tmpl)
		if _, err := wfs.WorkflowTemplates(ns).Create(ctx, &tmpl, metav1.CreateOptions{}); err != nil {
			w.t.Fatalf("create WorkflowTemplate %s: %v", tmpl.Name, err)
		}
		w.t.Cleanup(func() { _ = wfs.WorkflowTemplates(ns).Delete(ctx, tmpl.Name, metav1.DeleteOptions{}) })
	}
	obj, err := withRunLabel(w.g.cron, LabelTest, labelValue(w.t.Name()))
	if err != nil {
		w.t.Fatal(err)
	}
	var cron wfv1.CronWorkflow
	convert(w.t, obj, &cron) // strictly, as SubmitWorkflow checks what it creates
	// Created as given rather than as the typed object, which would add
	// workflowMetadata.creationTimestamp: null, a field Argo's CRD lacks.
	body, err := json.Marshal(obj)
	if err != nil {
		w.t.Fatal(err)
	}
	created := &wfv1.CronWorkflow{}
	if err := wfs.RESTClient().Post().Namespace(ns).Resource("cronworkflows").Body(body).Do(ctx).Into(created); err != nil {
		w.t.Fatalf("create CronWorkflow %s: %v", cron.Name, err)
	}
	w.t.Logf("created CronWorkflow %s/%s at %s: schedules %q, concurrencyPolicy %q",
		ns, created.Name, time.Now().Format("15:04:05.000"), created.Spec.GetSchedules(ctx), created.Spec.ConcurrencyPolicy)
	w.t.Cleanup(func() {
		if w.t.Failed() {
			w.dumpCron()
			w.dump()
		}
		policy := metav1.DeletePropagationBackground
		del := metav1.DeleteOptions{PropagationPolicy: &policy}
		if err := wfs.CronWorkflows(ns).Delete(ctx, created.Name, del); err != nil && !apierrors.IsNotFound(err) {
			w.t.Logf("delete CronWorkflow %s: %v", created.Name, err)
		}
		// Its runs would go by garbage collection (they are owned by
		// it); deleting them now frees their drivers sooner.
		sel := labels.Set{LabelCronWorkflow: created.Name}.String()
		if err := wfs.Workflows(ns).DeleteCollection(ctx, del, metav1.ListOptions{LabelSelector: sel}); err != nil {
			w.t.Logf("delete the runs of CronWorkflow %s: %v", created.Name, err)
		}
	})
	return w
}

// withRunLabel returns a copy of a CronWorkflow as decoded from YAML whose
// spec.workflowMetadata.labels hold key: value.
func withRunLabel(cron map[string]any, key, value string) (map[string]any, error) {
	b, err := json.Marshal(cron)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	spec, _ := out["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		out["spec"] = spec
	}
	md, _ := spec["workflowMetadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		spec["workflowMetadata"] = md
	}
	lbls, _ := md["labels"].(map[string]any)
	if lbls == nil {
		lbls = map[string]any{}
		md["labels"] = lbls
	}
	lbls[key] = value
	return out, nil
}

// cronName is the name of the CronWorkflow given.
func (w *When) cronName() string {
	w.t.Helper()
	md, _ := w.g.cron["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	if name == "" {
		w.t.Fatal("no CronWorkflow given, or it has no metadata.name")
	}
	return name
}

// CronWorkflow returns the CronWorkflow given, as it is now.
func (w *When) CronWorkflow() *wfv1.CronWorkflow {
	w.t.Helper()
	cron, _ := w.cronAndRuns()
	return cron
}

// Runs returns the CronWorkflow's runs, oldest first: the Workflows that
// carry its label, scheduled or started by hand.
func (w *When) Runs() []wfv1.Workflow {
	w.t.Helper()
	_, runs := w.cronAndRuns()
	return runs
}

func (w *When) cronAndRuns() (*wfv1.CronWorkflow, []wfv1.Workflow) {
	w.t.Helper()
	ctx := w.ctx()
	wfs := w.env.Workflows.ArgoprojV1alpha1()
	name := w.cronName()
	cron, err := wfs.CronWorkflows(w.env.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatalf("get CronWorkflow %s: %v", name, err)
	}
	list, err := wfs.Workflows(w.env.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.Set{LabelCronWorkflow: name}.String(),
	})
	if err != nil {
		w.t.Fatalf("list the runs of CronWorkflow %s: %v", name, err)
	}
	runs := list.Items
	sort.Slice(runs, func(i, j int) bool {
		a, b := runs[i].CreationTimestamp, runs[j].CreationTimestamp
		if !a.Equal(&b) {
			return a.Before(&b)
		}
		return runs[i].Name < runs[j].Name
	})
	return cron, runs
}

// WaitForCronWorkflow polls the CronWorkflow and its runs (oldest first)
// until done holds, or fails at once when done returns an error.
func (w *When) WaitForCronWorkflow(what string, done func(cron *wfv1.CronWorkflow, runs []wfv1.Workflow) (bool, error), timeout ...time.Duration) *When {
	w.t.Helper()
	w.cronPoll("CronWorkflow "+w.cronName()+" "+what, timeout, func() (bool, error) {
		cron, runs := w.cronAndRuns()
		return done(cron, runs)
	})
	return w
}

// WaitForRuns waits until the CronWorkflow has n runs, then follows the
// n-th (oldest first): WaitForWorkflow, WaitForNode, WaitForDrivers,
// Terminate and Then act on it.
func (w *When) WaitForRuns(n int, timeout ...time.Duration) *When {
	w.t.Helper()
	w.WaitForCronWorkflow(fmt.Sprintf("to have %d runs", n), func(_ *wfv1.CronWorkflow, runs []wfv1.Workflow) (bool, error) {
		return len(runs) >= n, nil
	}, timeout...)
	return w.FollowRun(n - 1)
}

// FollowRun makes run i of the CronWorkflow (oldest first, from 0) the
// workflow the fixture acts on.
func (w *When) FollowRun(i int) *When {
	w.t.Helper()
	runs := w.Runs()
	if i < 0 || i >= len(runs) {
		w.t.Fatalf("CronWorkflow %s has %d runs, no run %d", w.cronName(), len(runs), i)
	}
	w.wf = &runs[i]
	w.record(w.wf)
	w.t.Logf("following run %d of %s: %s (scheduled-time %s)", i, w.cronName(), w.wf.Name, w.wf.Annotations[AnnotationScheduledTime])
	return w
}

// WaitForCronAccepted waits until the workflow-controller's cron
// controller has validated the CronWorkflow and put its schedules on its
// clock (Argo v3 logs "CronWorkflow <ns>/<name> added", v4 msg="CronWorkflow
// added" with cronWorkflow=<ns>/<name>), and fails at once when it found
// the CronWorkflow invalid.
func (w *When) WaitForCronAccepted(timeout ...time.Duration) *When {
	w.t.Helper()
	key := w.env.Namespace + "/" + w.cronName()
	field := "cronWorkflow=" + key + " "
	w.waitForControllerLog("the controller to schedule CronWorkflow "+key, timeout, func(line string) (bool, error) {
		if strings.Contains(line+" ", field) && strings.Contains(line, "level=error") {
			return false, fmt.Errorf("the controller refused it: %s", line)
		}
		return strings.Contains(line, "CronWorkflow "+key+" added") ||
			(strings.Contains(line, `msg="CronWorkflow added"`) && strings.Contains(line+" ", field)), nil
	})
	return w
}

// WaitForControllerLog waits until the workflow-controller has logged a
// line (since it started) that holds every one of parts.
func (w *When) WaitForControllerLog(timeout time.Duration, parts ...string) *When {
	w.t.Helper()
	w.waitForControllerLog(fmt.Sprintf("the controller to log %q", parts), []time.Duration{timeout}, func(line string) (bool, error) {
		for _, p := range parts {
			if !strings.Contains(line, p) {
				return false, nil
			}
		}
		return true, nil
	})
	return w
}

// waitForControllerLog reads the controller's log from its start, then
// what it appends, until match says a line is the one.
func (w *When) waitForControllerLog(what string, timeout []time.Duration, match func(line string) (bool, error)) {
	w.t.Helper()
	if w.env.controller == nil {
		w.t.Fatal("no workflow-controller runs")
	}
	var (
		offset  int64
		partial []byte
	)
	w.cronPoll(what, timeout, func() (bool, error) {
		f, err := os.Open(w.env.controller.LogPath())
		if err != nil {
			return false, err
		}
		defer f.Close()
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return false, err
		}
		b, err := io.ReadAll(f)
		if err != nil {
			return false, err
		}
		offset += int64(len(b))
		b = append(partial, b...)
		last := bytes.LastIndexByte(b, '\n')
		partial = append([]byte(nil), b[last+1:]...)
		for _, line := range strings.Split(string(b[:last+1]), "\n") {
			if ok, err := match(line); ok || err != nil {
				if ok {
					w.t.Logf("controller: %s", line)
				}
				return ok, err
			}
		}
		return false, nil
	})
}

// WaitUntil waits until the clock reads at least t (a schedule's minute),
// checking meanwhile that the environment is alive.
func (w *When) WaitUntil(t time.Time) *When {
	w.t.Helper()
	w.cronPoll("the clock to read "+t.Format("15:04:05"), []time.Duration{time.Until(t) + time.Minute}, func() (bool, error) {
		return !time.Now().Before(t), nil
	})
	return w
}

func (w *When) cronPoll(what string, timeout []time.Duration, done func() (bool, error)) {
	w.t.Helper()
	took := pollUntil(w.t, w.env, what, timeoutOr(timeout), cronPollInterval, done, nil)
	w.t.Logf("%s after %v (at %s)", what, took.Round(100*time.Millisecond), time.Now().Format("15:04:05.000"))
}

// ScheduledTime is the time a run was due (or submitted by hand), from
// Argo's annotation.
func ScheduledTime(wf *wfv1.Workflow) (time.Time, error) {
	s, ok := wf.Annotations[AnnotationScheduledTime]
	if !ok {
		return time.Time{}, fmt.Errorf("workflow %s has no %s annotation", wf.Name, AnnotationScheduledTime)
	}
	return time.Parse(time.RFC3339, s)
}

// ExpectCronWorkflow checks the CronWorkflow and its runs, oldest first.
func (th *Then) ExpectCronWorkflow(f func(t *testing.T, cron *wfv1.CronWorkflow, runs []wfv1.Workflow)) *Then {
	th.t.Helper()
	cron, runs := th.w.cronAndRuns()
	f(th.t, cron, runs)
	return th
}

// dumpCron prints the CronWorkflow's status, its runs, and what the
// controller logged about it.
func (w *When) dumpCron() {
	name := w.cronName()
	ctx := w.ctx()
	wfs := w.env.Workflows.ArgoprojV1alpha1()
	var b strings.Builder
	cron, err := wfs.CronWorkflows(w.env.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		fmt.Fprintf(&b, "CronWorkflow %s: %v\n", name, err)
	} else {
		st := cron.Status
		fmt.Fprintf(&b, "CronWorkflow %s: phase %q, lastScheduledTime %v, succeeded %d, failed %d, conditions %v\n",
			name, st.Phase, st.LastScheduledTime, st.Succeeded, st.Failed, st.Conditions)
		for _, a := range st.Active {
			fmt.Fprintf(&b, "  active: %s (%s)\n", a.Name, a.UID)
		}
	}
	list, err := wfs.Workflows(w.env.Namespace).List(ctx, metav1.ListOptions{LabelSelector: labels.Set{LabelCronWorkflow: name}.String()})
	if err == nil {
		for _, r := range list.Items {
			fmt.Fprintf(&b, "  run %s (%s): created %s, scheduled-time %s, shutdown %q: %s %q\n", r.Name, r.UID,
				r.CreationTimestamp.Format("15:04:05"), r.Annotations[AnnotationScheduledTime], r.Spec.Shutdown, r.Status.Phase, r.Status.Message)
		}
	}
	w.t.Log(b.String())
	// The cron controller's lines: about the CronWorkflow itself, not
	// each step of its runs (the run followed is dumped on its own).
	key := "cronWorkflow=" + w.env.Namespace + "/" + name + " "
	own := "workflow=" + name + " "
	var lines []string
	for _, line := range strings.Split(w.env.ControllerLogTail(50000), "\n") {
		if l := line + " "; strings.Contains(l, key) || strings.Contains(l, own) {
			lines = append(lines, line)
		}
	}
	if len(lines) > dumpLines {
		lines = lines[len(lines)-dumpLines:]
	}
	w.t.Logf("workflow-controller log, the cron controller's lines about %s:\n%s", name, strings.Join(lines, "\n"))
}
