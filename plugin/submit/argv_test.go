package submit

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// sparkSubmitRead is how spark-submit reads a command line: a model of
// Spark's own parsing, for tests only.
//
// launcher/src/main/java/org/apache/spark/launcher/SparkSubmitOptionParser.java,
// parse: for each argument, "--opt=value" (the pattern (--[^=]+)=(.+)) is
// split; an argument naming an option of opts takes the next argument as its
// value, whatever that is ("Missing argument for option" if there is none);
// one naming a switch takes none; any other goes to handleUnknown, and when
// that returns false, the rest goes to handleExtraArgs.
//
// SparkSubmitCommandBuilder.OptionParser (the launcher bin/spark-submit runs
// first, which rebuilds the command line SparkSubmit reads from what it
// parsed): --conf is split at its first '=' into a key and a value, the last
// value of a key wins; --class of a special class turns on
// allowsMixedArguments, under which handleUnknown puts the argument among the
// application's and parsing goes on; otherwise handleUnknown refuses an
// argument starting with '-' ("Unrecognized option") and takes it as the
// primary resource.
//
// core/src/main/scala/org/apache/spark/deploy/SparkSubmitArguments.scala:
// handleUnknown refuses an argument starting with '-' too, and otherwise
// makes it the primary resource and returns false; handleExtraArgs makes
// every later argument an application argument. "The first unrecognized
// option is treated as the "primary resource". Everything else is treated as
// application arguments."
type sparkSubmitRead struct {
	// options are the last value of each option other than --conf, by its
	// official name; switches the switches given.
	options  map[string]string
	switches []string
	conf     map[string]string
	// resource is the primary resource, "" when none was given.
	resource string
	appArgs  []string
	// mixed: a special --class made the launcher parse options among the
	// application's arguments.
	mixed bool
}

// submitOpts and submitSwitches are SparkSubmitOptionParser's opts and
// switches, every alias to its official name.
var (
	submitOpts = aliases(
		[]string{"--archives"}, []string{"--class"}, []string{"--conf", "-c"}, []string{"--deploy-mode"},
		[]string{"--driver-class-path"}, []string{"--driver-cores"}, []string{"--driver-java-options"},
		[]string{"--driver-library-path"}, []string{"--driver-memory"}, []string{"--executor-cores"},
		[]string{"--executor-memory"}, []string{"--files"}, []string{"--jars"}, []string{"--keytab"},
		[]string{"--kill"}, []string{"--master"}, []string{"--name"}, []string{"--num-executors"},
		[]string{"--packages"}, []string{"--exclude-packages"}, []string{"--principal"},
		[]string{"--properties-file"}, []string{"--proxy-user"}, []string{"--py-files"}, []string{"--queue"},
		[]string{"--repositories"}, []string{"--status"}, []string{"--total-executor-cores"},
	)
	submitSwitches = aliases([]string{"--help", "-h"}, []string{"--supervise"}, []string{"--usage-error"}, []string{"--verbose", "-v"}, []string{"--version"})
	// eqSeparatedOpt is Pattern.compile("(--[^=]+)=(.+)") under
	// Matcher.matches: Java's '.' matches no line terminator.
	eqSeparatedOpt = regexp.MustCompile("^(--[^=]+)=([^\n\r\u0085\u2028\u2029]+)$")
)

func aliases(groups ...[]string) map[string]string {
	m := map[string]string{}
	for _, g := range groups {
		for _, a := range g {
			m[a] = g[0]
		}
	}
	return m
}

func readSparkSubmit(args []string) (*sparkSubmitRead, error) {
	r := &sparkSubmitRead{options: map[string]string{}, conf: map[string]string{}}
	for idx := 0; idx < len(args); idx++ {
		arg, value, hasValue := args[idx], "", false
		if m := eqSeparatedOpt.FindStringSubmatch(arg); m != nil {
			arg, value, hasValue = m[1], m[2], true
		}
		if name, ok := submitOpts[arg]; ok {
			if !hasValue {
				if idx == len(args)-1 {
					return nil, fmt.Errorf("missing argument for option %q", arg)
				}
				idx++
				value = args[idx]
			}
			switch name {
			case "--conf":
				k, v, ok := strings.Cut(value, "=")
				if !ok {
					return nil, fmt.Errorf("invalid argument to --conf: %q", value)
				}
				r.conf[k] = v
			case "--class":
				r.options[name] = value
				r.mixed = r.mixed || slices.Contains(spark.SubmitMixedArgumentClasses, value)
			default:
				r.options[name] = value
			}
			continue
		}
		if name, ok := submitSwitches[arg]; ok {
			r.switches = append(r.switches, name)
			continue
		}
		if r.mixed {
			r.appArgs = append(r.appArgs, arg)
			continue
		}
		if strings.HasPrefix(arg, "-") {
			return nil, fmt.Errorf("unrecognized option %q", arg)
		}
		r.resource, r.appArgs = arg, slices.Clone(args[idx+1:])
		break
	}
	return r, nil
}

