package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/policy"
	"github.com/sparkplug-io/sparkplug/plugin/redact"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/submit"
	"github.com/sparkplug-io/sparkplug/templates"
)

const body = `type: Scala
image: spark:3.5.3
mainClass: org.apache.spark.examples.SparkPi
mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
`

func indent(s, by string) string {
	return by + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+by) + "\n"
}

func newBuilder(t *testing.T) *objects.Builder {
	t.Helper()
	b, err := objects.New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every kind of input names its steps and runs as documented.
func TestRenderFindsTheSteps(t *testing.T) {
	tests := []struct {
		name      string
		input     string
		opts      Options
		templates []string
		workflow  string
		namespace string
		node      string
	}{
		{"a bare body", body, Options{}, []string{""}, "render", "default", "render-2166136261"},
		{"the plugin value", "spark:\n" + indent(body, "  "), Options{}, []string{""}, "render", "default", ""},
		{"a plugin snippet", "plugin:\n  spark:\n" + indent(body, "    "), Options{}, []string{""}, "render", "default", ""},
		{"a template", "name: pi\nplugin:\n  spark:\n" + indent(body, "    "), Options{Workflow: "w", Namespace: "ns", NodeID: "w-1"}, []string{"pi"}, "w", "ns", "w-1"},
		{"a Workflow with two spark steps", `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: two-, namespace: data}
spec:
  entrypoint: main
  templates:
    - name: main
      dag: {tasks: [{name: a, template: a}, {name: b, template: b}]}
    - name: a
      plugin:
        spark:
` + indent(body, "          ") + `    - name: b
      plugin:
        spark:
` + indent(body, "          "), Options{}, []string{"a", "b"}, "two-xxxxx", "data", ""},
		{"several documents", "name: one\nplugin:\n  spark:\n" + indent(body, "    ") + "---\n---\n" + `apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {name: nightly}
spec:
  schedules: ["0 2 * * *"]
  workflowSpec:
    entrypoint: two
    templates:
      - name: two
        plugin:
          spark:
` + indent(body, "            "), Options{}, []string{"one", "two"}, "", "default", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps, err := Render([]byte(tt.input), newBuilder(t), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, st := range steps {
				names = append(names, st.Template)
				if st.Err != nil {
					t.Errorf("step %q: %v", st.Template, st.Err)
					continue
				}
				r := st.Run
				if tt.workflow != "" && r.Workflow.Name != tt.workflow || r.Workflow.Namespace != tt.namespace || r.Workflow.UID != PlaceholderUID && tt.opts.UID == "" {
					t.Errorf("run %+v, want workflow %s in %s", r, tt.workflow, tt.namespace)
				}
				if tt.node != "" && r.NodeID != tt.node {
					t.Errorf("node %s, want %s", r.NodeID, tt.node)
				}
				if refs := st.Objects.ConfigMap.OwnerReferences; len(refs) != 1 || refs[0].UID != PlaceholderDriverUID || refs[0].Name != st.Objects.Driver.Name {
					t.Errorf("configmap owners %+v, want the driver with the placeholder uid", refs)
				}
			}
			if strings.Join(names, ",") != strings.Join(tt.templates, ",") {
				t.Errorf("steps %q, want %q", names, tt.templates)
			}
		})
	}
}

// The template key is the one the plugin computes from the template the
// agent sends, so the labels match a real run's.
func TestRenderUsesThePluginsTemplateKey(t *testing.T) {
	input := "name: pi\nplugin:\n  spark:\n" + indent(body, "    ")
	steps, err := Render([]byte(input), newBuilder(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON([]byte(input))
	if err != nil {
		t.Fatal(err)
	}
	var tmpl wfv1.Template
	if err := json.Unmarshal(js, &tmpl); err != nil {
		t.Fatal(err)
	}
	want, err := identity.Key(&tmpl)
	if err != nil {
		t.Fatal(err)
	}
	if steps[0].Run.TemplateKey != want {
		t.Errorf("template key %s, want %s", steps[0].Run.TemplateKey, want)
	}
}

// Parameters are substituted from their defaults, spec.arguments and the
// options, as Argo would; the substituted template is what gets keyed.
func TestRenderSubstitutesParameters(t *testing.T) {
	input := `apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: lib}
spec:
  arguments:
    parameters: [{name: image, value: "spark:3.5.3"}]
  templates:
    - name: job
      inputs:
        parameters:
          - {name: executors, default: "2"}
          - {name: class}
      plugin:
        spark:
          type: Scala
          image: "{{workflow.parameters.image}}"
          mainClass: "{{inputs.parameters.class}}"
          mainApplicationFile: local:///app.jar
          arguments: ["{{workflow.name}}", "{{tasks.x.outputs.result}}"]
          executor:
            instances: "{{inputs.parameters.executors}}"
`
	steps, err := Render([]byte(input), newBuilder(t), Options{Parameters: map[string]string{"class": "com.example.Main"}})
	if err != nil {
		t.Fatal(err)
	}
	st := steps[0]
	if st.Err != nil {
		t.Fatal(st.Err)
	}
	c := st.Objects.ConfigMap.Data["spark.properties"]
	for _, want := range []string{"spark.executor.instances=2", `spark.kubernetes.container.image=spark\:3.5.3`} {
		if !strings.Contains(c, want) {
			t.Errorf("spark.properties lacks %s:\n%s", want, c)
		}
	}
	args := strings.Join(st.Objects.Driver.Spec.Containers[0].Args, " ")
	if want := "--class com.example.Main local:///app.jar lib {{tasks.x.outputs.result}}"; !strings.HasSuffix(args, want) {
		t.Errorf("driver args %q: want the class, the workflow's name and the unresolved task tag kept (%s)", args, want)
	}
}

// An invalid body gives exactly the plugin's message; a body the builder
// refuses gives the plugin's SUBMISSION_FAILED message.
func TestRenderReportsThePluginsMessage(t *testing.T) {
	bad := "type: Scala\nimage: x:1\nmainClass: A\nmainApplicationFile: local:///a.jar\ndriver: {memory: 12zz}\n"
	steps, err := Render([]byte(bad), newBuilder(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := yaml.YAMLToJSON([]byte(bad))
	_, want := spec.Parse(js)
	if want == nil || steps[0].Err == nil || steps[0].Err.Error() != want.Error() {
		t.Errorf("error %v, want the plugin's %v", steps[0].Err, want)
	}
	// At the field of the first problem, as convert reports: line 5,
	// memory's key.
	if got := Errors("body.yaml", steps).Error(); got != "body.yaml:5:10: "+want.Error() {
		t.Errorf("Errors = %q, want the file, line and column, then the message alone for a single step", got)
	}
	var out bytes.Buffer
	if err := Write(&out, steps); err != nil || out.Len() != 0 {
		t.Errorf("an invalid step wrote %q (%v)", out.String(), err)
	}

	two := "name: good\nplugin:\n  spark:\n" + indent(body, "    ") + "---\nname: bad\nplugin:\n  spark:\n" + indent(bad, "    ")
	steps, err = Render([]byte(two), newBuilder(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The second document starts on line 9 of the input; the flow
	// mapping's memory is on line 16, column 14.
	if got := Errors("two.yaml", steps).Error(); got != "two.yaml:16:14: template bad: "+want.Error() {
		t.Errorf("Errors = %q, want the failing template named, at its field", got)
	}
}

func TestRenderRejectsInputsWithoutASparkStep(t *testing.T) {
	tests := []struct{ name, input, want string }{
		{"not YAML", "a: [", "read YAML"},
		{"a list", "- a\n- b\n", "want a YAML object, got a list"},
		{"another kind", "apiVersion: v1\nkind: Pod\n", "kind Pod: want a Workflow"},
		{"another plugin", "name: x\nplugin:\n  slack: {}\n", "the template's plugin has no spark body"},
		{"a Workflow without spark", "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: w}\nspec:\n  templates: [{name: a, container: {image: x}}]\n", "no spark step found"},
		{"empty", "", "no spark step found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Render([]byte(tt.input), newBuilder(t), Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Render error %v, want %q", err, tt.want)
			}
		})
	}
}

// The output is YAML documents that decode into the objects, without what
// only the API server fills.
func TestWriteIsAYAMLStreamOfTheObjects(t *testing.T) {
	input := `apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: w}
spec:
  templates:
    - name: ui
      plugin:
        spark:
` + indent(body, "          ") + "          sparkUIOptions: {servicePort: 80}\n"
	steps, err := Render([]byte(input), newBuilder(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Write(&out, steps); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(out.String(), "---\n")
	if len(docs) != 4 || !strings.HasPrefix(docs[0], "# template: ui\n# run: workflow w ") {
		t.Fatalf("%d documents:\n%s", len(docs), out.String())
	}
	if strings.Contains(out.String(), "creationTimestamp") || strings.Contains(out.String(), "status:") {
		t.Error("the output has fields only the API server fills")
	}
	var svc corev1.Service
	if err := yaml.UnmarshalStrict([]byte(docs[3]), &svc); err != nil || !strings.HasSuffix(svc.Name, "-ui-svc") || svc.Spec.Ports[0].Port != 80 {
		t.Errorf("the UI Service: %+v (%v)", svc, err)
	}
}

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

// What render prints hides secret values, as the plugin's logs do: the
// sensitive keys of spark.properties, the environment of the driver pod
// and of the executor pod template, a DSN's password. The objects the
// plugin creates keep them.
func TestWriteRedactsSecrets(t *testing.T) {
	input := body + `sparkConf:
  spark.hadoop.fs.s3a.secret.key: hunter2
  spark.executorEnv.DB_URL: "app:s3cr3t@tcp(db:3306)/sales"
driver:
  env: [{name: DB_PASSWORD, value: hunter3}, {name: REGION, value: eu-west-1}]
executor:
  env: [{name: API_TOKEN, value: hunter4}]
`
	steps, err := Render([]byte(input), newBuilder(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Errors("input", steps); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Write(&out, steps); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2", "s3cr3t", "hunter3", "hunter4"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("render shows %q:\n%s", secret, out.String())
		}
	}
	if !strings.Contains(out.String(), "eu-west-1") || !strings.Contains(out.String(), "spark.hadoop.fs.s3a.secret.key="+redact.Redacted) {
		t.Errorf("render hides too much, or not where it should:\n%s", out.String())
	}
	if !strings.Contains(steps[0].Objects.ConfigMap.Data[spark.PropertiesFile], "hunter2") {
		t.Error("the objects themselves lost the value: only what is printed is redacted")
	}
}

// gapsBody plants a secret in every place render used to print in the
// clear (issue #20, finding 6): a -D password that spark.properties
// writes with \=, quoted -D values, application arguments (flag=value,
// flag value, JDBC URLs), init container args and env, annotations, and
// the env of the pod templates spark-submit is handed.
const gapsBody = body + `arguments:
  - --db-password=leak01
  - --password
  - leak02
  - jdbc:postgresql://h/db?user=u&password=leak03
  - jdbc:mysql://u:leak04@h/db
sparkConf:
  spark.driver.extraJavaOptions: -Xss4m -Dx.password=leak05 -Dtrust.storePassword="leak06 x" -Dapi.token='leak07'
  spark.executorEnv.JDBC: jdbc:postgresql://h/db?user=u&password=leak08
  spark.executorEnv.URL: https://user:leak09@repo.example.com/x
driver:
  env: [{name: DB_PASSWORD, value: leak10}, {name: REGION, value: eu-west-1}]
  annotations: {example.com/api-token: leak11, example.com/dsn: "postgres://u:leak12@db/x"}
  initContainers:
    - name: fetch
      image: busybox
      args: [--token, leak13, --secret=leak14]
      env: [{name: AWS_SECRET_ACCESS_KEY, value: leak15}]
executor:
  env: [{name: API_TOKEN, value: leak16}]
  annotations: {example.com/password: leak17}
`

// leaks names the planted secrets of gapsBody render prints.
func leaks(out string) []string {
	var found []string
	for i := 1; i <= 17; i++ {
		if s := fmt.Sprintf("leak%02d", i); strings.Contains(out, s) {
			found = append(found, s)
		}
	}
	return found
}

// Neither launcher's render prints a planted secret, wherever in the
// objects or the spark-submit run it is.
func TestWriteRedactsEveryPlantedSecret(t *testing.T) {
	for _, launcher := range []string{spec.LauncherNative, spec.LauncherSparkSubmit} {
		t.Run(launcher, func(t *testing.T) {
			steps, err := Render([]byte(gapsBody), newBuilder(t), Options{Defaults: spec.PluginDefaults{Launcher: launcher}})
			if err != nil {
				t.Fatal(err)
			}
			if err := Errors("input", steps); err != nil {
				t.Fatal(err)
			}
			if (steps[0].Submit != nil) != (launcher == spec.LauncherSparkSubmit) {
				t.Fatalf("launcher %s not taken", launcher)
			}
			var out bytes.Buffer
			if err := Write(&out, steps); err != nil {
				t.Fatal(err)
			}
			if found := leaks(out.String()); len(found) > 0 {
				t.Errorf("render shows %q:\n%s", found, out.String())
			}
			for _, shown := range []string{"eu-west-1", "-Xss4m", "jdbc:postgresql://h/db?user=u", "busybox"} {
				if !strings.Contains(out.String(), shown) {
					t.Errorf("render hides %q, which is no secret:\n%s", shown, out.String())
				}
			}
		})
	}
}

// The one line render prints for a failed step shows no secret either.
func TestErrorsAreRedacted(t *testing.T) {
	err := Errors("f.yaml", []Step{{Template: "a", Err: errors.New("bad: --db-password=leak01")}, {Template: "b"}})
	if err == nil || strings.Contains(err.Error(), "leak01") || !strings.Contains(err.Error(), "f.yaml: template a: bad: --db-password=") {
		t.Errorf("Errors = %v", err)
	}
	if Errors("f.yaml", []Step{{Template: "b"}}) != nil {
		t.Error("Errors of steps that built is not nil")
	}
}

// render checks the plugin's policy as serve does: the plugin's own
// ServiceAccount always, the options as given; a refused step prints
// nothing.
func TestRenderChecksThePolicy(t *testing.T) {
	base := "type: Scala\nimage: x:1\nmainClass: A\nmainApplicationFile: local:///a.jar\n"
	for _, tc := range []struct {
		name, body string
		policy     policy.Policy
		want       string
	}{
		{"the plugin's account", base + "driver: {serviceAccount: spark-executor-plugin}\n", policy.Policy{},
			"refused by the plugin's policy: spark.driver.serviceAccount: ServiceAccount spark-executor-plugin is the plugin's own"},
		{"a Service type not allowed", base + "sparkUIOptions: {serviceType: LoadBalancer}\n", policy.Policy{ServiceTypes: []string{"ClusterIP"}},
			"spark.sparkUIOptions.serviceType: a Service of type LoadBalancer is not one the plugin allows (ClusterIP) (policy rule allowed-service-types)"},
		{"allowed", base + "driver: {serviceAccount: spark}\nsparkUIOptions: {serviceType: NodePort}\n", policy.Policy{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps, err := Render([]byte(tc.body), newBuilder(t), Options{Policy: tc.policy})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			werr := Write(&out, steps)
			if tc.want == "" {
				if steps[0].Err != nil || werr != nil || out.Len() == 0 {
					t.Fatalf("refused: %v %v", steps[0].Err, werr)
				}
				return
			}
			if steps[0].Err == nil || !strings.Contains(steps[0].Err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", steps[0].Err, tc.want)
			}
			if werr != nil || out.Len() != 0 {
				t.Fatalf("a refused step wrote %q (%v)", out.String(), werr)
			}
		})
	}
}

// An input parameter a template declares without a value is Argo's to
// resolve when every caller passes it (or the template is a
// WorkflowTemplate's, whose callers must): the preview shows it as written
// with a note, and no warning. One caller that does not pass it, an
// undeclared parameter, or a bare template keep the warning: Argo would
// fail the step.
func TestRenderWarnsOnlyOfParametersNoCallerGives(t *testing.T) {
	workflow := func(kind, calls string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: ` + kind + `
metadata: {generateName: w-}
spec:
  entrypoint: main
  templates:
    - name: main
` + calls + `
    - name: job
      inputs:
        parameters: [{name: slices}]
      plugin:
        spark:
          type: Scala
          image: spark:3.5.3
          mainClass: org.apache.spark.examples.SparkPi
          mainApplicationFile: local:///app.jar
          arguments: ["{{inputs.parameters.slices}}", "{{inputs.parameters.undeclared}}"]
`
	}
	dag := `      dag:
        tasks:
          - {name: a, template: job, arguments: {parameters: [{name: slices, value: "10"}]}}
          - {name: b, template: job, arguments: {parameters: [{name: slices, value: "{{tasks.a.outputs.result}}"}]}}
`
	steps := `      steps:
        - - {name: a, template: job, arguments: {parameters: [{name: slices, value: "10"}]}}
          - {name: b, template: job}
`
	const declared, undeclared = "{{inputs.parameters.slices}}", "{{inputs.parameters.undeclared}}"
	for _, tc := range []struct {
		name, input string
		// warned: the tags the warning names; noted: those a note names.
		warned, noted []string
	}{
		{"every DAG task passes it", workflow("Workflow", dag), []string{undeclared}, []string{declared}},
		{"a step does not pass it", workflow("Workflow", steps), []string{declared, undeclared}, nil},
		{"no caller", workflow("Workflow", "      steps: []"), []string{declared, undeclared}, nil},
		{"a WorkflowTemplate's", workflow("WorkflowTemplate", "      steps: []"), []string{undeclared}, []string{declared}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Render([]byte(tc.input), newBuilder(t), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("%d steps", len(got))
			}
			st := got[0]
			warnings, notes := strings.Join(st.Warnings, "\n"), strings.Join(st.Notes, "\n")
			for _, tag := range []string{declared, undeclared} {
				if w := slices.Contains(tc.warned, tag); w != strings.Contains(warnings, tag) {
					t.Errorf("%s in a warning: %v, want %v; warnings:\n%s", tag, !w, w, warnings)
				}
				if n := slices.Contains(tc.noted, tag); n != strings.Contains(notes, tag) {
					t.Errorf("%s in a note: %v, want %v; notes:\n%s", tag, !n, n, notes)
				}
			}
			var out bytes.Buffer
			if err := Write(&out, got); err != nil {
				t.Fatal(err)
			}
			for _, n := range st.Notes {
				if !strings.Contains(out.String(), "# note: "+n+"\n") {
					t.Errorf("the output does not show the note %q:\n%s", n, out.String())
				}
			}
		})
	}
}
