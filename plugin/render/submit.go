package render

import (
	"path"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/redact"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/submit"
)

// Placeholders of the spark-submit launcher, for what only the plugin's
// pod knows: its API server and credentials (those of a pod's service
// account), its temporary directories, its environment.
const (
	// PlaceholderSparkHome is the Spark distribution when Options.Submit
	// names none: where Spark's images keep it.
	PlaceholderSparkHome = "/opt/spark"
	// PlaceholderAPIServer is the API server spark-submit is sent to; the
	// plugin sends it to its own (in a pod, the in-cluster address).
	PlaceholderAPIServer = "https://kubernetes.default.svc:443"
	// PlaceholderSubmitDir is the directory the plugin makes for one run's
	// pod template files.
	PlaceholderSubmitDir = "/tmp/sparkplug-submit-" + generatedSuffix
	// placeholderClientDir is the directory the plugin writes
	// spark-submit's kubeconfig into when it starts.
	placeholderClientDir = "/tmp/sparkplug-client-" + generatedSuffix
	// serviceAccountDir is where a pod's service account token and CA
	// are, which the in-cluster rest config names.
	serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
)

// PlaceholderClient is the Client of a plugin in a pod: the in-cluster
// rest config's files, the kubeconfig the plugin writes at start.
func PlaceholderClient() submit.Client {
	cfg := &rest.Config{
		Host:            PlaceholderAPIServer,
		BearerTokenFile: path.Join(serviceAccountDir, "token"),
		TLSClientConfig: rest.TLSClientConfig{CAFile: path.Join(serviceAccountDir, "ca.crt")},
	}
	return submit.ClientFor(cfg, path.Join(placeholderClientDir, submit.KubeconfigFileName))
}

// PlaceholderEnv is the plugin's own environment that spark-submit
// inherits (submit.InheritedEnv): each variable stands for the plugin's
// value, if it has one.
func PlaceholderEnv() map[string]string {
	env := map[string]string{}
	for _, k := range submit.InheritedEnv {
		env[k] = "<the plugin's $" + k + ", if set>"
	}
	env["PATH"] = "<the plugin's $PATH, else " + submit.DefaultPath + ">"
	return env
}

// submitCommand is the spark-submit run of a step as the plugin's launcher
// makes it (plugin/execute: Options.Input, then Options.Command), from the
// objects the native launcher built, before they are handed to the
// driver.
func submitCommand(o submit.Options, body *spec.SparkApplicationSpec, run objects.Run, objs *objects.Set) (submit.Command, error) {
	if o.SparkHome == "" {
		o.SparkHome = PlaceholderSparkHome
	}
	if o.Client.Master == "" {
		o.Client = PlaceholderClient()
	}
	if o.Env == nil {
		o.Env = PlaceholderEnv()
	}
	in := o.Input(body, objects.Properties(body, run), objs.Driver)
	return o.Command(in, PlaceholderSubmitDir, objs.ConfigMap.Data[spark.ExecutorPodTemplateKey])
}

// submission is how Write shows a spark-submit run: one YAML document.
type submission struct {
	SparkSubmit submissionSpec `json:"sparkSubmit"`
}

// submissionSpec is the run: argv as exec'd (the program, then its
// arguments), the whole environment, and the files written first, by
// path.
type submissionSpec struct {
	Argv  []string          `json:"argv"`
	Env   map[string]string `json:"env"`
	Files map[string]string `json:"files"`
}

// shown is c as Write prints it: secret values redacted as the launcher
// logs them (redact.Args, redact.Env), and in its files as in the
// ConfigMap (redactFile).
func shown(c *submit.Command) submission {
	s := submissionSpec{
		Argv:  append([]string{c.Program}, redact.Args(c.Args)...),
		Env:   map[string]string{},
		Files: map[string]string{},
	}
	for _, e := range redact.Env(c.Env) {
		name, value, _ := strings.Cut(e, "=")
		s.Env[name] = value
	}
	for _, f := range c.Files {
		s.Files[f.Path] = redactFile(f.Path, string(f.Data))
	}
	return submission{SparkSubmit: s}
}

// submitComment opens the document of a spark-submit run.
const submitComment = `# launcher: spark-submit. The plugin writes these files, then execs this argv (never
# through a shell), which creates the driver pod from the driver pod template and the
# --conf; then the plugin creates the objects that follow, owned by that pod and selecting
# it by the application id spark-submit chose (spark-app-selector). Secret values are
# <redacted> as in the plugin's log; <...> are the plugin's own, known only in its pod.
`
