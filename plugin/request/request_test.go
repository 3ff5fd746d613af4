package request

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
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sparkplug-io/sparkplug/plugin/ack"
	"github.com/sparkplug-io/sparkplug/plugin/edge/edgetest"
	"github.com/sparkplug-io/sparkplug/plugin/execute"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/templates"
)

// sparkApp is a valid spark body, %s where more fields go.
const sparkApp = `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar"%s}`

// templateOf is a plugin template whose plugin value is value.
func templateOf(value string) *wfv1.Template {
	tmpl := &wfv1.Template{Name: "pi", Plugin: &wfv1.Plugin{}}
	tmpl.Plugin.Value = json.RawMessage(value)
	return tmpl
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// answerer answers through a real core (execute.Core on fake clients)
// that follows workflow wf (uid uid-1) in namespace ns, whose task wf-1 is
// a valid spark step; allowed says whether the review of its permission
// to patch the TaskSet's status allows it (a fake clientset answers a
// review as it was sent, not allowed, unless told otherwise). No worker
// runs: the nodes queued are not reconciled. The args name that workflow.
func answerer(t *testing.T, allowed bool) (*Answerer, executor.ExecuteTemplateArgs) {
	t.Helper()
	tmpl := templateOf(`{"spark":` + strings.Replace(sparkApp, "%s", "", 1) + `}`)
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "wf", Namespace: "ns", UID: "uid-1"}}
	wf.Status.StartedAt = metav1.NewTime(time.Now().Add(-time.Minute))
	wf.Status.Phase = wfv1.WorkflowRunning
	wf.Status.Nodes = wfv1.Nodes{"wf-1": {ID: "wf-1", Name: "wf.pi", Type: wfv1.NodeTypePlugin, Phase: wfv1.NodePending}}
	ts := &wfv1.WorkflowTaskSet{
		ObjectMeta: metav1.ObjectMeta{Name: "wf", Namespace: "ns",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Name: "wf", UID: "uid-1"}}},
		Spec: wfv1.WorkflowTaskSetSpec{Tasks: map[string]wfv1.Template{"wf-1": *tmpl}},
	}
	kube := fake.NewClientset()
	kube.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SelfSubjectAccessReview).DeepCopy()
		r.Status.Allowed = allowed
		return true, r, nil
	})
	clients := scope.Clients{Kube: kube, Workflows: wffake.NewSimpleClientset(wf, ts)}
	opts := execute.Options{}
	if err := opts.Validate(); err != nil {
		t.Fatal(err)
	}
	builder, err := objects.New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	reg := scope.NewRegistry(clients, discard)
	go reg.Run(ctx)
	core := execute.New(opts, clients, reg, builder, nil, nil, discard)
	core.Serve(spark.WorkflowRef{Name: "wf", Namespace: "ns", UID: "uid-1"})
	args := executor.ExecuteTemplateArgs{
		Workflow: &executor.Workflow{ObjectMeta: executor.ObjectMeta{Name: "wf", Namespace: "ns", UID: "uid-1"}},
		Template: tmpl,
	}
	return New(core, discard), args
}

// Execute only acknowledges a spark template, valid or not: a node without
// a phase (which the agent never writes) and an explicit zero requeue
// (so it never asks again, whatever another plugin's reply left in the
// agent's shared reply). Another plugin's template gets {}, which passes
// it on.
func TestExecuteAcknowledges(t *testing.T) {
	a, args := answerer(t, true)
	for _, tc := range []struct {
		name, value, want string
	}{
		{"a valid spark template", `{"spark":` + strings.Replace(sparkApp, "%s", "", 1) + `}`, `{"node":{},"requeue":"0s"}`},
		{"an invalid spark body", `{"spark":` + strings.Replace(sparkApp, "%s", `,"restartPolicy":{"type":"Sometimes"}`, 1) + `}`, `{"node":{},"requeue":"0s"}`},
		{"another plugin's template", `{"slack":{"text":"hi"}}`, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := args
			args.Template = templateOf(tc.value)
			r, err := a.Execute(context.Background(), args)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("reply %s, want %s", got, tc.want)
			}
			if tc.want == `{}` && r.Node != nil {
				t.Fatalf("reply node %+v, want nil", r.Node)
			}
		})
	}
}

// The sidecar answers every body of package ack's cases as the case
// says, as its server asks (Decode, then Execute): the case's reply
// exactly, or, for a body that is no request, an error that is a decoding
// error or wraps ErrBadRequest (the server answers 400), never another
// (which would be 503). The acknowledger's test reads the same cases.
func TestExecuteAnswersEveryCaseOfTheRule(t *testing.T) {
	a, _ := answerer(t, true)
	for _, tc := range edgetest.Cases(t) {
		t.Run(tc.Name, func(t *testing.T) {
			args, err := Decode(strings.NewReader(tc.Body))
			if err != nil {
				if tc.Reply != "" {
					t.Fatalf("decoding: %v, want the reply %s", err, tc.Reply)
				}
				return
			}
			r, err := a.Execute(context.Background(), args)
			switch {
			case err != nil && !errors.Is(err, ErrBadRequest):
				t.Fatalf("%v: an error the server answers 503", err)
			case err != nil && tc.Reply != "":
				t.Fatalf("%v, want the reply %s", err, tc.Reply)
			case err == nil && tc.Reply == "":
				t.Fatalf("reply %+v, want a bad request", r)
			case err == nil:
				got, err := json.Marshal(r)
				if err != nil || string(got) != tc.Reply {
					t.Fatalf("reply %s (%v), want %s", got, err, tc.Reply)
				}
			}
		})
	}
	if got, err := json.Marshal(Acknowledgement()); err != nil || string(got) != string(ack.Reply(ack.Spark)) {
		t.Fatalf("Acknowledgement() is %s (%v), ack.Reply(ack.Spark) %s", got, err, ack.Reply(ack.Spark))
	}
}

// The one exception: where this process may not patch the TaskSet's
// status, every spark node it is asked about fails, naming the missing
// permission; another plugin's template is still passed on.
func TestExecuteFailsWithoutTheRightToWriteResults(t *testing.T) {
	a, args := answerer(t, false)
	r, err := a.Execute(context.Background(), args)
	if err != nil {
		t.Fatal(err)
	}
	if r.Node == nil || r.Node.Phase != wfv1.NodeFailed || !strings.Contains(r.Node.Message, "workflowtasksets/status") {
		t.Fatalf("reply %+v; want Failed naming workflowtasksets/status", r.Node)
	}
	args.Template = templateOf(`{"slack":{"text":"hi"}}`)
	if r, err = a.Execute(context.Background(), args); err != nil || r.Node != nil {
		t.Fatalf("another plugin's template: %+v, %v; want {}", r.Node, err)
	}
}
