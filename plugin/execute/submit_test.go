package execute

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/scope/scopetest"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/step"
	"github.com/sparkplug-io/sparkplug/templates"
)

// These tests inject API errors a real API server cannot be made to return
// on demand; everything else is tested against a real one (cmd/sparkplug
// integration tests).

const body = `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar"%s}`

func newCore(t *testing.T, createErr func(attempt int) error, extra string) (*Core, executor.ExecuteTemplateArgs, *int) {
	t.Helper()
	tmpl := &wfv1.Template{Name: "pi", Plugin: &wfv1.Plugin{}}
	tmpl.Plugin.Value = json.RawMessage(`{"spark":` + strings.Replace(body, "%s", extra, 1) + `}`)
	ts := &wfv1.WorkflowTaskSet{
		ObjectMeta: metav1.ObjectMeta{Name: "wf", Namespace: "ns"},
		Spec:       wfv1.WorkflowTaskSetSpec{Tasks: map[string]wfv1.Template{"wf-1": *tmpl}},
	}
	kube := fake.NewClientset()
	calls := 0
	kube.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		if err := createErr(calls); err != nil {
			return true, nil, err
		}
		return false, nil, nil
	})
	core, args := startCore(t, scope.Clients{Kube: kube, Workflows: wffake.NewSimpleClientset(ts)}, tmpl)
	return core, args, &calls
}

// startCore starts a Core on fake clients, following workflow wf (uid
// uid-1, started, its node wf-1 Pending) in namespace ns, whose TaskSet
// (the caller put it in clients.Workflows) lists task wf-1 as tmpl. The
// args name that workflow as the agent's request would; testPass reconciles its nodes.
func startCore(t *testing.T, clients scope.Clients, tmpl *wfv1.Template) (*Core, executor.ExecuteTemplateArgs) {
	t.Helper()
	return startCoreWith(t, clients, tmpl, Options{})
}

// startCoreWith is startCore with the options opts (validated here).
func startCoreWith(t *testing.T, clients scope.Clients, tmpl *wfv1.Template, opts Options) (*Core, executor.ExecuteTemplateArgs) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	builder, err := objects.New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	argo := clients.Workflows.ArgoprojV1alpha1()
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "wf", Namespace: "ns", UID: "uid-1"}}
	wf.Status.StartedAt = metav1.NewTime(time.Now().Add(-time.Minute))
	wf.Status.Phase = wfv1.WorkflowRunning
	wf.Status.Nodes = wfv1.Nodes{"wf-1": {ID: "wf-1", Name: "wf.pi", Type: wfv1.NodeTypePlugin, Phase: wfv1.NodePending}}
	if _, err := argo.Workflows("ns").Create(ctx, wf, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ts, err := argo.WorkflowTaskSets("ns").Get(ctx, "wf", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ts.OwnerReferences = []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Name: "wf", UID: "uid-1"}}
	if _, err := argo.WorkflowTaskSets("ns").Update(ctx, ts, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	gate := scopetest.NewGate(watchOpenDelay, clients.Kube, clients.Workflows, clients.Dynamic)
	reg := scope.NewRegistry(clients, log)
	go reg.Run(ctx)
	core := New(opts, clients, reg, builder, nil, nil, log)
	t.Cleanup(core.stop)
	args := executor.ExecuteTemplateArgs{
		Workflow: &executor.Workflow{ObjectMeta: executor.ObjectMeta{Name: "wf", Namespace: "ns", UID: "uid-1"}},
		Template: tmpl,
	}
	core.Serve(spark.WorkflowRef{Name: "wf", Namespace: "ns", UID: "uid-1"})
	fl := core.flowOf("uid-1")
	select {
	case <-fl.scope.Synced():
	case <-time.After(10 * time.Second):
		t.Fatal("the workflow's cache did not sync")
	}
	gate.Wait(t)
	return core, args
}

// testPass reconciles node wf-1 of the args' workflow once, as an event
// would, and returns the result it offered to the writer as a reply's
// node (nil when none).
func (c *Core) testPass(ctx context.Context, args executor.ExecuteTemplateArgs) (executor.ExecuteTemplateReply, error) {
	fl := c.flowOf(args.Workflow.ObjectMeta.UID)
	if fl == nil {
		return executor.ExecuteTemplateReply{}, errors.New("the workflow is not followed")
	}
	if err := c.reconcile(ctx, fl, "wf-1"); err != nil {
		return executor.ExecuteTemplateReply{}, err
	}
	res, ok := fl.writer.Wanted("wf-1")
	if !ok {
		return executor.ExecuteTemplateReply{}, nil
	}
	return executor.ExecuteTemplateReply{Node: &res}, nil
}

