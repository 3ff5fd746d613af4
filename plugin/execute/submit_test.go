package execute

import (
	"context"
	"encoding/json"
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

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
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

// startCore starts a Core on fake clients, for a workflow wf (uid uid-1)
// in namespace ns whose task wf-1 is tmpl.
func startCore(t *testing.T, clients scope.Clients, tmpl *wfv1.Template) (*Core, executor.ExecuteTemplateArgs) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts := Options{}
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	builder, err := objects.New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	reg := scope.NewRegistry(clients, time.Minute, log, time.Now)
	go reg.Run(ctx)
	core := New(opts, clients, reg, builder, nil, nil, log)
	args := executor.ExecuteTemplateArgs{
		Workflow: &executor.Workflow{ObjectMeta: executor.ObjectMeta{Name: "wf", Namespace: "ns", UID: "uid-1"}},
		Template: tmpl,
	}
	return core, args
}

func TestTransientCreateErrorIsAskedAgain(t *testing.T) {
	core, args, calls := newCore(t, func(n int) error {
		if n == 1 {
			return apierrors.NewServerTimeout(schema.GroupResource{Resource: "pods"}, "create", 1)
		}
		return nil
	}, "")
	r, err := core.Execute(context.Background(), args)
	if err != nil {
		t.Fatal(err)
	}
	if r.Node.Phase != wfv1.NodePending || r.Requeue == nil || !strings.Contains(r.Node.Message, "transient") {
		t.Fatalf("after a server timeout: %+v; want Pending with a requeue", r.Node)
	}
	r, err = core.Execute(context.Background(), args)
	if err != nil {
		t.Fatal(err)
	}
	if r.Node.Phase != wfv1.NodePending || !strings.Contains(r.Node.Message, "SUBMITTED") || *calls != 2 {
		t.Fatalf("second call: %+v after %d creates; want the driver submitted", r.Node, *calls)
	}
}

func TestRejectedSubmissionFailsWithTheAPIServersMessage(t *testing.T) {
	quota := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "wf-driver", errorString("exceeded quota: compute, requested: limits.memory=1408Mi"))
	core, args, _ := newCore(t, func(int) error { return quota }, "")
	r, err := core.Execute(context.Background(), args)
	if err != nil {
		t.Fatal(err)
	}
	if r.Node.Phase != wfv1.NodeFailed || !strings.HasPrefix(r.Node.Message, "SUBMISSION_FAILED: ") || !strings.Contains(r.Node.Message, "exceeded quota") || r.Requeue != nil {
		t.Fatalf("quota rejection: %+v", r)
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
	r, err := core.Execute(context.Background(), args)
	if err != nil {
		t.Fatal(err)
	}
	if r.Node.Phase != wfv1.NodePending || !strings.Contains(r.Node.Message, "SUBMISSION_FAILED: retry 1/2") {
		t.Fatalf("first rejection: %+v; want a retry", r.Node)
	}
	// Within the interval nothing is submitted.
	if r, _ = core.Execute(context.Background(), args); *calls != 1 || !strings.Contains(r.Node.Message, "SUBMISSION_FAILED") {
		t.Fatalf("within the interval: %d creates, %+v", *calls, r.Node)
	}
	time.Sleep(1100 * time.Millisecond)
	r, err = core.Execute(context.Background(), args)
	if err != nil {
		t.Fatal(err)
	}
	if *calls != 2 || r.Node.Phase != wfv1.NodePending || !strings.HasPrefix(r.Node.Message, "SUBMITTED") {
		t.Fatalf("after the interval: %d creates, %+v; want the driver submitted", *calls, r.Node)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