// meant is what sparkplug means by Args(in): its options, the conf as
// confOption, driverMetadataOption (sparkplug's own keys win),
// podTemplateOption, submissionOption and authOption say it, the spec's
// primary resource and arguments.
func meant(in *Input) *sparkSubmitRead {
	w := &sparkSubmitRead{
		options: map[string]string{"--master": MasterPrefix + MasterURL(in.Master), "--deploy-mode": spark.DeployModeCluster},
		conf:    map[string]string{},
		appArgs: in.Spec.Arguments,
	}
	if n := in.Conf[spark.ConfAppName]; n != "" {
		w.options["--name"] = n
	}
	if c := ptr.Deref(in.Spec.MainClass, ""); c != "" && jvm(in.Spec) {
		w.options["--class"] = c
	}
	if u := ptr.Deref(in.Spec.ProxyUser, ""); u != "" {
		w.options["--proxy-user"] = u
	}
	for k, v := range in.Conf {
		if _, skip := notPassed[k]; !skip {
			w.conf[k] = v
		}
	}
	if j, ok := w.conf[spark.ConfJars]; ok {
		if j = withoutResource(j, ptr.Deref(in.Spec.MainApplicationFile, "")); j == "" {
			delete(w.conf, spark.ConfJars)
		} else {
			w.conf[spark.ConfJars] = j
		}
	}
	if d := in.Driver; d != nil {
		for prefix, m := range map[string]map[string]string{spark.ConfDriverLabelPrefix: d.Labels, spark.ConfDriverAnnotationPrefix: d.Annotations} {
			for k, v := range m {
				_, inConf := in.Conf[prefix+k]
				switch {
				case sparkplugKey(k), prefix == spark.ConfDriverLabelPrefix && spark.OperatorLabel(k):
					w.conf[prefix+k] = v
				case prefix == spark.ConfDriverLabelPrefix && spark.SparkOwnLabel(k), inConf:
				default:
					w.conf[prefix+k] = v
				}
			}
		}
	}
	if in.DriverTemplateFile != "" {
		w.conf[spark.ConfDriverPodTemplateFile] = in.DriverTemplateFile
		w.conf[spark.ConfDriverPodTemplateContName] = spark.DriverContainerName
	}
	if in.ExecutorTemplateFile != "" {
		w.conf[spark.ConfExecutorPodTemplateFile] = in.ExecutorTemplateFile
		w.conf[spark.ConfExecutorPodTemplateContName] = spark.ExecutorContainerName
	}
	w.conf[ConfWaitAppCompletion] = "false"
	maps.Copy(w.conf, in.AuthConf)
	switch f := ptr.Deref(in.Spec.MainApplicationFile, ""); {
	case f != "":
		w.resource = f
	case jvm(in.Spec):
		w.resource = NoResource
	}
	return w
}

// checkRead says how spark-submit's reading of Args(in) differs from what
// sparkplug means, "" when it does not.
func checkRead(in *Input) string {
	args := Args(in)
	got, err := readSparkSubmit(args)
	if err != nil {
		return fmt.Sprintf("spark-submit refuses %q: %s", args, err)
	}
	want := meant(in)
	var diffs []string
	if !maps.Equal(got.options, want.options) {
		diffs = append(diffs, fmt.Sprintf("options %q, want %q", got.options, want.options))
	}
	if len(got.switches) > 0 || got.mixed {
		diffs = append(diffs, fmt.Sprintf("switches %q, mixed arguments %v", got.switches, got.mixed))
	}
	if !maps.Equal(got.conf, want.conf) {
		for k := range maps.Keys(got.conf) {
			if w, ok := want.conf[k]; !ok || w != got.conf[k] {
				diffs = append(diffs, fmt.Sprintf("conf %q=%q, want %q (set: %v)", k, got.conf[k], w, ok))
			}
		}
		for k := range maps.Keys(want.conf) {
			if _, ok := got.conf[k]; !ok {
				diffs = append(diffs, fmt.Sprintf("conf %q missing", k))
			}
		}
	}
	if got.resource != want.resource {
		diffs = append(diffs, fmt.Sprintf("primary resource %q, want %q", got.resource, want.resource))
	}
	if !slices.Equal(got.appArgs, want.appArgs) {
		diffs = append(diffs, fmt.Sprintf("application arguments %q, want %q", got.appArgs, want.appArgs))
	}
	return strings.Join(diffs, "; ")
}

