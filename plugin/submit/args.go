package submit

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// Input is one submission: what the native launcher built for the run,
// and where spark-submit finds what was written for it.
type Input struct {
	// Master is the API server's URL, without k8s:// (MasterURL).
	Master string
	// Spec is the body, defaulted and validated.
	Spec *spec.SparkApplicationSpec
	// Conf is the run's effective Spark conf (objects.Properties).
	Conf map[string]string
	// Driver is the driver pod the native launcher builds for the run: its
	// labels and annotations are passed as conf, the rest as the driver pod
	// template.
	Driver *corev1.Pod
	// DriverTemplateFile and ExecutorTemplateFile are the local files
	// spark-submit reads the pod templates from (Options.Command names
	// them in a directory, Command.WriteFiles writes them).
	DriverTemplateFile, ExecutorTemplateFile string
	// RequestTimeout is the submitting client's connection and request
	// timeout against the API server; 0 keeps Spark's default.
	RequestTimeout time.Duration
	// AuthConf are spark.kubernetes.authenticate.submission.* keys: files
	// the submitting client reads its credentials from (Client).
	AuthConf map[string]string
}

// option is one part of the command line, in the order of options.
type option func(in *Input) []string

// options build spark-submit's arguments in this order, as the Spark
// operator's buildSparkSubmitArgs does: the flags, the conf, then the
// primary resource and the application's arguments, which must come last.
var options = []option{
	masterOption,
	deployModeOption,
	nameOption,
	classOption,
	proxyUserOption,
	confOption,
	driverMetadataOption,
	podTemplateOption,
	submissionOption,
	authOption,
	mainApplicationFileOption,
	argumentsOption,
}

// checkArgs refuses an Input whose command line spark-submit would read
// otherwise than Args means it. spark-submit's parser
// (launcher/src/main/java/org/apache/spark/launcher/
// SparkSubmitOptionParser.java, parse) takes each option's value as the
// next argument whatever it is, and the first argument that is neither an
// option nor a switch as the primary resource: SparkSubmitArguments.scala's
// handleUnknown refuses one starting with '-', and from there on
// (handleExtraArgs) every argument is the application's. So the only
// values of a body that could become options are the primary resource,
// when it starts with '-', the arguments, when there is no primary
// resource (a Python or R body without a file) or when the main class
// is one for which spark-submit's launcher keeps parsing options
// (spark.SubmitMixedArgumentClasses); and a --conf key containing '=',
// which Spark splits at its first '=' (parseSparkConfProperty) into
// another key. Validation refuses such bodies first, naming the field
// (spec's validateSubmitInputs); this is the last line.
func checkArgs(in *Input) error {
	switch f := ptr.Deref(in.Spec.MainApplicationFile, ""); {
	case strings.HasPrefix(f, "-"):
		return fmt.Errorf("spark.mainApplicationFile %q starts with '-': spark-submit would read it as one of its options", f)
	case f == "" && !jvm(in.Spec):
		return fmt.Errorf("spark.mainApplicationFile is empty: spark-submit would read the arguments as its options")
	}
	if c := ptr.Deref(in.Spec.MainClass, ""); jvm(in.Spec) && slices.Contains(spark.SubmitMixedArgumentClasses, c) {
		return fmt.Errorf("spark.mainClass %s: spark-submit would read the application's arguments as its own options", c)
	}
	keys := slices.Concat(slices.Collect(maps.Keys(in.Conf)), slices.Collect(maps.Keys(in.AuthConf)))
	if in.Driver != nil {
		keys = slices.Concat(keys, slices.Collect(maps.Keys(in.Driver.Labels)), slices.Collect(maps.Keys(in.Driver.Annotations)))
	}
	for _, k := range keys {
		if strings.Contains(k, "=") {
			return fmt.Errorf("conf key or driver label/annotation %q contains '=': spark-submit would split it into another key", k)
		}
	}
	return nil
}

