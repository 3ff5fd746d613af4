//go:build integration

// Node identity, by the rules of the node-identity design: sparkplug
// reconciles every Spark node the WorkflowTaskSet lists, by node id, one
// run per (workflow, node, incarnation), and writes each node's result
// into the TaskSet's status.nodes[<node id>] itself; the reply to the
// agent is only an acknowledgement.

package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/step"
	"github.com/sparkplug-io/sparkplug/templates"
)

// notFoundGrace is the env's Core.NotFoundGrace (newEnv).
const notFoundGrace = 3 * time.Second

// driverOfNode is the one driver pod whose node-id annotation is node.
func (e *env) driverOfNode(node string) corev1.Pod {
	e.t.Helper()
	var found []corev1.Pod
	for _, d := range e.drivers() {
		if d.Annotations[spark.AnnotationNodeID] == node {
			found = append(found, d)
		}
	}
	if len(found) != 1 {
		e.t.Fatalf("%d drivers of node %s, want 1", len(found), node)
	}
	return found[0]
}

// namesDriver: a result names driver d, by its driver-pod and
// application-id outputs.
func namesDriver(r executor.ExecuteTemplateReply, d corev1.Pod) bool {
	return param(r, "driver-pod") == d.Name && param(r, "application-id") == d.Labels[spark.LabelAppSelector]
}

// Twins (two node ids with byte-identical templates, as loop items with
// equal values give) are two runs: one request about the template, and
// each node gets its own driver and its own application, its entry names
// them, and a driver's end ends its own node only.
func TestIdenticalTwinsGetTheirOwnDrivers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "identical")
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"wf-a": tmpl, "wf-b": tmpl})
	if r := e.ask(tmpl); !isAck(r) {
		t.Fatalf("reply %s, want the acknowledgement", describe(r))
	}
	hasDriver := func(r executor.ExecuteTemplateReply) bool { return param(r, "driver-pod") != "" }
	ra := e.eventuallyNode("wf-a", "wf-a's driver", hasDriver)
	rb := e.eventuallyNode("wf-b", "wf-b's driver", hasDriver)
	if n := len(e.drivers()); n != 2 {
		t.Fatalf("%d drivers for two identical tasks, want 2", n)
	}
	da, db := e.driverOfNode("wf-a"), e.driverOfNode("wf-b")
	if !namesDriver(ra, da) || !namesDriver(rb, db) {
		t.Fatalf("wf-a's result %s, wf-b's %s; want each to name its own driver (%s, %s) and application", describe(ra), describe(rb), da.Name, db.Name)
	}
	if da.Labels[spark.LabelAppSelector] == db.Labels[spark.LabelAppSelector] {
		t.Fatalf("both drivers run application %s", da.Labels[spark.LabelAppSelector])
	}

	// wf-a's driver ends; wf-b's runs on.
	e.setDriverStatus(db.Name, running(true))
	e.eventuallyNode("wf-b", "wf-b running", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeRunning })
	e.setDriverStatus(da.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	ra = e.eventuallyNode("wf-a", "wf-a succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	if !namesDriver(ra, da) {
		t.Fatalf("wf-a succeeded with %s, want its own driver %s", describe(ra), da.Name)
	}
	time.Sleep(time.Second) // several passes
	if rb, _ := e.entry("wf-b"); rb.Phase != wfv1.NodeRunning || !namesDriver(executor.ExecuteTemplateReply{Node: &rb}, db) {
		t.Fatalf("after wf-a's driver ended, wf-b's result %s; want it still running on %s", describe(executor.ExecuteTemplateReply{Node: &rb}), db.Name)
	}

	e.setDriverStatus(db.Name, terminated(corev1.PodFailed, 1, "Error", "boom"))
	rb = e.eventuallyNode("wf-b", "wf-b failed", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeFailed })
	if !namesDriver(rb, db) {
		t.Fatalf("wf-b failed with %s, want its own driver %s", describe(rb), db.Name)
	}
	if ra, _ := e.entry("wf-a"); ra.Phase != wfv1.NodeSucceeded || !namesDriver(executor.ExecuteTemplateReply{Node: &ra}, da) {
		t.Fatalf("wf-a's result became %s", describe(executor.ExecuteTemplateReply{Node: &ra}))
	}
	if n := len(e.drivers()); n != 2 {
		t.Fatalf("%d drivers at the end, want 2", n)
	}
}

