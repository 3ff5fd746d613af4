//go:build integration

package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkplug-io/sparkplug/plugin/sidecar"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

func TestSparkPiLifecycle(t *testing.T) {
	t.Parallel()
	// The progress interval off: a running node's result then changes
	// only with its driver (the steady state below). The search for
	// leftovers of other workflows, a pod list once a minute by design,
	// is no pass over a node: out of the way.
	e := newEnv(t, "lifecycle", func(o *sidecar.Config) {
		o.Core.ProgressInterval = 0
		o.LeftoverInterval = time.Hour
	})
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"spark-pi-1234": tmpl})

	// Given a SparkPi request, exactly one driver, ConfigMap and Service.
	r := e.execute(tmpl)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending {
		t.Fatalf("first result: %s; want Pending", describe(r))
	}
	drivers := e.drivers()
	if len(drivers) != 1 {
		t.Fatalf("%d driver pods, want 1", len(drivers))
	}
	d := drivers[0]
	checkDriver(t, e, d)
	if param(r, "driver-pod") != d.Name || param(r, "application-id") != d.Labels[spark.LabelAppSelector] {
		t.Fatalf("outputs %s do not name driver %s", describe(r), d.Name)
	}
	cms, _ := testCluster.Client.CoreV1().ConfigMaps(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: spark.LabelWorkflowUID})
	svcs, _ := testCluster.Client.CoreV1().Services(e.ns).List(context.Background(), metav1.ListOptions{LabelSelector: spark.LabelWorkflowUID})
	if len(cms.Items) != 1 || len(svcs.Items) != 1 {
		t.Fatalf("%d configmaps and %d services, want 1 and 1", len(cms.Items), len(svcs.Items))
	}
	for _, obj := range []metav1.Object{&cms.Items[0], &svcs.Items[0]} {
		refs := obj.GetOwnerReferences()
		if len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].UID != d.UID {
			t.Fatalf("%s owners %+v, want the driver pod %s", obj.GetName(), refs, d.UID)
		}
	}
	if !strings.Contains(cms.Items[0].Data[spark.PropertiesFile], "spark.kubernetes.driver.pod.name="+d.Name) {
		t.Fatalf("spark.properties does not name the driver pod:\n%s", cms.Items[0].Data[spark.PropertiesFile])
	}

	// Posting again creates nothing.
	for i := 0; i < 3; i++ {
		e.execute(tmpl)
	}
	if n := len(e.drivers()); n != 1 {
		t.Fatalf("after repeated calls: %d driver pods, want 1", n)
	}

	// Running.
	e.setDriverStatus(d.Name, running(true))
	r = e.eventually(tmpl, "Running", func(r executor.ExecuteTemplateReply) bool {
		return r.Node.Phase == wfv1.NodeRunning
	})
	if !strings.HasPrefix(r.Node.Message, "RUNNING") || param(r, "driver-pod") != d.Name {
		t.Fatalf("running result %s", describe(r))
	}

	// Steady state: while nothing changes, the node's passes (one per
	// resync, and one per request of the agent) read the cache and make no
	// API request: the writer writes nothing, as the entry already shows
	// the result, and the driver's companions are known to exist.
	time.Sleep(500 * time.Millisecond)
	rv := e.taskSet().ResourceVersion
	before := e.requests.Load()
	for i := 0; i < 10; i++ {
		if r := e.ask(tmpl); !isAck(r) {
			t.Fatalf("request %d: %s, want the acknowledgement", i, describe(r))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := e.requests.Load() - before; n != 0 {
		t.Fatalf("2s of a running node's passes made %d API requests, want 0", n)
	}
	if ts := e.taskSet(); ts.ResourceVersion != rv {
		res := ts.Status.Nodes["spark-pi-1234"]
		t.Fatalf("the TaskSet was written while nothing changed (resourceVersion %s, then %s): %s", rv, ts.ResourceVersion, describe(executor.ExecuteTemplateReply{Node: &res}))
	}

	// The server's own metrics count the calls and the one launch.
	resp, err := http.Get(e.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metricsText, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`sparkplug_driver_actions_total{action="launched",reason=""} 1`, `sparkplug_template_execute_requests_total{code="200",phase=""}`,
		`sparkplug_node_results_written_total{phase="Pending"}`, `sparkplug_node_results_written_total{phase="Running"} 1`} {
		if !strings.Contains(string(metricsText), want) {
			t.Fatalf("/metrics lacks %s", want)
		}
	}

	// Completed.
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	r = e.eventually(tmpl, "Succeeded", func(r executor.ExecuteTemplateReply) bool {
		return r.Node.Phase == wfv1.NodeSucceeded
	})
	if r.Node.Outputs == nil || r.Node.Outputs.Result == nil || *r.Node.Outputs.Result != d.Labels[spark.LabelAppSelector] {
		t.Fatalf("result is not the application id: %s", describe(r))
	}

	// Each state change is a Kubernetes Event on the Workflow.
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := testCluster.Client.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Workflow,involvedObject.name=" + e.wf.Name})
		if err != nil {
			return false, err
		}
		reasons := map[string]bool{}
		for _, ev := range evs.Items {
			reasons[ev.Reason] = true
		}
		return reasons["SparkSubmitted"] && reasons["SparkRunning"] && reasons["SparkCompleted"], nil
	})
	if err != nil {
		t.Fatalf("no SparkSubmitted, SparkRunning and SparkCompleted Events on the Workflow: %v", err)
	}

	// Deleting the Workflow collects the driver and, through it, its
	// ConfigMap and Service.
	if err := e.wfc.ArgoprojV1alpha1().Workflows(e.ns).Delete(context.Background(), e.wf.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, _ := testCluster.Client.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
		cms, _ := testCluster.Client.CoreV1().ConfigMaps(e.ns).List(ctx, metav1.ListOptions{LabelSelector: spark.LabelWorkflowUID})
		svcs, _ := testCluster.Client.CoreV1().Services(e.ns).List(ctx, metav1.ListOptions{LabelSelector: spark.LabelWorkflowUID})
		return len(pods.Items)+len(cms.Items)+len(svcs.Items) == 0, nil
	})
	if err != nil {
		t.Fatal("driver, ConfigMap and Service were not garbage-collected after the Workflow was deleted")
	}
}