// Args is spark-submit's command line (without the program) for in; only
// for an in that checkArgs accepts does spark-submit read it as meant.
func Args(in *Input) []string {
	var args []string
	for _, o := range options {
		args = append(args, o(in)...)
	}
	return args
}

func masterOption(in *Input) []string {
	return []string{"--master", MasterPrefix + MasterURL(in.Master)}
}

func deployModeOption(*Input) []string {
	return []string{"--deploy-mode", spark.DeployModeCluster}
}

// nameOption is spark.app.name, which also names spark-submit's own
// ConfigMap and Service.
func nameOption(in *Input) []string {
	if name := in.Conf[spark.ConfAppName]; name != "" {
		return []string{"--name", name}
	}
	return nil
}

// classOption is the main class of a JVM application; spark-submit picks
// PythonRunner and RRunner itself from the primary resource.
func classOption(in *Input) []string {
	if !jvm(in.Spec) {
		return nil
	}
	if c := ptr.Deref(in.Spec.MainClass, ""); c != "" {
		return []string{"--class", c}
	}
	return nil
}

func proxyUserOption(in *Input) []string {
	if u := ptr.Deref(in.Spec.ProxyUser, ""); u != "" {
		return []string{"--proxy-user", u}
	}
	return nil
}

// confOption passes every key of the run's conf, sorted, except those
// other options set and those spark-submit sets itself (notPassed).
// spark.jars loses the primary resource, which spark-submit adds itself.
func confOption(in *Input) []string {
	var args []string
	for _, k := range slices.Sorted(maps.Keys(in.Conf)) {
		if _, skip := notPassed[k]; skip {
			continue
		}
		v := in.Conf[k]
		if k == spark.ConfJars {
			if v = withoutResource(v, ptr.Deref(in.Spec.MainApplicationFile, "")); v == "" {
				continue
			}
		}
		args = append(args, conf(k, v)...)
	}
	return args
}

// notPassed are the conf keys confOption leaves out, and why.
var notPassed = map[string]string{
	spark.ConfMaster:                      "--master",
	spark.ConfSubmitDeployMode:            "--deploy-mode",
	spark.ConfAppName:                     "--name",
	spark.ConfAppID:                       "spark-submit makes its own application id and overwrites the key",
	spark.ConfDriverHost:                  "spark-submit points it at its own driver Service and refuses it from the user",
	spark.ConfSubmitInDriver:              "spark-submit sets it for the driver",
	spark.ConfDriverPodTemplateFile:       "podTemplateOption",
	spark.ConfDriverPodTemplateContName:   "podTemplateOption",
	spark.ConfExecutorPodTemplateFile:     "podTemplateOption: a local file, which spark-submit ships in its own ConfigMap",
	spark.ConfExecutorPodTemplateContName: "podTemplateOption",
	ConfWaitAppCompletion:                 "submissionOption",
	ConfConnectionTimeout:                 "submissionOption",
	ConfRequestTimeout:                    "submissionOption",
	ConfAuthCACertFile:                    "authOption",
	ConfAuthOAuthTokenFile:                "authOption",
	ConfAuthClientCertFile:                "authOption",
	ConfAuthClientKeyFile:                 "authOption",
}