// A restarted plugin (a new process, which learns the workflow from a
// request) rebuilds everything from the TaskSet, the Workflow and the
// runs: it continues with the driver there is, launches no second one,
// and follows it to the end.
func TestRestartedPluginContinuesWithTheSameDriver(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "restart")
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	e.stop()

	again := e.at(startAnotherServer(t, e))
	if r := again.ask(tmpl); !isAck(r) {
		t.Fatalf("reply %s, want the acknowledgement", describe(r))
	}
	e.setDriverStatus(d.Name, running(true))
	r := again.eventuallyNode("node-1", "Running", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeRunning })
	if !namesDriver(r, d) {
		t.Fatalf("the restarted plugin reports %s, want driver %s", describe(r), d.Name)
	}
	if n := len(e.drivers()); n != 1 {
		t.Fatalf("after a restart: %d drivers, want 1", n)
	}
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	r = again.eventuallyNode("node-1", "Succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	if !namesDriver(r, d) {
		t.Fatalf("the restarted plugin reports %s, want driver %s", describe(r), d.Name)
	}
	if n := len(e.drivers()); n != 1 {
		t.Fatalf("at the end: %d drivers, want 1", n)
	}
}

// A driver deleted by someone else, which its node's entry names, fails
// the node "not found" once NotFoundGrace has passed; the node never
// silently starts over.
func TestDriverDeletedBySomeoneElseFailsNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "deleted")
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	e.eventuallyNode("node-1", "the entry names the driver", func(r executor.ExecuteTemplateReply) bool { return namesDriver(r, d) })
	deleted := time.Now()
	if err := testCluster.Client.CoreV1().Pods(e.ns).Delete(context.Background(), d.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	r := e.eventuallyNode("node-1", "Failed not found", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeFailed })
	if took := time.Since(deleted); took < notFoundGrace {
		t.Errorf("failed %s after the deletion, before NotFoundGrace (%s)", took.Round(time.Millisecond), notFoundGrace)
	}
	if !strings.Contains(r.Node.Message, "not found") || param(r, "driver-pod") != d.Name {
		t.Fatalf("result %s, want driver pod %s not found", describe(r), d.Name)
	}
	if n := len(e.drivers()); n != 0 {
		t.Fatalf("a deleted driver was silently recreated: %d drivers", n)
	}
}