// A body's values never become spark-submit's options: for every command
// line Command builds, spark-submit (as Spark parses it: readSparkSubmit)
// sees sparkplug's options, conf and driver labels, the spec's primary
// resource and the spec's arguments, and nothing else; what it would read
// otherwise, Command refuses. Issue 20, finding 1: before, a primary
// resource --deploy-mode=client or --conf=... was read as an option.
func TestArgvAsSparkSubmitReadsIt(t *testing.T) {
	hostile := []string{
		"--conf=spark.kubernetes.driver.pod.name=victim",
		"--deploy-mode=client",
		"--conf", "spark.kubernetes.driver.label.sparkplug.io/workflow-uid=other",
		"-v", "--verbose", "--properties-file", "/var/run/secrets/kubernetes.io/serviceaccount/token",
		"-c", "--kill", "x",
	}
	tests := []struct {
		name    string
		mutate  func(in *Input)
		refused string
	}{
		{"an ordinary run", func(*Input) {}, ""},
		{"hostile arguments after the primary resource", func(in *Input) { in.Spec.Arguments = hostile }, ""},
		{"hostile option values", func(in *Input) {
			in.Spec.MainClass = ptr.To("--deploy-mode=client")
			in.Spec.ProxyUser = ptr.To("-v")
			in.Conf[spark.ConfAppName] = "--conf"
			in.Conf["spark.executor.extraJavaOptions"] = "--deploy-mode client =x"
		}, ""},
		{"a Python file and hostile arguments", func(in *Input) {
			in.Spec.Type = spec.TypePython
			in.Spec.MainApplicationFile = ptr.To("local:///app/main.py")
			in.Spec.MainClass = ptr.To("org.apache.spark.repl.Main") // no --class for Python
			in.Spec.Arguments = hostile
		}, ""},
		{"a primary resource whose first character is a space", func(in *Input) {
			in.Spec.MainApplicationFile = ptr.To(" --deploy-mode=client")
		}, ""},
		{"no primary resource: spark-internal", func(in *Input) {
			in.Spec.MainApplicationFile = nil
			in.Spec.Arguments = hostile
		}, ""},
		{"--conf=... as the primary resource", func(in *Input) {
			in.Spec.MainApplicationFile = ptr.To("--conf=spark.kubernetes.driver.pod.name=victim")
		}, "spark.mainApplicationFile"},
		{"--deploy-mode=client as the primary resource", func(in *Input) {
			in.Spec.MainApplicationFile = ptr.To("--deploy-mode=client")
			in.Spec.Arguments = []string{"local:///evil.jar"}
		}, "spark.mainApplicationFile"},
		{"a Python body without a file", func(in *Input) {
			in.Spec.Type = spec.TypePython
			in.Spec.MainApplicationFile = nil
			in.Spec.Arguments = hostile
		}, "spark.mainApplicationFile is empty"},
		{"a class that mixes options into the arguments", func(in *Input) {
			in.Spec.MainClass = ptr.To("org.apache.spark.sql.hive.thriftserver.HiveThriftServer2")
			in.Spec.Arguments = hostile
		}, "spark.mainClass"},
		{"a conf key with '='", func(in *Input) {
			in.Conf["spark.kubernetes.driver.pod.name=victim"] = "x"
		}, "contains '='"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := argvInput()
			tt.mutate(&in)
			err := checkArgs(&in)
			switch {
			case tt.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused)):
				t.Fatalf("error %v, want one naming %s", err, tt.refused)
			case tt.refused != "":
				// What it refuses, spark-submit would misread.
				if checkRead(&in) == "" {
					t.Errorf("refused, but spark-submit reads it as meant")
				}
				return
			}
			if d := checkRead(&in); d != "" {
				t.Error(d)
			}
		})
	}
}

// The same property over many random bodies built from the words that
// could steer spark-submit: every Input checkArgs accepts is read as
// meant, and so is every Input Command builds a command for.
func TestArgvAsSparkSubmitReadsItRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 1))
	accepted, refused := 0, 0
	for range 20000 {
		in := randomInput(rng)
		if checkArgs(&in) != nil {
			refused++
			continue
		}
		accepted++
		if d := checkRead(&in); d != "" {
			t.Fatalf("%s\ninput: spec %+v\nconf %q", d, *in.Spec, in.Conf)
		}
	}
	if accepted < 1000 || refused < 1000 {
		t.Fatalf("accepted %d, refused %d: the generator must exercise both", accepted, refused)
	}
}

