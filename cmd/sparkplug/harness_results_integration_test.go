//go:build integration

package main

// The harness's side of the node-identity contract: asking as the agent
// does (the reply is an acknowledgement) and reading the result sparkplug
// wrote for a node into the WorkflowTaskSet.

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	"k8s.io/apimachinery/pkg/util/wait"
)

// nodeOf is the one node setTasks listed with template tmpl.
func (e *env) nodeOf(tmpl *wfv1.Template) string {
	e.t.Helper()
	want, _ := json.Marshal(tmpl)
	var ids []string
	for id, t := range e.tasks {
		if got, _ := json.Marshal(t); string(got) == string(want) {
			ids = append(ids, id)
		}
	}
	if len(ids) != 1 {
		e.t.Fatalf("%d listed nodes have template %s (%v); name the node", len(ids), tmpl.Name, ids)
	}
	return ids[0]
}

// entry reads the result written for node in the TaskSet's status.
func (e *env) entry(node string) (wfv1.NodeResult, bool) {
	e.t.Helper()
	res, ok := e.taskSet().Status.Nodes[node]
	return res, ok
}

// ask posts template.execute for tmpl as the agent does, retrying 503
// like the agent, and returns the reply: for a spark template the
// acknowledgement, which the test checks is one.
func (e *env) ask(tmpl *wfv1.Template) executor.ExecuteTemplateReply {
	e.t.Helper()
	body, err := json.Marshal(executor.ExecuteTemplateArgs{
		Workflow: &executor.Workflow{ObjectMeta: executor.ObjectMeta{Name: e.wf.Name, Namespace: e.ns, UID: string(e.wf.UID)}},
		Template: tmpl,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; ; i++ {
		r := e.post(pluginToken, body)
		if r.status == http.StatusServiceUnavailable && i < 10 {
			time.Sleep(time.Second)
			continue
		}
		if r.status != http.StatusOK {
			e.t.Fatalf("status %d: %s", r.status, r.body)
		}
		return r.reply
	}
}

// isAck: a reply is the acknowledgement (no phase, zero requeue).
func isAck(r executor.ExecuteTemplateReply) bool {
	return r.Node != nil && r.Node.Phase == "" && r.Node.Message == "" && r.Node.Outputs == nil && r.Requeue != nil && r.Requeue.Duration == 0
}

// execute asks about tmpl as the agent does, checks the reply is the
// acknowledgement, and returns (as a reply's node, for the tests' checks)
// the result sparkplug wrote for the one node listed with tmpl, once
// there is one.
func (e *env) execute(tmpl *wfv1.Template) executor.ExecuteTemplateReply {
	e.t.Helper()
	return e.eventually(tmpl, "a result is written", func(executor.ExecuteTemplateReply) bool { return true })
}

// eventually asks about tmpl once, then polls the result written for its
// node until check accepts it.
func (e *env) eventually(tmpl *wfv1.Template, what string, check func(executor.ExecuteTemplateReply) bool) executor.ExecuteTemplateReply {
	e.t.Helper()
	if r := e.ask(tmpl); !isAck(r) {
		e.t.Fatalf("reply %s, want the acknowledgement {\"node\":{},\"requeue\":\"0s\"}", describe(r))
	}
	return e.eventuallyNode(e.nodeOf(tmpl), what, check)
}

// eventuallyNode polls the result written for node until check accepts
// it.
func (e *env) eventuallyNode(node, what string, check func(executor.ExecuteTemplateReply) bool) executor.ExecuteTemplateReply {
	e.t.Helper()
	var last executor.ExecuteTemplateReply
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		res, ok := e.entry(node)
		if !ok {
			return false, nil
		}
		last = executor.ExecuteTemplateReply{Node: &res}
		return check(last), nil
	})
	if err != nil {
		e.t.Fatalf("node %s: %s: last result %s", node, what, describe(last))
	}
	return last
}