// argo retry, as the controller does it: the failed node's entry is gone,
// the Workflow's status.startedAt is later and the node Pending again,
// under the same id. That is a new incarnation: a new driver (another
// name, annotated with the new startedAt), which the entry then names;
// the old one is left as it is.
func TestArgoRetryLaunchesANewIncarnation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "retry")
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	old := e.onlyDriver()
	first := e.incarnation()
	if old.Annotations[spark.AnnotationIncarnation] != first {
		t.Fatalf("driver annotations %v, want incarnation %s", old.Annotations, first)
	}
	e.setDriverStatus(old.Name, terminated(corev1.PodFailed, 1, "Error", "boom"))
	e.eventuallyNode("node-1", "Failed", func(r executor.ExecuteTemplateReply) bool {
		return r.Node.Phase == wfv1.NodeFailed && namesDriver(r, old)
	})

	// argo retry, which comes once the workflow has failed, well after the
	// final write: the writer has seen the entry final by then, and wants
	// nothing more for the node.
	time.Sleep(1500 * time.Millisecond)
	e.removeEntry("node-1")
	e.updateWorkflow(func(wf *wfv1.Workflow) {
		later := time.Now().Truncate(time.Second)
		if !later.After(wf.Status.StartedAt.Time) {
			later = wf.Status.StartedAt.Add(time.Second)
		}
		wf.Status.StartedAt = metav1.NewTime(later)
		wf.Status.Phase = wfv1.WorkflowRunning
		n := wf.Status.Nodes["node-1"]
		n.Phase, n.Message, n.Outputs, n.FinishedAt = wfv1.NodePending, "", nil, metav1.Time{}
		wf.Status.Nodes["node-1"] = n
	})
	second := e.incarnation()
	if second == first {
		t.Fatalf("startedAt %s was not moved", first)
	}
	r := e.eventuallyNode("node-1", "a new driver", func(r executor.ExecuteTemplateReply) bool {
		return param(r, "driver-pod") != "" && param(r, "driver-pod") != old.Name
	})
	if r.Node.Phase.Completed() {
		t.Fatalf("result %s, want the new run's", describe(r))
	}
	drivers := e.drivers()
	if len(drivers) != 2 {
		t.Fatalf("%d drivers after the retry, want the old and a new one", len(drivers))
	}
	var fresh corev1.Pod
	for _, d := range drivers {
		if d.Name != old.Name {
			fresh = d
		}
	}
	if want := e.names("node-1", 1).DriverPod; fresh.Name != want || fresh.Annotations[spark.AnnotationIncarnation] != second {
		t.Fatalf("new driver %s annotations %v; want %s, incarnation %s", fresh.Name, fresh.Annotations, want, second)
	}
	if !namesDriver(r, fresh) {
		t.Fatalf("result %s, want it to name the new driver %s", describe(r), fresh.Name)
	}
	// The old driver is left alone: not deleted, its status and
	// annotations as they were.
	now, err := testCluster.Client.CoreV1().Pods(e.ns).Get(context.Background(), old.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the old driver: %v", err)
	}
	if now.DeletionTimestamp != nil || now.Status.Phase != corev1.PodFailed || now.Annotations[spark.AnnotationIncarnation] != first {
		t.Fatalf("the old driver was touched: deletion %v, phase %s, annotations %v", now.DeletionTimestamp, now.Status.Phase, now.Annotations)
	}

	e.setDriverStatus(fresh.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	r = e.eventuallyNode("node-1", "Succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	if !namesDriver(r, fresh) {
		t.Fatalf("result %s, want the new driver %s", describe(r), fresh.Name)
	}
}

