package execute

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/sparkplug-io/sparkplug/plugin/decide"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/render"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/step"
	"github.com/sparkplug-io/sparkplug/plugin/submit"
	"github.com/sparkplug-io/sparkplug/plugin/submit/submittest"
	"github.com/sparkplug-io/sparkplug/templates"
)

// These tests run the spark-submit launcher against a fake clientset and
// the fake spark-submit (plugin/submit/submittest), which cannot reach a
// fake clientset: where the driver must exist, the test creates it, as
// spark-submit would have, from sparkplug's pod template (its labels and
// annotations) but with an application id of its own and without the
// Workflow as owner. The launcher against a real API server is in
// cmd/sparkplug's integration tests.

type submitEnv struct {
	core   *Core
	args   executor.ExecuteTemplateArgs
	kube   *fake.Clientset
	home   string
	record string
}

func newSubmitEnv(t *testing.T, fc submittest.Config, extra string, opts func(*Options)) *submitEnv {
	t.Helper()
	return newSubmitEnvOf(t, fc, strings.Replace(body, "%s", `,"sparkplug":{"launcher":"spark-submit"}`+extra, 1), opts)
}

// newSubmitEnvOf is newSubmitEnv for the spark body sparkBody.
func newSubmitEnvOf(t *testing.T, fc submittest.Config, sparkBody string, opts func(*Options)) *submitEnv {
	t.Helper()
	record := filepath.Join(t.TempDir(), "calls.jsonl")
	fc.Record = record
	home := submittest.SparkHome(t, fc)
	tmpl := &wfv1.Template{Name: "pi", Plugin: &wfv1.Plugin{}}
	tmpl.Plugin.Value = json.RawMessage(`{"spark":` + sparkBody + `}`)
	ts := &wfv1.WorkflowTaskSet{
		ObjectMeta: metav1.ObjectMeta{Name: "wf", Namespace: "ns"},
		Spec:       wfv1.WorkflowTaskSetSpec{Tasks: map[string]wfv1.Template{"wf-1": *tmpl}},
	}
	kube := fake.NewClientset()
	clients := scope.Clients{Kube: kube, Workflows: wffake.NewSimpleClientset(ts)}
	o := Options{}
	o.Submit.SparkHome = home
	o.SubmitWait = 5 * time.Second
	if opts != nil {
		opts(&o)
	}
	core, args := startCoreWith(t, clients, tmpl, o)
	return &submitEnv{core: core, args: args, kube: kube, home: home, record: record}
}

// pass reconciles node wf-1 once and returns the result it offered.
func (e *submitEnv) pass(t *testing.T) executor.ExecuteTemplateReply {
	t.Helper()
	return runPass(t, e.core, e.args)
}

// submitted is the driver pod of node wf-1's first attempt in the
// workflow's current incarnation, as spark-submit creates it: from
// sparkplug's pod template, with an application id of its own, and not
// owned by the Workflow.
func (e *submitEnv) submitted(t *testing.T) *corev1.Pod {
	t.Helper()
	fl := e.core.flowOf("uid-1")
	tmpl := fl.scope.TaskSet().Spec.Tasks["wf-1"]
	st, ok, err := fl.step("wf-1", &tmpl, e.core.opts, func(st *step.Step) error { return e.core.admit(st, fl.scope.Workflow, "wf-1") })
	if !ok || err != nil {
		t.Fatalf("step of wf-1: %v %v", ok, err)
	}
	br := st.Run(fl.scope.Workflow, "wf-1", 1)
	br.Incarnation = e.incarnation()
	objs, err := e.core.builder.Build(st.Body, br)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: objs.Driver.Name, Namespace: "ns", UID: "pod-uid",
		Labels: objs.Driver.Labels, Annotations: objs.Driver.Annotations}}
	pod.Labels[spark.LabelAppSelector] = "spark-fromsubmit"
	return pod
}

// incarnation is the workflow's current incarnation: its startedAt.
func (e *submitEnv) incarnation() string {
	return e.core.flowOf("uid-1").scope.WorkflowObject().Status.StartedAt.UTC().Format(time.RFC3339)
}

// driverName is the name of node wf-1's first driver.
func (e *submitEnv) driverName(t *testing.T) string {
	t.Helper()
	return e.submitted(t).Name
}

// waitCached waits until the workflow's cache shows node wf-1's first
// driver.
func (e *submitEnv) waitCached(t *testing.T) {
	t.Helper()
	name := e.driverName(t)
	for deadline := time.Now().Add(5 * time.Second); e.core.flowOf("uid-1").scope.Pod(name) == nil; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("pod %s never cached", name)
		}
	}
}

