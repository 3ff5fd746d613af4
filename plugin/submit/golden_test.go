package submit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/golden"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/templates"
)

// goldenRun is the run every golden input is built for.
var goldenRun = objects.Run{
	Workflow:    spark.WorkflowRef{Name: "nightly-etl-x7k2p", Namespace: "data", UID: "7c1e2f4a-2b8d-4e63-9a0f-1d2c3b4a5e6f"},
	NodeID:      "nightly-etl-x7k2p-3141592653",
	TemplateKey: "0a1b2c3d4e5f60718293",
	Attempt:     1,
}

// goldenInput is the submission of a golden input file, with the files
// where Files would write them in dir /tmp/sparkplug-submit-1.
func goldenInput(t *testing.T, file string) (*Input, *objects.Set) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	body, err := spec.Parse(js)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	b, err := objects.New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := b.Build(body, goldenRun)
	if err != nil {
		t.Fatalf("%s: Build: %v", file, err)
	}
	return &Input{
		Master:               "https://10.96.0.1:443",
		Spec:                 body,
		Conf:                 objects.Properties(body, goldenRun),
		Driver:               objs.Driver,
		DriverTemplateFile:   "/tmp/sparkplug-submit-1/" + DriverTemplateFileName,
		ExecutorTemplateFile: "/tmp/sparkplug-submit-1/" + ExecutorTemplateFileName,
		RequestTimeout:       30 * time.Second,
		AuthConf: map[string]string{
			ConfAuthOAuthTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
			ConfAuthCACertFile:     "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
		},
	}, objs
}

// The command line and driver pod template of each golden input, compared
// with testdata/<input>.golden.txt (one argument per line) and
// testdata/<input>.driver-template.golden.yaml.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.input.yaml"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs in testdata: %v", err)
	}
	for _, file := range inputs {
		name := strings.TrimSuffix(filepath.Base(file), ".input.yaml")
		t.Run(name, func(t *testing.T) {
			in, _ := goldenInput(t, file)
			tmpl, err := podYAML(DriverTemplate(in.Driver, in.Spec, in.Conf))
			if err != nil {
				t.Fatal(err)
			}
			golden.Compare(t, filepath.Join("testdata", name+".golden.txt"), strings.Join(Args(in), "\n")+"\n")
			golden.Compare(t, filepath.Join("testdata", name+".driver-template.golden.yaml"), string(tmpl))
		})
	}
}

// lineDiff lists the lines only one side has.
func lineDiff(want, got string) string {
	in := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(s, "\n") {
			m[l]++
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if g[l] == 0 {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if w[l] == 0 {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

// What the goldens show, said once more as properties a reader can check
// without reading them: the argv is a valid spark-submit command line for
// the run, and nothing spark-submit sets itself is passed.
func TestGoldenArgsProperties(t *testing.T) {
	inputs, _ := filepath.Glob(filepath.Join("testdata", "*.input.yaml"))
	for _, file := range inputs {
		t.Run(filepath.Base(file), func(t *testing.T) {
			in, objs := goldenInput(t, file)
			args := Args(in)
			confs := map[string]string{}
			for i := 0; i < len(args); i++ {
				if args[i] != "--conf" {
					continue
				}
				k, v, ok := strings.Cut(args[i+1], "=")
				if !ok {
					t.Fatalf("--conf %q has no =", args[i+1])
				}
				if _, dup := confs[k]; dup {
					t.Errorf("--conf %s given twice", k)
				}
				confs[k] = v
				i++
			}
			for k := range notPassed {
				if _, ok := confs[k]; ok && !strings.HasPrefix(notPassed[k], "podTemplateOption") && !strings.HasPrefix(notPassed[k], "submissionOption") && notPassed[k] != "authOption" {
					t.Errorf("--conf %s is passed; spark-submit sets it itself (%s)", k, notPassed[k])
				}
			}
			if confs[spark.ConfDriverPodName] != objs.Driver.Name || confs[spark.ConfNamespace] != goldenRun.Workflow.Namespace {
				t.Errorf("driver pod %s/%s, want %s/%s", confs[spark.ConfNamespace], confs[spark.ConfDriverPodName], goldenRun.Workflow.Namespace, objs.Driver.Name)
			}
			for _, k := range []string{spark.LabelWorkflowUID, spark.LabelNode, spark.LabelTemplate, spark.LabelAttempt, spark.LabelManagedBy} {
				if confs[spark.ConfDriverLabelPrefix+k] != objs.Driver.Labels[k] || confs[spark.ConfDriverLabelPrefix+k] == "" {
					t.Errorf("driver label %s=%q, want %q", k, confs[spark.ConfDriverLabelPrefix+k], objs.Driver.Labels[k])
				}
			}
			for _, k := range []string{spark.AnnotationNodeID, spark.AnnotationWorkflowName} {
				if confs[spark.ConfDriverAnnotationPrefix+k] != objs.Driver.Annotations[k] {
					t.Errorf("driver annotation %s=%q, want %q", k, confs[spark.ConfDriverAnnotationPrefix+k], objs.Driver.Annotations[k])
				}
			}
			if confs[ConfWaitAppCompletion] != "false" {
				t.Errorf("%s=%q, want false", ConfWaitAppCompletion, confs[ConfWaitAppCompletion])
			}
			if args[0] != "--master" || args[1] != "k8s://https://10.96.0.1:443" || args[2] != "--deploy-mode" || args[3] != "cluster" {
				t.Errorf("argv starts %q", args[:4])
			}
			tail := append([]string{*in.Spec.MainApplicationFile}, in.Spec.Arguments...)
			if got := args[len(args)-len(tail):]; strings.Join(got, "\x00") != strings.Join(tail, "\x00") {
				t.Errorf("argv ends %q, want the primary resource and the arguments %q", got, tail)
			}
		})
	}
}

// spark-submit is told to put the Spark operator's app-name and
// submission-id labels on the driver and the executors, with the values
// the native launcher gives them, and never launched-by-spark-operator.
func TestOperatorLabelsOnTheCommandLine(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "*.input.yaml"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs in testdata: %v", err)
	}
	n := objects.NamesFor(goldenRun)
	for _, file := range inputs {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".input.yaml"), func(t *testing.T) {
			in, objs := goldenInput(t, file)
			args := Args(in)
			read, err := readSparkSubmit(args)
			if err != nil {
				t.Fatal(err)
			}
			appName := objs.Driver.Labels[spark.LabelAppName]
			if appName == "" || !strings.HasPrefix(n.AppID, "spark-") {
				t.Fatalf("native driver's %s %q, application id %q", spark.LabelAppName, appName, n.AppID)
			}
			for _, prefix := range []string{spark.ConfDriverLabelPrefix, spark.ConfExecutorLabelPrefix} {
				for k, v := range map[string]string{spark.LabelOperatorAppName: appName, spark.LabelOperatorSubmissionID: n.AppID} {
					if got := read.conf[prefix+k]; got != v {
						t.Errorf("spark-submit reads %s%s=%q, want %q", prefix, k, got, v)
					}
				}
			}
			for _, a := range args {
				if strings.Contains(a, spark.LabelOperatorLaunchedBy) {
					t.Errorf("argument %q: sparkplug never sets %s", a, spark.LabelOperatorLaunchedBy)
				}
			}
		})
	}
}
