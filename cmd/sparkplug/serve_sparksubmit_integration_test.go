//go:build integration

package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/sidecar"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/submit/submittest"
)

// withSparkSubmit gives the plugin a fake Spark distribution
// (plugin/submit/submittest): its spark-submit records each call in
// record and does what c says; with c.Create, it creates the driver pod
// through the kubeconfig sparkplug hands it, as spark-submit would.
func withSparkSubmit(t *testing.T, c submittest.Config) (configure func(*sidecar.Config), record string) {
	t.Helper()
	c.Record = filepath.Join(t.TempDir(), "calls.jsonl")
	home := submittest.SparkHome(t, c)
	return func(o *sidecar.Config) {
		o.Core.Submit.SparkHome = home
		o.Core.Submit.RequestTimeout = 20 * time.Second
	}, c.Record
}

const sparkPiSubmit = sparkPi + "sparkplug:\n  launcher: spark-submit\n"

// A body with launcher spark-submit runs spark-submit once: the driver it
// creates carries sparkplug's labels, annotations and, patched on after,
// the Workflow as owner; sparkplug's own ConfigMap and Services follow
// the application id spark-submit chose, and the node follows the driver
// to Succeeded as a native one.
func TestSparkSubmitLauncherLifecycle(t *testing.T) {
	t.Parallel()
	configure, record := withSparkSubmit(t, submittest.Config{Create: true})
	e := newEnv(t, "spark-submit", configure)
	tmpl := template(t, "spark-pi", sparkPiSubmit)
	e.setTasks(map[string]*wfv1.Template{"spark-pi-1234": tmpl})

	r := e.execute(tmpl)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending || !strings.HasPrefix(r.Node.Message, "SUBMITTED") {
		t.Fatalf("first result: %s; want Pending SUBMITTED", describe(r))
	}
	calls := submittest.Calls(t, record)
	if len(calls) != 1 {
		t.Fatalf("%d spark-submit runs, want 1", len(calls))
	}
	d := e.onlyDriver()
	if param(r, "driver-pod") != d.Name || param(r, "application-id") != d.Labels[spark.LabelAppSelector] {
		t.Fatalf("outputs %s do not name driver %s (%s)", describe(r), d.Name, d.Labels[spark.LabelAppSelector])
	}
	native := e.names("spark-pi-1234", 1)
	if d.Name != native.DriverPod {
		t.Fatalf("driver %s, want the native launcher's name %s", d.Name, native.DriverPod)
	}
	if d.Labels[spark.LabelAppSelector] == native.AppID {
		t.Fatal("the driver has the native application id; spark-submit makes its own")
	}
	for k, v := range map[string]string{
		spark.LabelRole: spark.RoleDriver, spark.LabelWorkflowUID: string(e.wf.UID), spark.LabelAttempt: "1",
		spark.LabelNode: objects.NodeLabel("spark-pi-1234"), spark.LabelManagedBy: spark.ManagedByValue,
	} {
		if d.Labels[k] != v {
			t.Fatalf("driver label %s=%q, want %q (labels %v)", k, d.Labels[k], v, d.Labels)
		}
	}
	if d.Annotations[spark.AnnotationNodeID] != "spark-pi-1234" || d.Annotations[spark.AnnotationWorkflowName] != e.wf.Name ||
		d.Annotations[spark.AnnotationIncarnation] != e.incarnation() {
		t.Fatalf("driver annotations %v", d.Annotations)
	}
	if refs := d.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Workflow" || refs[0].UID != e.wf.UID || refs[0].Controller == nil || !*refs[0].Controller {
		t.Fatalf("driver owners %+v, want the Workflow as controller", refs)
	}
	if c := d.Spec.Containers[0]; c.Name != spark.DriverContainerName || c.Image != "spark:3.5.3" || d.Spec.ServiceAccountName != "spark" {
		t.Fatalf("driver container %s image %s service account %s", c.Name, c.Image, d.Spec.ServiceAccountName)
	}

	// What spark-submit was given.
	call := calls[0]
	if call.Args[0] != "--master" || call.Args[1] != "k8s://"+testCluster.Config.Host || call.Args[2] != "--deploy-mode" || call.Args[3] != "cluster" {
		t.Fatalf("argv starts %q, want --master k8s://%s --deploy-mode cluster", call.Args[:4], testCluster.Config.Host)
	}
	if v, _ := call.Conf(spark.ConfDriverPodName); v != d.Name {
		t.Fatalf("--conf %s=%q, want %s", spark.ConfDriverPodName, v, d.Name)
	}
	if _, ok := call.Conf(spark.ConfDriverHost); ok {
		t.Fatalf("--conf %s passed; spark-submit refuses it", spark.ConfDriverHost)
	}
	if v, _ := call.Conf("spark.kubernetes.submission.requestTimeout"); v != "20000" {
		t.Fatalf("request timeout %q, want 20000", v)
	}
	if got := strings.Join(call.Args[len(call.Args)-2:], " "); got != "local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar 1000" {
		t.Fatalf("argv ends %q", got)
	}
	env := map[string]string{}
	for _, kv := range call.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if env["KUBERNETES_REQUEST_TIMEOUT"] != "20000" || env["KUBECONFIG"] == "" || env["SPARK_HOME"] == "" ||
		env["TMPDIR"] == "" || env["SPARK_SUBMIT_OPTS"] != "-Djava.io.tmpdir="+env["TMPDIR"] || len(env) != 6 {
		t.Fatalf("spark-submit's environment %v; want PATH, SPARK_HOME, KUBECONFIG, KUBERNETES_REQUEST_TIMEOUT, TMPDIR and SPARK_SUBMIT_OPTS only", env)
	}

	// sparkplug's Service, owned by the driver, selecting its application
	// id. No ConfigMap of sparkplug's: the driver mounts spark-submit's
	// own conf, and this one has no metrics files.
	svc, err := testCluster.Client.CoreV1().Services(e.ns).Get(context.Background(), native.Service, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if refs := svc.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != d.UID {
		t.Fatalf("%s owners %+v, want the driver", svc.Name, refs)
	}
	cms, err := testCluster.Client.CoreV1().ConfigMaps(e.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var runs, submits []string
	for _, cm := range cms.Items {
		switch {
		case strings.HasPrefix(cm.Name, native.LegacyConfigMap()):
			runs = append(runs, cm.Name)
		case strings.HasPrefix(cm.Name, "spark-drv-"):
			submits = append(submits, cm.Name)
		}
	}
	if mounted := objects.ConfigMapOf(&d); mounted != "" || len(runs) > 0 || len(submits) == 0 {
		t.Fatalf("the run's ConfigMaps %v (the driver mounts %q of them), spark-submit's %v; want spark-submit's alone", runs, mounted, submits)
	}
	if svc.Spec.Selector[spark.LabelAppSelector] != d.Labels[spark.LabelAppSelector] {
		t.Fatalf("service selector %v, want the driver's application id %s", svc.Spec.Selector, d.Labels[spark.LabelAppSelector])
	}

	// Repeated calls run spark-submit no more.
	for i := 0; i < 3; i++ {
		e.execute(tmpl)
	}
	if n := len(submittest.Calls(t, record)); n != 1 {
		t.Fatalf("after repeated calls: %d spark-submit runs, want 1", n)
	}
	if n := len(e.drivers()); n != 1 {
		t.Fatalf("after repeated calls: %d drivers, want 1", n)
	}

	e.setDriverStatus(d.Name, running(true))
	e.eventually(tmpl, "Running", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeRunning })
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	r = e.eventually(tmpl, "Succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	if r.Node.Outputs == nil || r.Node.Outputs.Result == nil || *r.Node.Outputs.Result != d.Labels[spark.LabelAppSelector] {
		t.Fatalf("result is not the driver's application id: %s", describe(r))
	}
	if n := len(submittest.Calls(t, record)); n != 1 {
		t.Fatalf("%d spark-submit runs in all, want 1", n)
	}
}

