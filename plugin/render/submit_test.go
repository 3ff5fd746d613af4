package render

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/redact"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/submit"
)

// submitBody asks for the spark-submit launcher and sets a secret in
// sparkConf.
const submitBody = body + `sparkConf:
  spark.hadoop.fs.s3a.secret.key: hunter2
sparkplug:
  launcher: spark-submit
`

// A step of the spark-submit launcher gets the argv plugin/submit builds
// for the same body and run, with the files it names; Write shows that
// run, secrets redacted as the launcher logs them, instead of the driver
// pod, then the objects the plugin creates itself.
func TestRenderSparkSubmitStep(t *testing.T) {
	o := Options{Submit: submit.Options{SparkHome: "/opt/spark-3.5.3", RequestTimeout: 30 * time.Second}}
	steps, err := Render([]byte("name: pi\nplugin:\n  spark:\n"+indent(submitBody, "    ")), newBuilder(t), o)
	if err != nil {
		t.Fatal(err)
	}
	st := steps[0]
	if st.Err != nil || st.Submit == nil {
		t.Fatalf("step %+v: want a spark-submit run", st)
	}

	// plugin/submit's builder on the same body and run.
	js, _ := yaml.YAMLToJSON([]byte(submitBody))
	s, err := spec.Parse(js)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := newBuilder(t).Build(s, st.Run)
	if err != nil {
		t.Fatal(err)
	}
	in := submit.Input{
		Master:               PlaceholderAPIServer,
		Spec:                 s,
		Conf:                 objects.Properties(s, st.Run),
		Driver:               objs.Driver,
		DriverTemplateFile:   PlaceholderSubmitDir + "/" + submit.DriverTemplateFileName,
		ExecutorTemplateFile: PlaceholderSubmitDir + "/" + submit.ExecutorTemplateFileName,
		RequestTimeout:       30 * time.Second,
		AuthConf: map[string]string{
			submit.ConfAuthOAuthTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
			submit.ConfAuthCACertFile:     "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
		},
	}
	if want := submit.Args(&in); !slices.Equal(st.Submit.Args, want) {
		t.Errorf("render's argv:\n  %q\nplugin/submit's:\n  %q", st.Submit.Args, want)
	}
	if st.Submit.Program != "/opt/spark-3.5.3/bin/spark-submit" {
		t.Errorf("program %s", st.Submit.Program)
	}
	env := strings.Join(st.Submit.Env, "\n")
	for _, want := range []string{"SPARK_HOME=/opt/spark-3.5.3", "KUBERNETES_REQUEST_TIMEOUT=30000", "KUBECONFIG=/tmp/sparkplug-client-xxxxx/kubeconfig", "HOME=<the plugin's $HOME, if set>"} {
		if !strings.Contains(env, want) {
			t.Errorf("env lacks %s:\n%s", want, env)
		}
	}
	if len(st.Submit.Files) != 2 || st.Submit.Files[0].Path != in.DriverTemplateFile || st.Submit.Files[1].Path != in.ExecutorTemplateFile ||
		string(st.Submit.Files[1].Data) != objs.ConfigMap.Data[spark.ExecutorPodTemplateKey] {
		t.Fatalf("files %+v", st.Submit.Files)
	}
	var tmpl corev1.Pod
	if err := yaml.UnmarshalStrict(st.Submit.Files[0].Data, &tmpl); err != nil || !equality.Semantic.DeepEqual(&tmpl, submit.DriverTemplate(objs.Driver, s, in.Conf)) {
		t.Errorf("driver pod template file:\n%s\nwant submit.DriverTemplate's (%v)", st.Submit.Files[0].Data, err)
	}

	var out bytes.Buffer
	if err := Write(&out, steps); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(out.String(), "---\n")
	if len(docs) != 3 || !strings.Contains(docs[0], "# launcher: spark-submit.") {
		t.Fatalf("%d documents, want the run, the ConfigMap and the Service:\n%s", len(docs), out.String())
	}
	var shown struct {
		SparkSubmit struct {
			Argv  []string          `json:"argv"`
			Env   map[string]string `json:"env"`
			Files map[string]string `json:"files"`
		} `json:"sparkSubmit"`
	}
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &shown); err != nil {
		t.Fatal(err)
	}
	if want := append([]string{st.Submit.Program}, redact.Args(st.Submit.Args)...); !slices.Equal(shown.SparkSubmit.Argv, want) {
		t.Errorf("shown argv %q, want the program and the redacted args %q", shown.SparkSubmit.Argv, want)
	}
	// (The ConfigMap holds it, as it does for a native driver: it is
	// created so.)
	if strings.Contains(docs[0], "hunter2") || !slices.Contains(shown.SparkSubmit.Argv, "spark.hadoop.fs.s3a.secret.key="+redact.Redacted) {
		t.Error("the run shows the secret conf value")
	}
	if shown.SparkSubmit.Files[in.DriverTemplateFile] != string(st.Submit.Files[0].Data) || shown.SparkSubmit.Env["SPARK_HOME"] != "/opt/spark-3.5.3" {
		t.Errorf("shown files and env %+v", shown.SparkSubmit)
	}
	if strings.Contains(out.String(), "kind: Pod\nmetadata:\n  annotations") {
		t.Error("the driver pod is shown; spark-submit creates it")
	}
}