// createDriver creates the driver as spark-submit would.
func (e *submitEnv) createDriver(t *testing.T) {
	t.Helper()
	if _, err := e.kube.CoreV1().Pods("ns").Create(context.Background(), e.submitted(t), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestSparkSubmitFailureIsASubmissionFailure(t *testing.T) {
	e := newSubmitEnv(t, submittest.Config{ExitCode: 1, Stderr: "25/01/31 12:00:00 INFO SparkKubernetesClientFactory: Auto-configuring K8S client\n" +
		"Exception in thread \"main\" io.fabric8.kubernetes.client.KubernetesClientException: Forbidden: exceeded quota: compute\n\tat io.fabric8.Foo.bar(Foo.java:1)\n"}, "", nil)
	r := e.pass(t)
	want := `SUBMISSION_FAILED: spark-submit exited 1: Exception in thread "main" io.fabric8.kubernetes.client.KubernetesClientException: Forbidden: exceeded quota: compute`
	if r.Node == nil || r.Node.Phase != wfv1.NodeFailed || r.Node.Message != want {
		t.Fatalf("reply %+v; want Failed %q", r.Node, want)
	}
	if n := len(submittest.Calls(t, e.record)); n != 1 {
		t.Fatalf("%d spark-submit runs, want 1", n)
	}
}

func TestSparkSubmitFailureIsRetriedPerPolicy(t *testing.T) {
	e := newSubmitEnv(t, submittest.Config{ExitCode: 1, Stderr: "Exception in thread \"main\" java.net.SocketTimeoutException: timeout\n"},
		`,"restartPolicy":{"type":"OnFailure","onSubmissionFailureRetries":1,"onSubmissionFailureRetryInterval":1}`, nil)
	r := e.pass(t)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending || !strings.HasPrefix(r.Node.Message, "SUBMISSION_FAILED: retry 1/1 soon: spark-submit exited 1: ") {
		t.Fatalf("first failure: %+v; want a retry", r.Node)
	}
	// Within the interval, spark-submit does not run again.
	if r = e.pass(t); r.Node == nil || !strings.Contains(r.Node.Message, "SUBMISSION_FAILED: retry 1/1 in") || len(submittest.Calls(t, e.record)) != 1 {
		t.Fatalf("within the interval: %+v after %d runs", r.Node, len(submittest.Calls(t, e.record)))
	}
	time.Sleep(1100 * time.Millisecond)
	if r = e.pass(t); r.Node == nil || r.Node.Phase != wfv1.NodeFailed || !strings.Contains(r.Node.Message, "SocketTimeoutException") {
		t.Fatalf("second failure: %+v; want Failed", r.Node)
	}
	if n := len(submittest.Calls(t, e.record)); n != 2 {
		t.Fatalf("%d spark-submit runs, want 2", n)
	}
}

// A spark-submit that outlasts SubmitWait goes on in the background: the
// node is Pending meanwhile, later passes run no second spark-submit,
// and a pass after it ended takes its result.
func TestSparkSubmitRunsInTheBackground(t *testing.T) {
	e := newSubmitEnv(t, submittest.Config{Sleep: "1s"}, "", func(o *Options) { o.SubmitWait = 50 * time.Millisecond })
	running := decide.SubmitRunning().Message()
	r := e.pass(t)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending || r.Node.Message != running {
		t.Fatalf("first result %+v; want Pending %q", r.Node, running)
	}
	if r = e.pass(t); r.Node == nil || r.Node.Message != running {
		t.Fatalf("second result %+v; want still running", r.Node)
	}
	deadline := time.Now().Add(10 * time.Second)
	for r.Node != nil && r.Node.Message == running && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		r = e.pass(t)
	}
	// The fake created no driver (it cannot reach a fake clientset): the
	// result taken is that failure.
	if r.Node == nil || r.Node.Phase != wfv1.NodeFailed || !strings.Contains(r.Node.Message, "spark-submit exited 0, but driver pod") {
		t.Fatalf("after spark-submit ended: %+v; want its result", r.Node)
	}
	if n := len(submittest.Calls(t, e.record)); n != 1 {
		t.Fatalf("%d spark-submit runs, want 1", n)
	}
	if n := e.core.submits.len(); n != 0 {
		t.Fatalf("%d runs kept after their result was taken", n)
	}
}

// A driver that shows in the cache while its spark-submit still runs,
// owned by the Workflow (spark-submit keeps the template's owner), is
// taken at once; the run, once ended, is kept a while for a pass to
// take, then dropped.
func TestSparkSubmitDriverSeenWhileItRuns(t *testing.T) {
	e := newSubmitEnv(t, submittest.Config{Sleep: "1s"}, "", func(o *Options) { o.SubmitWait = 50 * time.Millisecond })
	if r := e.pass(t); r.Node == nil || r.Node.Message != decide.SubmitRunning().Message() {
		t.Fatalf("first result %+v", r.Node)
	}
	// spark-submit created it and is not done yet.
	p := e.submitted(t)
	p.OwnerReferences = []metav1.OwnerReference{objects.WorkflowOwner(spark.WorkflowRef{Name: "wf", Namespace: "ns", UID: "uid-1"})}
	if _, err := e.kube.CoreV1().Pods("ns").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var r executor.ExecuteTemplateReply
	deadline := time.Now().Add(10 * time.Second)
	for param(r, spark.OutputDriverPod) == "" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		r = e.pass(t)
	}
	if r.Node == nil || r.Node.Phase != wfv1.NodePending || !strings.HasPrefix(r.Node.Message, "SUBMITTED") || param(r, spark.OutputDriverPod) != e.driverName(t) {
		t.Fatalf("result %+v; want the driver, submitted", r.Node)
	}
	time.Sleep(1500 * time.Millisecond) // the run ends
	e.pass(t)
	if n := len(submittest.Calls(t, e.record)); n != 1 {
		t.Fatalf("%d spark-submit runs, want 1", n)
	}
	if n := e.core.submits.len(); n != 1 {
		t.Fatalf("%d runs kept, want the ended one", n)
	}
	e.core.submits.start("other", time.Now().Add(submitRunKeep+time.Minute), func() submitOutcome { return submitOutcome{} })
	if _, kept := e.core.submits.m["uid-1/wf-1/1"]; kept {
		t.Fatal("an ended run no request took is kept past submitRunKeep")
	}
}