// The plugin-wide --launcher spark-submit applies to bodies that name no
// launcher; a body's launcher native still launches natively.
func TestSparkSubmitLauncherAsThePluginDefault(t *testing.T) {
	t.Parallel()
	configure, record := withSparkSubmit(t, submittest.Config{Create: true})
	e := newEnv(t, "spark-submit-default", configure, func(o *sidecar.Config) { o.Core.Launcher = "spark-submit" })
	tmpl := template(t, "spark-pi", sparkPi)
	nativeTmpl := template(t, "spark-pi-native", sparkPi+"sparkplug:\n  launcher: native\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl, "node-2": nativeTmpl})
	e.execute(tmpl)
	e.execute(nativeTmpl)
	if n := len(submittest.Calls(t, record)); n != 1 {
		t.Fatalf("%d spark-submit runs, want 1 (node-1's)", n)
	}
	if n := len(e.drivers()); n != 2 {
		t.Fatalf("%d drivers, want 2", n)
	}
}

// A spark-submit that fails fails the node with its exit code and the
// exception it printed, as a submission failure; no driver is left.
func TestSparkSubmitFailureFailsTheNode(t *testing.T) {
	t.Parallel()
	configure, record := withSparkSubmit(t, submittest.Config{ExitCode: 1, Stderr: "25/01/31 12:00:00 INFO SparkKubernetesClientFactory: Auto-configuring K8S client using current context from users K8S config file\n" +
		"Exception in thread \"main\" org.apache.spark.SparkException: Please specify spark.kubernetes.file.upload.path property.\n" +
		"\tat org.apache.spark.deploy.k8s.KubernetesUtils$.uploadFileUri(KubernetesUtils.scala:330)\n" +
		"\tat org.apache.spark.deploy.SparkSubmit.main(SparkSubmit.scala)\n"})
	e := newEnv(t, "spark-submit-failure", configure)
	tmpl := template(t, "spark-pi", sparkPiSubmit)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	r := e.execute(tmpl)
	want := "SUBMISSION_FAILED: spark-submit exited 1: Exception in thread \"main\" org.apache.spark.SparkException: Please specify spark.kubernetes.file.upload.path property."
	if r.Node == nil || r.Node.Phase != wfv1.NodeFailed || r.Node.Message != want {
		t.Fatalf("result %s; want Failed %q", describe(r), want)
	}
	if n := len(e.drivers()); n != 0 {
		t.Fatalf("%d drivers, want none", n)
	}
	if n := len(submittest.Calls(t, record)); n != 1 {
		t.Fatalf("%d spark-submit runs, want 1", n)
	}
}

// A spark-submit slower than a request goes on in the background: the
// node is Pending "spark-submit running" meanwhile, the polls start no
// second spark-submit, and the driver it creates is followed as any.
func TestSparkSubmitSlowerThanARequest(t *testing.T) {
	t.Parallel()
	configure, record := withSparkSubmit(t, submittest.Config{Create: true, Sleep: "2s"})
	e := newEnv(t, "spark-submit-slow", configure, func(o *sidecar.Config) { o.Core.SubmitWait = 200 * time.Millisecond })
	tmpl := template(t, "spark-pi", sparkPiSubmit)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	r := e.execute(tmpl)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending || r.Node.Message != "SUBMITTED: spark-submit running" {
		t.Fatalf("first result %s; want Pending, spark-submit running", describe(r))
	}
	r = e.eventually(tmpl, "the driver", func(r executor.ExecuteTemplateReply) bool { return param(r, "driver-pod") != "" })
	d := e.onlyDriver()
	if param(r, "driver-pod") != d.Name || r.Node.Phase != wfv1.NodePending {
		t.Fatalf("result %s; want driver %s, Pending", describe(r), d.Name)
	}
	if n := len(submittest.Calls(t, record)); n != 1 {
		t.Fatalf("%d spark-submit runs, want 1", n)
	}
	if refs := d.OwnerReferences; len(refs) != 1 || refs[0].UID != e.wf.UID {
		t.Fatalf("driver owners %+v, want the Workflow", refs)
	}
}
