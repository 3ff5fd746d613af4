package submit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Input takes the API server, credentials and timeout from the options,
// the rest from the run.
func TestOptionsInput(t *testing.T) {
	want, objs := goldenInput(t, filepath.Join("testdata", "etl.input.yaml"))
	o := Options{RequestTimeout: want.RequestTimeout, Client: Client{Master: want.Master, AuthConf: want.AuthConf}}
	got := o.Input(want.Spec, objects.Properties(want.Spec, goldenRun), objs.Driver)
	got.DriverTemplateFile, got.ExecutorTemplateFile = want.DriverTemplateFile, want.ExecutorTemplateFile
	if a, b := Args(&got), Args(want); !slices.Equal(a, b) {
		t.Errorf("the argv of Input differs from the golden input's:\n%s", lineDiff(strings.Join(b, "\n"), strings.Join(a, "\n")))
	}
}

// A Command is the program, the argv naming the files in dir, the
// environment, and the two pod templates; WriteFiles writes them where the
// argv says.
func TestCommand(t *testing.T) {
	in, objs := goldenInput(t, filepath.Join("testdata", "etl.input.yaml"))
	in.DriverTemplateFile, in.ExecutorTemplateFile = "", ""
	executor := objs.ConfigMap.Data[spark.ExecutorPodTemplateKey]
	o := Options{SparkHome: "/opt/spark", RequestTimeout: time.Second, Client: Client{Kubeconfig: "/tmp/k/kubeconfig"}}
	dir := t.TempDir()
	cmd, err := o.Command(*in, dir, executor)
	if err != nil {
		t.Fatal(err)
	}
	if in.DriverTemplateFile != "" {
		t.Error("Command changed the input it was given")
	}
	if cmd.Program != "/opt/spark/bin/spark-submit" || !slices.Equal(cmd.Env, o.Environ()) {
		t.Errorf("program %s, env %q", cmd.Program, cmd.Env)
	}
	driverFile, executorFile := filepath.Join(dir, DriverTemplateFileName), filepath.Join(dir, ExecutorTemplateFileName)
	in.DriverTemplateFile, in.ExecutorTemplateFile = driverFile, executorFile
	if want := Args(in); !slices.Equal(cmd.Args, want) {
		t.Errorf("args differ from Args:\n%s", lineDiff(strings.Join(want, "\n"), strings.Join(cmd.Args, "\n")))
	}
	if len(cmd.Files) != 2 || cmd.Files[0].Path != driverFile || cmd.Files[1].Path != executorFile {
		t.Fatalf("files %+v", cmd.Files)
	}
	if err := cmd.WriteFiles(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(driverFile)
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(raw, &pod); err != nil {
		t.Fatalf("driver template does not decode as a pod: %v", err)
	}
	if want, _ := podYAML(DriverTemplate(in.Driver, in.Spec, in.Conf)); string(raw) != string(want) {
		t.Errorf("driver template file:\n%s\nwant DriverTemplate's:\n%s", raw, want)
	}
	exec, err := os.ReadFile(executorFile)
	if err != nil || string(exec) != executor {
		t.Fatalf("executor template %q, %v", exec, err)
	}
	if fi, err := os.Stat(driverFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("driver template mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}
}