// A driver that an older sparkplug launched (no incarnation annotation,
// the names of that version) after its node started, and that the node's
// entry names as that sparkplug wrote it, counts as the current
// incarnation's: after an upgrade, its node goes on with it, its uid is
// recorded, and no second driver is made. (One made before its node
// started is no run: TestForgery, and e2e
// TestForgersWithADriversRightsNeverDecideANode.)
func TestUpgradeAdoptsTheDriverOfAnOlderSparkplug(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "upgrade")
	ctx := context.Background()
	tmpl := template(t, "spark-pi", sparkPi)
	e.start()

	// The objects an older sparkplug made, as render does: no incarnation.
	b, err := objects.New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	st, ok, err := step.Parse(tmpl, spec.PluginDefaults{Launcher: spec.LauncherNative})
	if !ok || err != nil {
		t.Fatalf("parse: %v", err)
	}
	objs, err := b.Build(st.Body, objects.Run{Workflow: e.ref(), NodeID: "node-1", TemplateKey: st.Key, Attempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := objs.Driver.Annotations[spark.AnnotationIncarnation]; ok {
		t.Fatalf("a driver built without an incarnation carries one: %v", objs.Driver.Annotations)
	}
	if refs := objs.Driver.OwnerReferences; len(refs) != 1 || refs[0].UID != e.wf.UID {
		t.Fatalf("driver owners %+v, want the Workflow", refs)
	}
	core := testCluster.Client.CoreV1()
	legacy, err := core.Pods(e.ns).Create(ctx, objs.Driver, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	objects.OwnedBy(objs, legacy)
	if _, err := core.ConfigMaps(e.ns).Create(ctx, objs.ConfigMap, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := core.Services(e.ns).Create(ctx, objs.Service, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	// The entry the older sparkplug wrote: its driver, no uid.
	e.recordResult("node-1", executor.ExecuteTemplateReply{Node: &wfv1.NodeResult{Phase: wfv1.NodePending,
		Message: "SUBMITTED: waiting for the driver pod to be scheduled", Outputs: &wfv1.Outputs{Parameters: []wfv1.Parameter{
			{Name: spark.OutputApplicationID, Value: wfv1.AnyStringPtr(legacy.Labels[spark.LabelAppSelector])},
			{Name: spark.OutputDriverPod, Value: wfv1.AnyStringPtr(legacy.Name)},
			{Name: spark.OutputAttempt, Value: wfv1.AnyStringPtr("1")},
		}}}})
	r := e.eventually(tmpl, "a driver recorded by uid", func(r executor.ExecuteTemplateReply) bool { return param(r, "driver-uid") != "" })
	if !namesDriver(r, *legacy) || param(r, "driver-uid") != string(legacy.UID) {
		t.Fatalf("result %s, want it to name the driver %s an older sparkplug launched, and record its uid", describe(r), legacy.Name)
	}
	e.setDriverStatus(legacy.Name, running(true))
	r = e.eventuallyNode("node-1", "Running", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeRunning })
	if !namesDriver(r, *legacy) {
		t.Fatalf("result %s, want driver %s", describe(r), legacy.Name)
	}
	if d := e.onlyDriver(); d.Name != legacy.Name {
		t.Fatalf("driver %s, want only %s", d.Name, legacy.Name)
	}
}

// A final entry someone else wrote (Argo, when the workflow is stopped)
// is never written over, and the node's live driver is deleted: nobody
// will read its result.
func TestAFinalEntryOfSomeoneElseStandsAndStopsTheDriver(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "foreign-final")
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, running(true))
	e.eventuallyNode("node-1", "Running", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeRunning })

	// A merge patch, as the agent's: the outputs it leaves out stay.
	stopped := wfv1.NodeResult{Phase: wfv1.NodeFailed, Message: "Stopped with strategy 'Stop'"}
	e.recordResult("node-1", executor.ExecuteTemplateReply{Node: &stopped})
	written, _ := e.entry("node-1")
	e.waitDeleted(d.Name, "its node's entry was made final by someone else")
	time.Sleep(2 * time.Second) // several passes, past the writer's gap
	got, ok := e.entry("node-1")
	if w, g := describe(executor.ExecuteTemplateReply{Node: &written}), describe(executor.ExecuteTemplateReply{Node: &got}); !ok ||
		got.Phase != stopped.Phase || got.Message != stopped.Message || g != w {
		t.Fatalf("entry %s, want the one written by someone else, as it was: %s", g, w)
	}
	for _, p := range e.drivers() {
		if p.DeletionTimestamp == nil {
			t.Fatalf("driver %s launched for a node someone else finished", p.Name)
		}
	}
}

// Once the Workflow completed, nothing is written, whatever happens to
// its drivers.
func TestNothingIsWrittenOnceTheWorkflowCompleted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "completed")
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, running(true))
	before := e.eventuallyNode("node-1", "Running", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeRunning })
	rv := e.taskSet().ResourceVersion

	e.updateWorkflow(func(wf *wfv1.Workflow) { wf.Status.Phase = wfv1.WorkflowFailed })
	// The driver ends (if the sweep of the ended workflow has not deleted
	// it yet) or is gone: either way the node's result would change.
	e.trySetDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	time.Sleep(notFoundGrace + 2*time.Second) // past a missing driver's grace too
	after, _ := e.entry("node-1")
	if after.Phase != before.Node.Phase || after.Message != before.Node.Message {
		t.Fatalf("entry %s after the workflow completed, want it as it was: %s", describe(executor.ExecuteTemplateReply{Node: &after}), describe(before))
	}
	if got := e.taskSet().ResourceVersion; got != rv {
		t.Fatalf("the TaskSet was written after the workflow completed (resourceVersion %s, then %s)", rv, got)
	}
}