// runPass runs testPass, failing the test on an error.
func runPass(t *testing.T, c *Core, args executor.ExecuteTemplateArgs) executor.ExecuteTemplateReply {
	t.Helper()
	r, err := c.testPass(context.Background(), args)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A transient API error leaves the node Pending, saying so, and a later
// pass launches the driver; the pass after the launch reports it.
func TestTransientCreateErrorIsAskedAgain(t *testing.T) {
	core, args, calls := newCore(t, func(n int) error {
		if n == 1 {
			return apierrors.NewServerTimeout(schema.GroupResource{Resource: "pods"}, "create", 1)
		}
		return nil
	}, "")
	r := runPass(t, core, args)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending || !strings.Contains(r.Node.Message, "transient") {
		t.Fatalf("after a server timeout: %+v; want Pending, saying it is transient", r.Node)
	}
	runPass(t, core, args) // launches
	r = runPass(t, core, args)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending || !strings.HasPrefix(r.Node.Message, "SUBMITTED") || *calls != 2 {
		t.Fatalf("after the launch: %+v after %d creates; want the driver submitted", r.Node, *calls)
	}
}

func TestRejectedSubmissionFailsWithTheAPIServersMessage(t *testing.T) {
	quota := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "wf-driver", errorString("exceeded quota: compute, requested: limits.memory=1408Mi"))
	core, args, _ := newCore(t, func(int) error { return quota }, "")
	r := runPass(t, core, args)
	if r.Node == nil || r.Node.Phase != wfv1.NodeFailed || !strings.HasPrefix(r.Node.Message, "SUBMISSION_FAILED: ") || !strings.Contains(r.Node.Message, "exceeded quota") {
		t.Fatalf("quota rejection: %+v", r.Node)
	}
}

func TestRejectedSubmissionIsRetriedPerPolicy(t *testing.T) {
	denied := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "wf-driver", nil)
	core, args, calls := newCore(t, func(n int) error {
		if n == 1 {
			return denied
		}
		return nil
	}, `,"restartPolicy":{"type":"OnFailure","onSubmissionFailureRetries":2,"onSubmissionFailureRetryInterval":1}`)
	r := runPass(t, core, args)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending || !strings.Contains(r.Node.Message, "SUBMISSION_FAILED: retry 1/2") {
		t.Fatalf("first rejection: %+v; want a retry", r.Node)
	}
	// Within the interval nothing is submitted.
	if r = runPass(t, core, args); *calls != 1 || r.Node == nil || !strings.Contains(r.Node.Message, "SUBMISSION_FAILED: retry 1/2 in") {
		t.Fatalf("within the interval: %d creates, %+v", *calls, r.Node)
	}
	time.Sleep(1100 * time.Millisecond)
	runPass(t, core, args) // launches
	if *calls != 2 {
		t.Fatalf("after the interval: %d creates, want 2", *calls)
	}
	if r = runPass(t, core, args); r.Node == nil || r.Node.Phase != wfv1.NodePending || !strings.HasPrefix(r.Node.Message, "SUBMITTED") {
		t.Fatalf("after the launch: %+v; want the driver submitted", r.Node)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

// A refused launch, as two passes: act records the refusal (counted, an
// Event) and reports nothing; the next pass decides on what act
// recorded and reports the retry; reconcile runs both at once.
func TestARefusedLaunchIsRecordedThenDecided(t *testing.T) {
	quota := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "wf-driver", errorString("exceeded quota: compute"))
	core, _, calls := newCore(t, func(int) error { return quota }, `,"restartPolicy":{"type":"OnFailure","onSubmissionFailureRetries":1}`)
	fl := core.flowOf("uid-1")
	ts, wf := fl.scope.TaskSet(), fl.scope.WorkflowObject()
	tmpl := ts.Spec.Tasks["wf-1"]
	st, ok, err := fl.step("wf-1", &tmpl, core.opts, func(st *step.Step) error { return core.admit(st, fl.scope.Workflow, "wf-1") })
	if !ok || err != nil {
		t.Fatalf("step of wf-1: %v %v", ok, err)
	}
	r := core.newPass(context.Background(), fl, "wf-1", st, wf, core.log)
	snap := r.gather(ts, wf)
	pl := decide.Decide(snap, r.policy)
	if pl.Launch != 1 {
		t.Fatalf("plan %+v; want attempt 1 launched", pl)
	}
	befell, err := r.act(snap, pl)
	if err != nil || befell == nil || befell.Kind != decide.Rejected || befell.Attempt != 1 || !strings.Contains(befell.Message, "exceeded quota") {
		t.Fatalf("act: %+v, %v; want the refusal of attempt 1 recorded", befell, err)
	}
	if res, said := fl.writer.Wanted("wf-1"); said {
		t.Fatalf("act reported %+v; the next pass decides what is reported", res)
	}
	if f := core.failures.of("uid-1", "wf-1")[1]; f.Count != 1 || *calls != 1 {
		t.Fatalf("refusals counted %+v after %d creates; want 1 after 1", f, *calls)
	}
	snap.Befell, snap.Failures = befell, core.failures.of("uid-1", "wf-1")
	pl = decide.Decide(snap, r.policy)
	if pl.Launch != 0 || !pl.Report || !strings.HasPrefix(pl.Outcome.Message(), "SUBMISSION_FAILED: retry 1/1 soon: ") {
		t.Fatalf("the next pass: %+v %q; want the retry reported", pl, pl.Outcome.Message())
	}
	if befell, err := r.act(snap, pl); befell != nil || err != nil {
		t.Fatalf("reporting: %+v, %v", befell, err)
	}
	if res, said := fl.writer.Wanted("wf-1"); !said || res.Phase != wfv1.NodePending || res.Message != pl.Outcome.Message() {
		t.Fatalf("reported %+v; want %q", res, pl.Outcome.Message())
	}
}
