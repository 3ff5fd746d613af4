package submit

import "github.com/sparkplug-io/sparkplug/plugin/spark"

// Spark's words that only its submitting client reads: the rest of
// Spark's vocabulary is in plugin/spark.
const (
	// ConfWaitAppCompletion is always false: spark-submit returns once the
	// driver pod exists, and sparkplug follows the driver itself.
	ConfWaitAppCompletion = "spark.kubernetes.submission.waitAppCompletion"
	// ConfConnectionTimeout and ConfRequestTimeout are the submitting
	// client's timeouts against the API server, in milliseconds.
	ConfConnectionTimeout = "spark.kubernetes.submission.connectionTimeout"
	ConfRequestTimeout    = "spark.kubernetes.submission.requestTimeout"

	// The submitting client's credentials, as files (never inline values,
	// which would show in the process list).
	ConfAuthCACertFile     = "spark.kubernetes.authenticate.submission.caCertFile"
	ConfAuthOAuthTokenFile = "spark.kubernetes.authenticate.submission.oauthTokenFile"
	ConfAuthClientCertFile = "spark.kubernetes.authenticate.submission.clientCertFile"
	ConfAuthClientKeyFile  = "spark.kubernetes.authenticate.submission.clientKeyFile"

	// MasterPrefix starts spark-submit's --master for Kubernetes.
	MasterPrefix = "k8s://"
	// DefaultAPIServer is the API server's in-cluster address.
	DefaultAPIServer = "https://kubernetes.default.svc"
	// NoResource is the primary resource of a JVM application whose
	// classes are on the classpath already (SparkLauncher.NO_RESOURCE).
	NoResource = spark.NoResource

	// EnvRequestTimeout is the fabric8 Kubernetes client's request
	// timeout in milliseconds, which spark-submit's client also reads.
	EnvRequestTimeout = "KUBERNETES_REQUEST_TIMEOUT"
	// EnvKubeconfig names the kubeconfig spark-submit authenticates with.
	EnvKubeconfig = "KUBECONFIG"
	// EnvSparkHome is the Spark distribution spark-submit belongs to.
	EnvSparkHome = "SPARK_HOME"
	// EnvSubmitOpts are the spark-submit JVM's own options (spark-class).
	EnvSubmitOpts = "SPARK_SUBMIT_OPTS"

	// DriverTemplateFileName and ExecutorTemplateFileName are the files
	// written for one submission (Options.Command).
	DriverTemplateFileName   = "driver-pod-template.yaml"
	ExecutorTemplateFileName = "executor-pod-template.yaml"
)

// InheritedEnv are the variables of the plugin's own environment that
// spark-submit gets too, when set: what the launcher script and the JVM
// need. Nothing else of the plugin's environment reaches it.
var InheritedEnv = []string{"PATH", "HOME", "JAVA_HOME", "TMPDIR", "LANG", "LC_ALL", "TZ", "SPARK_CONF_DIR"}

// DefaultPath is PATH when the plugin's environment has none: the launcher
// script runs through /usr/bin/env bash.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
