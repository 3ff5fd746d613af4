package request

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/ack"
	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/nodestatus"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// ErrBadRequest marks a request that is not a template.execute request at
// all (the server answers 400). It is the acknowledger's (package ack):
// one rule for both.
var ErrBadRequest = ack.ErrBadRequest

// MaxFlows bounds the workflows one process follows because requests
// named them (a sidecar that does not know its own agent pod).
const MaxFlows = 64

// Follower is what the answers need of the core that follows the
// workflows' nodes (execute.Core).
type Follower interface {
	// Serve starts following a workflow, if not already; it returns at
	// once.
	Serve(wf spark.WorkflowRef)
	// Following reports whether the workflow with uid is followed.
	Following(uid string) bool
	// Flows is how many workflows are followed.
	Flows() int
	// AccessDenied waits a while for the review of the permission to
	// write the followed workflow's results, and returns the permission
	// found missing ("" when allowed or not known in time).
	AccessDenied(ctx context.Context, uid string) string
	// PassAll asks for a pass over every Spark node of the followed
	// workflow.
	PassAll(uid string)
}

// Answerer answers the agent's template.execute requests for the sidecar.
type Answerer struct {
	core Follower
	log  *slog.Logger

	mu sync.Mutex
	// own is the workflow of the agent pod this process runs in, once
	// known (Pin): then requests start following no other.
	own string
}

// New returns an Answerer that follows, through core, the workflows the
// requests name.
func New(core Follower, log *slog.Logger) *Answerer {
	return &Answerer{core: core, log: log}
}

// Execute answers one template.execute request. The request carries no
// node id, so it cannot say which node asks; the nodes' results go into
// the TaskSet under their own ids instead. So a spark template, valid or
// not, gets an acknowledgement: a node without a phase, which the agent
// never writes, and an explicit zero requeue, so that it never asks
// about the node again (the agent's reply struct is shared by its
// plugins: a field left out keeps another plugin's value). A template of
// another plugin gets {} (reply.Node nil), which passes it on. The one
// exception: where this process may not write the TaskSet's status, the
// reply fails the node and says which permission is missing.
//
// Which request is which is ack.Classify's rule, the acknowledger's too.
// The request's workflow is a hint: it starts following that workflow
// if this process did not know it from its own pod.
func (a *Answerer) Execute(ctx context.Context, args executor.ExecuteTemplateArgs) (executor.ExecuteTemplateReply, error) {
	var none executor.ExecuteTemplateReply
	kind, err := ack.Classify(ackRequest(args))
	if err != nil {
		return none, err
	}
	if kind != ack.Spark {
		return none, nil // another plugin's template
	}
	meta := args.Workflow.ObjectMeta
	if err := a.serveAsked(spark.WorkflowRef{Name: meta.Name, Namespace: meta.Namespace, UID: meta.UID}); err != nil {
		a.log.Info("request about a workflow this sidecar does not follow", "workflow", meta.Name, "uid", meta.UID, "error", err.Error())
		return declined(err.Error()), nil
	}
	if denied := a.core.AccessDenied(ctx, meta.UID); denied != "" {
		return declined(denied), nil
	}
	a.core.PassAll(meta.UID)
	return Acknowledgement(), nil
}

// declined is the reply that fails the asking node, saying why, as the
// typed outcome renders it (decide.Declined, nodestatus.Of).
func declined(why string) executor.ExecuteTemplateReply {
	res := nodestatus.Of(decide.Declined(why))
	return executor.ExecuteTemplateReply{Node: &res}
}

// Decode reads one template.execute request from r into Argo's types, as
// the sidecar's server does before Execute (one JSON value; what follows
// it is not read): ack.Decode's counterpart, which reads into the
// acknowledger's lighter types. Its error is a body that is no request
// (the server answers 400, or 413 when r says the body is too long).
func Decode(r io.Reader) (executor.ExecuteTemplateArgs, error) {
	var args executor.ExecuteTemplateArgs
	err := json.NewDecoder(r).Decode(&args)
	return args, err
}

// ackRequest is the part of args package ack's rule reads.
func ackRequest(args executor.ExecuteTemplateArgs) ack.Request {
	var r ack.Request
	if w := args.Workflow; w != nil {
		m := w.ObjectMeta
		r.Workflow = &ack.Workflow{Metadata: ack.Metadata{Name: m.Name, Namespace: m.Namespace, UID: string(m.UID)}}
	}
	if t := args.Template; t != nil {
		r.Template = &ack.Template{}
		if t.Plugin != nil {
			r.Template.Plugin = &ack.Plugin{Value: t.Plugin.Value}
		}
	}
	return r
}

// Acknowledgement is the reply to every spark template: a node with no
// phase (the agent writes nothing) and a zero requeue (it never asks
// again).
func Acknowledgement() executor.ExecuteTemplateReply {
	return executor.ExecuteTemplateReply{Node: &wfv1.NodeResult{}, Requeue: &metav1.Duration{}}
}

// Pin follows workflow wf, the one of the agent pod this process runs
// in, and from then on no other a request names.
func (a *Answerer) Pin(wf spark.WorkflowRef) {
	a.mu.Lock()
	a.own = wf.UID
	a.mu.Unlock()
	a.core.Serve(wf)
}

// serveAsked is Serve for a workflow a request names: refused for
// another workflow than the pinned one, or beyond MaxFlows. Requests are
// checked and served one at a time (Serve returns at once), so that two
// at once cannot both pass the bound.
func (a *Answerer) serveAsked(wf spark.WorkflowRef) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.core.Following(wf.UID) {
		return nil
	}
	switch n, own := a.core.Flows(), a.own; {
	case own != "" && own != wf.UID:
		return fmt.Errorf("this sparkplug sidecar serves the workflow of its own agent pod (uid %s), not %s/%s (uid %s)", own, wf.Namespace, wf.Name, wf.UID)
	case n >= MaxFlows:
		return fmt.Errorf("this sparkplug process follows %d workflows already, the most it does", n)
	}
	a.core.Serve(wf)
	return nil
}