// FuzzArgv checks the property with a fuzzer's choice of the body's
// values (go test -fuzz FuzzArgv ./plugin/submit/).
func FuzzArgv(f *testing.F) {
	f.Add("--deploy-mode=client", "org.apache.spark.repl.Main", "-v", "--conf", "spark.x=y", "k=v", false)
	f.Add("local:///a.jar", "C", "", "--conf=spark.kubernetes.driver.pod.name=v", "", "x", true)
	f.Fuzz(func(t *testing.T, file, class, user, arg0, arg1, confKey string, python bool) {
		in := argvInput()
		in.Spec.MainApplicationFile, in.Spec.MainClass, in.Spec.ProxyUser = &file, &class, &user
		in.Spec.Arguments = []string{arg0, arg1}
		if python {
			in.Spec.Type = spec.TypePython
		}
		in.Conf[confKey] = arg1
		in.Driver.Labels[confKey] = arg0
		dir := t.TempDir()
		cmd, err := (&Options{SparkHome: "/opt/spark"}).Command(in, dir, "")
		if err != nil {
			return
		}
		in.DriverTemplateFile, in.ExecutorTemplateFile = cmd.Files[0].Path, cmd.Files[1].Path
		if d := checkRead(&in); d != "" {
			t.Fatal(d)
		}
		if !reflect.DeepEqual(cmd.Args, Args(&in)) {
			t.Fatalf("Command's argv %q is not Args %q", cmd.Args, Args(&in))
		}
	})
}

// argvInput is a run as the launcher makes one: sparkplug's conf and
// driver labels, the submitting client's credentials, the template files.
func argvInput() Input {
	return Input{
		Master: "https://10.96.0.1:443",
		Spec: &spec.SparkApplicationSpec{
			Type:                spec.TypeScala,
			MainClass:           ptr.To("com.example.Etl"),
			MainApplicationFile: ptr.To("local:///opt/app.jar"),
			Arguments:           []string{"--date", "2024-01-01"},
		},
		Conf: map[string]string{
			spark.ConfAppName:       "etl-abc",
			spark.ConfDriverPodName: "etl-abc-driver",
			spark.ConfNamespace:     "team",
			spark.ConfJars:          "local:///opt/app.jar,https://x/dep.jar",
			spark.ConfMaster:        "k8s://elsewhere",
		},
		Driver: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Labels: map[string]string{
				spark.LabelWorkflowUID: "uid-1", spark.LabelNode: "n1", spark.LabelManagedBy: "sparkplug",
				spark.LabelRole: "driver", "team": "data",
			},
			Annotations: map[string]string{spark.AnnotationNodeID: "wf-1"},
		}},
		DriverTemplateFile:   "/tmp/d.yaml",
		ExecutorTemplateFile: "/tmp/e.yaml",
		AuthConf:             map[string]string{ConfAuthOAuthTokenFile: "/var/run/secrets/token"},
	}
}

// steering are the pieces random values are made of: spark-submit's
// options and switches, both spellings, '=', and what a primary resource
// or conf key looks like.
var steering = []string{
	"--conf", "--conf=", "-c", "--deploy-mode", "--deploy-mode=client", "client", "--master", "--class",
	"--properties-file", "--verbose", "-v", "--help", "--kill", "--name", "--jars", "--proxy-user",
	"=", "==", "-", "--", " ", ",", "\n", "x", "spark.kubernetes.driver.pod.name", "spark.kubernetes.driver.label.",
	spark.LabelWorkflowUID, "local:///a.jar", "spark-internal", "org.apache.spark.repl.Main",
	"org.apache.spark.sql.hive.thriftserver.SparkSQLCLIDriver", "pyspark-shell-main", "",
}

func randomWord(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(4) {
		b.WriteString(steering[rng.IntN(len(steering))])
	}
	return b.String()
}

func randomInput(rng *rand.Rand) Input {
	in := argvInput()
	maybe := func() *string {
		if rng.IntN(4) == 0 {
			return nil
		}
		w := randomWord(rng)
		return &w
	}
	in.Spec.MainApplicationFile, in.Spec.MainClass, in.Spec.ProxyUser = maybe(), maybe(), maybe()
	if rng.IntN(4) == 0 {
		in.Spec.Type = spec.TypePython
	}
	in.Spec.Arguments = nil
	for range rng.IntN(5) {
		in.Spec.Arguments = append(in.Spec.Arguments, randomWord(rng))
	}
	in.Conf[spark.ConfAppName] = randomWord(rng)
	for range rng.IntN(3) {
		in.Conf["spark."+randomWord(rng)] = randomWord(rng)
		in.Driver.Labels[randomWord(rng)] = randomWord(rng)
		in.Driver.Annotations[randomWord(rng)] = randomWord(rng)
	}
	return in
}