func checkDriver(t *testing.T, e *env, d corev1.Pod) {
	t.Helper()
	for k := range d.Labels {
		if strings.HasPrefix(k, "workflows.argoproj.io/") {
			t.Fatalf("driver carries Argo's label %s", k)
		}
	}
	want := map[string]string{
		spark.LabelRole:        spark.RoleDriver,
		spark.LabelWorkflowUID: string(e.wf.UID),
		spark.LabelAttempt:     "1",
		spark.LabelVersion:     "3.5.3",
	}
	for k, v := range want {
		if d.Labels[k] != v {
			t.Fatalf("driver label %s=%q, want %q (labels %v)", k, d.Labels[k], v, d.Labels)
		}
	}
	if !strings.HasPrefix(d.Labels[spark.LabelAppSelector], "spark-") || d.Labels[spark.LabelAppName] == "" {
		t.Fatalf("driver lacks Spark's app labels: %v", d.Labels)
	}
	if inc := e.incarnation(); d.Annotations[spark.AnnotationIncarnation] != inc || d.Name != e.names(d.Annotations[spark.AnnotationNodeID], 1).DriverPod {
		t.Fatalf("driver %s annotations %v: want the incarnation %s, and the name of its node's run in it", d.Name, d.Annotations, inc)
	}
	refs := d.OwnerReferences
	if len(refs) != 1 || refs[0].Kind != "Workflow" || refs[0].UID != e.wf.UID {
		t.Fatalf("driver owners %+v, want the Workflow", refs)
	}
	c := d.Spec.Containers[0]
	if c.Name != spark.DriverContainerName || c.Image != "spark:3.5.3" {
		t.Fatalf("driver container %s image %s", c.Name, c.Image)
	}
	args := strings.Join(c.Args, " ")
	if !strings.HasPrefix(args, "driver --properties-file /opt/spark/conf/spark.properties --class org.apache.spark.examples.SparkPi") || !strings.HasSuffix(args, " 1000") {
		t.Fatalf("driver args %q", args)
	}
	if d.Spec.ServiceAccountName != "spark" {
		t.Fatalf("service account %q", d.Spec.ServiceAccountName)
	}
}

func TestFailedDriverReportsExitCodeAndException(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "failure")
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"spark-pi-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, terminated(corev1.PodFailed, 1, "Error",
		"24/01/01 INFO SparkContext: Running Spark\nException in thread \"main\" java.lang.IllegalArgumentException: bad input\n\tat org.apache.spark.examples.SparkPi$.main(SparkPi.scala:10)\n"))
	r := e.eventually(tmpl, "Failed", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeFailed })
	for _, want := range []string{"FAILED", "exited 1", "Error", "java.lang.IllegalArgumentException: bad input"} {
		if !strings.Contains(r.Node.Message, want) {
			t.Fatalf("message %q lacks %q", r.Node.Message, want)
		}
	}
	if param(r, "driver-pod") != d.Name {
		t.Fatalf("a failed node still reports its outputs: %s", describe(r))
	}
}

func TestBadRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "requests")
	good, _ := json.Marshal(executor.ExecuteTemplateArgs{
		Workflow: &executor.Workflow{ObjectMeta: executor.ObjectMeta{Name: e.wf.Name, Namespace: e.ns, UID: string(e.wf.UID)}},
		Template: template(t, "spark-pi", sparkPi),
	})
	if r := e.post("wrong", good); r.status != http.StatusForbidden {
		t.Fatalf("wrong token: status %d, want 403", r.status)
	}
	if r := e.post("", good); r.status != http.StatusForbidden {
		t.Fatalf("no token: status %d, want 403", r.status)
	}
	if r := e.post(pluginToken, []byte("{garbage")); r.status != http.StatusBadRequest || !strings.Contains(r.body, "error") {
		t.Fatalf("garbage: status %d body %s, want 400 with a message", r.status, r.body)
	}
	foreign := &wfv1.Template{Name: "other", Plugin: &wfv1.Plugin{}}
	foreign.Plugin.Value = json.RawMessage(`{"slack":{"channel":"#data"}}`)
	if r := e.ask(foreign); r.Node != nil || r.Requeue != nil {
		t.Fatalf("foreign template: %s, want {}", describe(r))
	}
	// An invalid body is acknowledged like any spark template; its node's
	// entry says what is wrong.
	bad := template(t, "bad", strings.Replace(sparkPi, "memory: 512m\n  serviceAccount", "memory: 12zz\n  serviceAccount", 1))
	e.setTasks(map[string]*wfv1.Template{"node-bad": bad})
	r := e.execute(bad)
	if r.Node == nil || r.Node.Phase != wfv1.NodeFailed || !strings.Contains(r.Node.Message, "spark.driver.memory") || !strings.Contains(r.Node.Message, "12zz") {
		t.Fatalf("invalid memory: %s; want Failed naming spark.driver.memory", describe(r))
	}
	if n := len(e.drivers()); n != 0 {
		t.Fatalf("bad requests created %d drivers", n)
	}
}