// render refuses, as the plugin does, a body that would steer the
// spark-submit launcher: an option as the primary resource, a file of the
// plugin's pod to upload and the place to upload it to (issue 20, finding
// 1). The native launcher runs no spark-submit in the plugin's pod and
// renders the same body.
func TestRenderSparkSubmitRefusesWhatSteersIt(t *testing.T) {
	steering := strings.Replace(body, "local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar", "--deploy-mode=client", 1) + `deps:
  files: ["file:///var/run/secrets/kubernetes.io/serviceaccount/token"]
sparkConf:
  spark.kubernetes.file.upload.path: s3a://elsewhere/loot
`
	steps, err := Render([]byte(steering), newBuilder(t), Options{Defaults: spec.PluginDefaults{Launcher: spec.LauncherSparkSubmit}})
	if err != nil {
		t.Fatal(err)
	}
	if steps[0].Err == nil || steps[0].Submit != nil {
		t.Fatalf("step %+v: want it refused", steps[0])
	}
	for _, field := range []string{"spark.mainApplicationFile", "spark.deps.files[0]", "spark.sparkConf[spark.kubernetes.file.upload.path]"} {
		if !strings.Contains(steps[0].Err.Error(), field) {
			t.Errorf("error does not name %s: %v", field, steps[0].Err)
		}
	}
	steps, err = Render([]byte(strings.Replace(steering, "--deploy-mode=client", "local:///app.jar", 1)), newBuilder(t), Options{})
	if err != nil || steps[0].Err != nil {
		t.Fatalf("native launcher: %v %v", err, steps[0].Err)
	}
}

// The launcher is the body's, else Options.Launcher (serve --launcher),
// and client mode is always native, as the plugin decides it.
func TestRenderLauncherDefault(t *testing.T) {
	tests := []struct {
		name, body, launcher string
		submit               bool
	}{
		{"native by default", body, "", false},
		{"the plugin's default", body, spec.LauncherSparkSubmit, true},
		{"the body's own", submitBody, spec.LauncherNative, true},
		{"client mode", body + "mode: client\n", spec.LauncherSparkSubmit, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := Render([]byte(tt.body), newBuilder(t), Options{Defaults: spec.PluginDefaults{Launcher: tt.launcher}})
			if err != nil || steps[0].Err != nil {
				t.Fatalf("%v %v", err, steps[0].Err)
			}
			if got := steps[0].Submit != nil; got != tt.submit {
				t.Errorf("spark-submit run %v, want %v", got, tt.submit)
			}
		})
	}
}