// trySetDriverStatus sets a pod's status as setDriverStatus does, unless
// the pod is gone; it reports whether it did.
func (e *env) trySetDriverStatus(name string, status corev1.PodStatus) bool {
	e.t.Helper()
	if e.deleted(name) {
		return false
	}
	pods := testCluster.Client.CoreV1().Pods(e.ns)
	ctx := context.Background()
	for range 5 {
		pod, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false // gone meanwhile
		}
		pod.Status = status
		if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err == nil {
			return true
		}
	}
	return false
}

// An invalid body gets the acknowledgement too (never a 400, which the
// agent would turn into a transport failure); its node's entry is Failed
// with the validation message, which names the field. Its valid twin
// runs.
func TestAnInvalidBodyIsAcknowledgedAndItsNodeFailed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "invalid")
	good := template(t, "spark-pi", sparkPi)
	bad := template(t, "spark-pi-bad", sparkPi+"batchScheduler: slurm\n")
	e.setTasks(map[string]*wfv1.Template{"node-good": good, "node-bad": bad})
	r := e.execute(bad)
	want := `spark.batchScheduler: Unsupported value: "slurm": supported values: "kube-scheduler", "volcano", "yunikorn"`
	if r.Node.Phase != wfv1.NodeFailed || !strings.Contains(r.Node.Message, want) || r.Node.Outputs != nil {
		t.Fatalf("result %s; want Failed, without outputs, naming %s", describe(r), want)
	}
	e.eventually(good, "the valid node's driver", func(r executor.ExecuteTemplateReply) bool { return param(r, "driver-pod") != "" })
	if d := e.onlyDriver(); d.Annotations[spark.AnnotationNodeID] != "node-good" {
		t.Fatalf("driver %s of node %s, want node-good's only", d.Name, d.Annotations[spark.AnnotationNodeID])
	}
}

// A Role without patch on workflowtasksets/status (one from before
// sparkplug wrote results): every spark template's reply fails its node,
// naming the permission, rather than leaving it Pending forever; another
// plugin's template still gets {}.
func TestWithoutPermissionToWriteResultsEverySparkReplyFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "no-status-rbac")
	e.updateRole(func(role *rbacv1.Role) {
		role.Rules = slices.DeleteFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.Resources, "workflowtasksets/status")
		})
	})
	// The API server's authorizer learns the Role from its cache: wait
	// until it denies the plugin.
	cfg, err := clientcmd.BuildConfigFromFlags("", e.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	plugin := kubernetes.NewForConfigOrDie(cfg)
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		r, err := plugin.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: e.ns, Verb: "patch", Group: "argoproj.io", Resource: "workflowtasksets", Subresource: "status", Name: e.wf.Name}},
		}, metav1.CreateOptions{})
		return err == nil && !r.Status.Allowed, err
	})
	if err != nil {
		t.Fatalf("the plugin may still patch workflowtasksets/status: %v", err)
	}

	tmpl := template(t, "spark-pi", sparkPi)
	foreign := &wfv1.Template{Name: "other", Plugin: &wfv1.Plugin{}}
	foreign.Plugin.Value = json.RawMessage(`{"slack":{"channel":"#data"}}`)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl, "node-2": foreign})
	for i := range 2 {
		r := e.ask(tmpl)
		if r.Node == nil || r.Node.Phase != wfv1.NodeFailed || !strings.Contains(r.Node.Message, "workflowtasksets/status") {
			t.Fatalf("request %d: %s; want Failed naming workflowtasksets/status", i, describe(r))
		}
	}
	if r := e.ask(foreign); r.Node != nil || r.Requeue != nil {
		t.Fatalf("another plugin's template: %s, want {}", describe(r))
	}
}