// spark-submit exits 0 but the driver is not there: a failed submission,
// saying where to look.
func TestSparkSubmitWithoutADriverFails(t *testing.T) {
	e := newSubmitEnv(t, submittest.Config{}, "", nil)
	r := e.pass(t)
	if r.Node == nil || r.Node.Phase != wfv1.NodeFailed || !strings.Contains(r.Node.Message, "spark-submit exited 0, but driver pod "+e.driverName(t)+" does not exist") {
		t.Fatalf("result %+v", r.Node)
	}
}

// A body asking for spark-submit on a plugin without --spark-home fails,
// saying so.
func TestSparkSubmitWithoutSparkHomeFails(t *testing.T) {
	e := newSubmitEnv(t, submittest.Config{}, "", func(o *Options) { o.Submit.SparkHome = "" })
	r := e.pass(t)
	if r.Node == nil || r.Node.Phase != wfv1.NodeFailed || !strings.Contains(r.Node.Message, "--spark-home") {
		t.Fatalf("result %+v", r.Node)
	}
	if n := len(submittest.Calls(t, e.record)); n != 0 {
		t.Fatalf("%d spark-submit runs, want none", n)
	}
}

// The plugin-wide launcher applies to bodies that name none; a body's own
// wins.
func TestLauncherDefault(t *testing.T) {
	for _, tc := range []struct {
		name, plugin, body, want string
		client                   bool
	}{
		{"default native", "", "", "native", false},
		{"plugin spark-submit", "spark-submit", "", "spark-submit", false},
		{"body native wins", "spark-submit", "native", "native", false},
		{"body spark-submit wins", "native", "spark-submit", "spark-submit", false},
		{"client mode is native whatever the plugin default", "spark-submit", "", "native", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Launcher: tc.plugin}
			o.Submit.SparkHome = ""
			if tc.plugin == "spark-submit" {
				// Validate needs an executable; nothing runs it.
				o.Submit.SparkHome = t.TempDir()
				if err := os.MkdirAll(filepath.Join(o.Submit.SparkHome, "bin"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(o.Submit.SparkHome, "bin", "spark-submit"), nil, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			raw := strings.Replace(body, "%s", "", 1)
			if tc.body != "" {
				raw = strings.Replace(body, "%s", `,"sparkplug":{"launcher":"`+tc.body+`"}`, 1)
			}
			if tc.client {
				raw = strings.Replace(raw, `"type":"Scala"`, `"type":"Scala","mode":"client"`, 1)
			}
			s, err := parseBody(raw)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.LauncherFor(o.Launcher); got != tc.want {
				t.Fatalf("launcher %q, want %q", got, tc.want)
			}
		})
	}
}

func TestOptionsLauncher(t *testing.T) {
	for _, tc := range []struct {
		name    string
		o       Options
		wantErr string
	}{
		{"spark-submit without a spark home", Options{Launcher: "spark-submit"}, "launcher: spark-submit needs spark-home"},
		{"unknown launcher", Options{Launcher: "yarn"}, `launcher: must be native or spark-submit, got "yarn"`},
		{"submit wait beyond what a worker may wait", Options{SubmitWait: time.Minute}, "a pass that waits holds a worker"},
		{"negative submit wait", Options{SubmitWait: -time.Second}, "want between 0 and"},
		{"unknown placeholder in the UI Ingress URL", Options{IngressURLFormat: "{{$app}}.example.com"}, `ingress-url-format: "{{$app}}.example.com": unknown placeholder {{$app}}`},
		{"an IngressClass name that is none", Options{IngressClassName: "Nginx"}, `ingress-class-name: "Nginx": is not an IngressClass name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.o.Validate(); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Validate: %v, want %q", err, tc.wantErr)
			}
		})
	}
}

func TestRetarget(t *testing.T) {
	b, err := objects.New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseBody(strings.Replace(body, "%s", `,"sparkUIOptions":{}`, 1))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := b.Build(s, objects.Run{Workflow: spark.WorkflowRef{Name: "wf", Namespace: "ns", UID: "uid-1"}, NodeID: "wf-1", TemplateKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	native := objs.Driver.Labels[spark.LabelAppSelector]
	retarget(objs, objs.Driver)
	for _, o := range objs.Companions() {
		if o.GetLabels()[spark.LabelAppSelector] != native {
			t.Fatalf("a native driver's companions changed: %s", o.GetName())
		}
	}
	driver := objs.Driver.DeepCopy()
	driver.Labels[spark.LabelAppSelector] = "spark-other"
	retarget(objs, driver)
	services := 0
	for _, o := range objs.Companions() {
		if got := o.GetLabels()[spark.LabelAppSelector]; got != "spark-other" {
			t.Errorf("%s label %s=%q, want spark-other", o.GetName(), spark.LabelAppSelector, got)
		}
		if svc, ok := o.(*corev1.Service); ok {
			services++
			if svc.Spec.Selector[spark.LabelAppSelector] != "spark-other" {
				t.Errorf("service %s selects %v", svc.Name, svc.Spec.Selector)
			}
		}
	}
	if services != 2 {
		t.Fatalf("%d services, want the driver's and the UI's", services)
	}
}

func param(r executor.ExecuteTemplateReply, name string) string {
	if r.Node == nil || r.Node.Outputs == nil {
		return ""
	}
	for _, p := range r.Node.Outputs.Parameters {
		if p.Name == name && p.Value != nil {
			return p.Value.String()
		}
	}
	return ""
}

func parseBody(raw string) (*spec.SparkApplicationSpec, error) { return spec.Parse([]byte(raw)) }

// sparkplug render shows the spark-submit run the launcher execs: for the
// same template, run, workflow start (render --started-at) and options,
// the recorded argv and environment are render's, but for the directory
// of the pod template files, which the launcher makes anew for each run.
func TestSparkSubmitExecsWhatRenderShows(t *testing.T) {
	extra := `,"arguments":["--date","2024-01-01"],"sparkConf":{"spark.hadoop.fs.s3a.secret.key":"s3cr3t"},` +
		`"deps":{"jars":["https://repo.example.com/libs/udfs.jar"]},"sparkUIOptions":{},` +
		`"driver":{"serviceAccount":"spark","envSecretKeyRefs":{"DB_PASSWORD":{"name":"db","key":"password"}}}`
	e := newSubmitEnv(t, submittest.Config{}, extra, func(o *Options) {
		o.Submit.RequestTimeout = 20 * time.Second
		o.Submit.Env = map[string]string{"HOME": "/home/sparkplug", "JAVA_HOME": "/opt/java"}
		o.Submit.Client = submit.Client{
			Master:     "https://10.96.0.1:443",
			Kubeconfig: "/tmp/sparkplug-client-1/kubeconfig",
			AuthConf:   map[string]string{submit.ConfAuthOAuthTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token"},
		}
	})
	e.pass(t)
	calls := submittest.Calls(t, e.record)
	if len(calls) != 1 {
		t.Fatalf("%d spark-submit runs, want 1", len(calls))
	}
	got := calls[0]

	tmpl, err := json.Marshal(e.args.Template)
	if err != nil {
		t.Fatal(err)
	}
	builder, err := objects.New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	wf := e.args.Workflow.ObjectMeta
	steps, err := render.Render(tmpl, builder, render.Options{
		Workflow: wf.Name, Namespace: wf.Namespace, UID: wf.UID, NodeID: "wf-1", Attempt: 1, StartedAt: e.incarnation(),
		Defaults: e.core.opts.defaults(), Submit: e.core.opts.Submit,
	})
	if err != nil || len(steps) != 1 || steps[0].Err != nil || steps[0].Submit == nil {
		t.Fatalf("render: %v %+v", err, steps)
	}
	shown := steps[0].Submit

	file, ok := got.Conf(spark.ConfDriverPodTemplateFile)
	if !ok || filepath.Base(file) != submit.DriverTemplateFileName {
		t.Fatalf("exec'd without a driver pod template file: %q", got.Args)
	}
	dir := filepath.Dir(file)
	incarnation := "spark.kubernetes.driver.annotation." + spark.AnnotationIncarnation + "=" + e.incarnation()
	var args []string
	carried := false
	for _, a := range got.Args {
		carried = carried || a == incarnation
		args = append(args, strings.ReplaceAll(a, dir, render.PlaceholderSubmitDir))
	}
	if !carried {
		t.Errorf("the launcher's driver does not carry its incarnation (--conf %s): %q", incarnation, got.Args)
	}
	if strings.Join(args, "\n") != strings.Join(shown.Args, "\n") {
		t.Errorf("the launcher exec'd (its directory %s as %s):\n  %q\nrender shows:\n  %q", dir, render.PlaceholderSubmitDir, args, shown.Args)
	}
	if strings.Join(got.Env, "\n") != strings.Join(shown.Env, "\n") {
		t.Errorf("the launcher's environment:\n  %q\nrender shows:\n  %q", got.Env, shown.Env)
	}
	if shown.Program != e.core.opts.Submit.Program() {
		t.Errorf("render shows program %s, the launcher runs %s", shown.Program, e.core.opts.Submit.Program())
	}
}

// spark-submit runs are capped (MaxSubmits): a step beyond the cap waits,
// Pending, without running spark-submit, and runs once a slot frees.
func TestSparkSubmitRunsAreCapped(t *testing.T) {
	e := newSubmitEnv(t, submittest.Config{}, "", func(o *Options) { o.MaxSubmits = 1; o.SubmitWait = time.Second })
	release := make(chan struct{})
	if run, _ := e.core.submits.start("other", time.Now(), func() submitOutcome { <-release; return submitOutcome{} }); run == nil {
		t.Fatal("the first run got no slot")
	}
	noSlot := decide.SubmitQueued(1).Message()
	r := e.pass(t)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending || r.Node.Message != noSlot {
		t.Fatalf("result %+v; want Pending %q", r.Node, noSlot)
	}
	if n := len(submittest.Calls(t, e.record)); n != 0 {
		t.Fatalf("%d spark-submit runs beyond the cap", n)
	}
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for r.Node != nil && r.Node.Message == noSlot && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		r = e.pass(t)
	}
	if n := len(submittest.Calls(t, e.record)); n != 1 {
		t.Fatalf("%d spark-submit runs once the slot freed, want 1 (result %+v)", n, r.Node)
	}
}

// A body that would steer spark-submit (an option as the primary resource,
// a file of the plugin's pod to upload) fails its node naming the fields,
// and spark-submit never runs (issue 20, finding 1).
func TestSparkSubmitRefusesWhatSteersIt(t *testing.T) {
	launcher := `,"sparkplug":{"launcher":"spark-submit"}`
	for name, sparkBody := range map[string]string{
		"spark.mainApplicationFile":                          strings.Replace(strings.Replace(body, "local:///pi.jar", "--deploy-mode=client", 1), "%s", launcher, 1),
		"spark.deps.files[0]":                                strings.Replace(body, "%s", launcher+`,"deps":{"files":["file:///var/run/secrets/kubernetes.io/serviceaccount/token"]}`, 1),
		"spark.sparkConf[spark.kubernetes.file.upload.path]": strings.Replace(body, "%s", launcher+`,"sparkConf":{"spark.kubernetes.file.upload.path":"s3a://elsewhere/loot"}`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			e := newSubmitEnvOf(t, submittest.Config{}, sparkBody, nil)
			r := e.pass(t)
			if r.Node == nil || r.Node.Phase != wfv1.NodeFailed || !strings.Contains(r.Node.Message, name) || !strings.Contains(r.Node.Message, "spark-submit") {
				t.Fatalf("result %+v; want Failed naming %s", r.Node, name)
			}
			if n := len(submittest.Calls(t, e.record)); n != 0 {
				t.Fatalf("%d spark-submit runs, want none", n)
			}
		})
	}
}