// driverMetadataOption passes the labels and annotations of the natively
// built driver (sparkplug's, the body's, the pod template's, a batch
// scheduler's) that the conf does not carry already. A key the conf has
// keeps the conf's value, which Spark reads as the native launcher does
// ({{APP_ID}} becomes spark-submit's application id). sparkplug's own keys,
// and the Spark operator's labels it sets, are always passed, and last:
// spark-submit takes the last --conf of a key, so nothing before them can
// make the driver pass for another run. The executors get the operator's
// labels from the conf (objects.OwnedConf), as the native launcher's do.
func driverMetadataOption(in *Input) []string {
	if in.Driver == nil {
		return nil
	}
	var args, own []string
	pass := func(prefix string, m map[string]string, skip func(string) bool) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			switch {
			case sparkplugKey(k), prefix == spark.ConfDriverLabelPrefix && spark.OperatorLabel(k):
				own = append(own, conf(prefix+k, m[k])...)
			case skip(k):
			default:
				if _, ok := in.Conf[prefix+k]; !ok {
					args = append(args, conf(prefix+k, m[k])...)
				}
			}
		}
	}
	pass(spark.ConfDriverLabelPrefix, in.Driver.Labels, spark.SparkOwnLabel)
	pass(spark.ConfDriverAnnotationPrefix, in.Driver.Annotations, func(string) bool { return false })
	return append(args, own...)
}

// sparkplugKey: a label or annotation key sparkplug sets for its
// bookkeeping (its domain, and the managed-by label).
func sparkplugKey(k string) bool {
	return k == spark.LabelManagedBy || strings.HasPrefix(k, spark.Domain+"/")
}

// podTemplateOption names the pod template files and their Spark
// containers.
func podTemplateOption(in *Input) []string {
	var args []string
	if in.DriverTemplateFile != "" {
		args = append(args, conf(spark.ConfDriverPodTemplateFile, in.DriverTemplateFile)...)
		args = append(args, conf(spark.ConfDriverPodTemplateContName, spark.DriverContainerName)...)
	}
	if in.ExecutorTemplateFile != "" {
		args = append(args, conf(spark.ConfExecutorPodTemplateFile, in.ExecutorTemplateFile)...)
		args = append(args, conf(spark.ConfExecutorPodTemplateContName, spark.ExecutorContainerName)...)
	}
	return args
}

// submissionOption makes spark-submit return once the driver exists (as
// the Spark operator does), and sets its timeouts against the API server.
func submissionOption(in *Input) []string {
	args := conf(ConfWaitAppCompletion, "false")
	if in.RequestTimeout > 0 {
		ms := strconv.FormatInt(in.RequestTimeout.Milliseconds(), 10)
		args = append(args, conf(ConfConnectionTimeout, ms)...)
		args = append(args, conf(ConfRequestTimeout, ms)...)
	}
	return args
}

func authOption(in *Input) []string {
	var args []string
	for _, k := range slices.Sorted(maps.Keys(in.AuthConf)) {
		args = append(args, conf(k, in.AuthConf[k])...)
	}
	return args
}

// mainApplicationFileOption is the primary resource, as the native driver
// gets it: spark-internal for a JVM application without one.
func mainApplicationFileOption(in *Input) []string {
	if f := ptr.Deref(in.Spec.MainApplicationFile, ""); f != "" {
		return []string{f}
	}
	if jvm(in.Spec) {
		return []string{NoResource}
	}
	return nil
}

func argumentsOption(in *Input) []string {
	return slices.Clone(in.Spec.Arguments)
}

func conf(k, v string) []string { return []string{"--conf", k + "=" + v} }

func jvm(s *spec.SparkApplicationSpec) bool {
	return s.Type != spec.TypePython && s.Type != spec.TypeR
}

// withoutResource removes the primary resource from a comma-separated
// list.
func withoutResource(list, resource string) string {
	var out []string
	for _, e := range strings.Split(list, ",") {
		if e = strings.TrimSpace(e); e != "" && e != resource {
			out = append(out, e)
		}
	}
	return strings.Join(out, ",")
}

// MasterURL is the API server's URL from a rest config's host: https://
// when it names no scheme, DefaultAPIServer when it is empty.
func MasterURL(host string) string {
	host = strings.TrimPrefix(strings.TrimSpace(host), MasterPrefix)
	switch {
	case host == "":
		return DefaultAPIServer
	case strings.Contains(host, "://"):
		return strings.TrimRight(host, "/")
	default:
		return "https://" + strings.TrimRight(host, "/")
	}
}
