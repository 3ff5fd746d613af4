package request

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// follower is a Follower that records what it is asked. Serve takes
// serveTime, as a real one takes a moment.
type follower struct {
	mu          sync.Mutex
	flows       []string // uids, in the order served
	denied      string
	passesAsked []string
	serveTime   time.Duration
}

func (f *follower) Serve(wf spark.WorkflowRef) {
	time.Sleep(f.serveTime)
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Contains(f.flows, wf.UID) {
		f.flows = append(f.flows, wf.UID)
	}
}

func (f *follower) Following(uid string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Contains(f.flows, uid)
}

func (f *follower) Flows() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.flows)
}

func (f *follower) AccessDenied(context.Context, string) string { return f.denied }

func (f *follower) PassAll(uid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.passesAsked = append(f.passesAsked, uid)
}

// askAbout is a request about a valid spark step of workflow uid.
func askAbout(uid string) executor.ExecuteTemplateArgs {
	return executor.ExecuteTemplateArgs{
		Workflow: &executor.Workflow{ObjectMeta: executor.ObjectMeta{Name: "wf-" + uid, Namespace: "ns", UID: uid}},
		Template: templateOf(`{"spark":` + strings.Replace(sparkApp, "%s", "", 1) + `}`),
	}
}

// failed fails the test unless r fails the node with a message holding
// want.
func failed(t *testing.T, r executor.ExecuteTemplateReply, err error, want string) {
	t.Helper()
	if err != nil || r.Node == nil || r.Node.Phase != wfv1.NodeFailed || !strings.Contains(r.Node.Message, want) {
		t.Fatalf("reply %+v (%v); want Failed saying %q", r.Node, err, want)
	}
}

// A request about a workflow not followed yet starts following it and
// asks for passes over its nodes.
func TestExecuteFollowsTheWorkflowItNames(t *testing.T) {
	f := &follower{}
	r, err := New(f, discard).Execute(context.Background(), askAbout("u1"))
	if err != nil || r.Node == nil || r.Node.Phase != "" || r.Requeue == nil {
		t.Fatalf("reply %+v (%v); want the acknowledgement", r, err)
	}
	if !slices.Equal(f.flows, []string{"u1"}) || !slices.Equal(f.passesAsked, []string{"u1"}) {
		t.Fatalf("served %v, passes asked %v; want u1 both", f.flows, f.passesAsked)
	}
}

// Once pinned to its own agent pod's workflow, the sidecar follows no
// other a request names, and says why; its own is still acknowledged.
func TestPinnedFollowsNoOtherWorkflow(t *testing.T) {
	f := &follower{}
	a := New(f, discard)
	a.Pin(spark.WorkflowRef{Name: "wf-own", Namespace: "ns", UID: "own"})
	r, err := a.Execute(context.Background(), askAbout("other"))
	failed(t, r, err, "its own agent pod (uid own), not ns/wf-other (uid other)")
	if !slices.Equal(f.flows, []string{"own"}) || len(f.passesAsked) != 0 {
		t.Fatalf("served %v, passes asked %v; want only own served, no pass asked", f.flows, f.passesAsked)
	}
	if r, err := a.Execute(context.Background(), askAbout("own")); err != nil || r.Node == nil || r.Node.Phase != "" {
		t.Fatalf("its own workflow: %+v (%v); want the acknowledgement", r.Node, err)
	}
}

// Requests start following at most MaxFlows workflows; one followed
// already is still acknowledged.
func TestRequestsFollowAtMostMaxFlows(t *testing.T) {
	f := &follower{}
	a := New(f, discard)
	for i := range MaxFlows {
		if r, err := a.Execute(context.Background(), askAbout(fmt.Sprint(i))); err != nil || r.Node == nil || r.Node.Phase != "" {
			t.Fatalf("workflow %d: %+v (%v); want the acknowledgement", i, r.Node, err)
		}
	}
	r, err := a.Execute(context.Background(), askAbout("one-more"))
	failed(t, r, err, fmt.Sprintf("follows %d workflows already", MaxFlows))
	if f.Following("one-more") {
		t.Fatal("followed beyond MaxFlows")
	}
	if r, err := a.Execute(context.Background(), askAbout("0")); err != nil || r.Node == nil || r.Node.Phase != "" {
		t.Fatalf("a workflow followed already: %+v (%v); want the acknowledgement", r.Node, err)
	}
}

// Requests that arrive together cannot all pass the bound: twice
// MaxFlows requests about as many workflows, at once, start following
// exactly MaxFlows.
func TestRequestsTogetherFollowAtMostMaxFlows(t *testing.T) {
	f := &follower{serveTime: time.Millisecond}
	a := New(f, discard)
	var wg sync.WaitGroup
	for i := range 2 * MaxFlows {
		wg.Go(func() { _, _ = a.Execute(context.Background(), askAbout(fmt.Sprint(i))) })
	}
	wg.Wait()
	if n := f.Flows(); n != MaxFlows {
		t.Fatalf("following %d workflows, want %d", n, MaxFlows)
	}
}

// A denied permission fails the node with the core's message, redacted,
// and queues nothing.
func TestExecuteFailsWithTheDeniedPermission(t *testing.T) {
	f := &follower{denied: "may not patch workflowtasksets/status --db-password=leak01"}
	r, err := New(f, discard).Execute(context.Background(), askAbout("u1"))
	failed(t, r, err, "workflowtasksets/status")
	if strings.Contains(r.Node.Message, "leak01") || len(f.passesAsked) != 0 {
		t.Fatalf("message %q, passes asked %v; want it redacted and no pass asked", r.Node.Message, f.passesAsked)
	}
}
