package spark

// SubmitMixedArgumentClasses are the main classes for which spark-submit's
// launcher (launcher/src/main/java/org/apache/spark/launcher/
// SparkSubmitCommandBuilder.java, OptionParser.handle, case CLASS) turns on
// allowsMixedArguments: it then keeps parsing every argument after the
// primary resource as one of its own options, so an application argument
// such as --conf or --deploy-mode would set spark-submit's. The spark-submit
// launcher refuses them.
var SubmitMixedArgumentClasses = []string{
	"org.apache.spark.repl.Main",
	"org.apache.spark.sql.hive.thriftserver.SparkSQLCLIDriver",
	"org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
}

// Conf keys that make spark-submit read a path of its own file system, or
// load classes into its own JVM, at submission (the spark-submit launcher
// refuses them: spark-submit runs in the plugin's pod).
const (
	// ConfFileUploadPath is where spark-submit uploads the local files of
	// the submission (KubernetesUtils.uploadFileUri).
	ConfFileUploadPath = "spark.kubernetes.file.upload.path"
	// ConfDriverFeatureSteps are classes the submitting client instantiates
	// to build the driver pod (KubernetesDriverBuilder).
	ConfDriverFeatureSteps = "spark.kubernetes.driver.pod.featureSteps"
	// ConfAuthSubmissionPrefix starts the submitting client's credentials,
	// which sparkplug sets (plugin/submit's authOption).
	ConfAuthSubmissionPrefix = "spark.kubernetes.authenticate.submission."
	// ConfKubernetesContext is the context of the submitting client's
	// kubeconfig (SparkKubernetesClientFactory); sparkplug gives
	// spark-submit a kubeconfig of one context, the plugin's own
	// connection (plugin/submit's Kubeconfig).
	ConfKubernetesContext = "spark.kubernetes.context"
	// ConfJarsIvy and ConfJarsIvySettings are the Ivy directory and
	// settings file spark-submit resolves packages with.
	ConfJarsIvy         = "spark.jars.ivy"
	ConfJarsIvySettings = "spark.jars.ivySettings"
)

// SubmitLocalFileConf are the conf keys whose value is always a file of
// the submitting process that spark-submit reads and ships to the driver:
// DriverKubernetesCredentialsFeatureStep puts the driver's credential
// files into a Secret, KerberosConfDriverFeatureStep the krb5.conf into a
// ConfigMap.
var SubmitLocalFileConf = []string{
	"spark.kubernetes.authenticate.driver.caCertFile",
	"spark.kubernetes.authenticate.driver.clientKeyFile",
	"spark.kubernetes.authenticate.driver.clientCertFile",
	"spark.kubernetes.authenticate.driver.oauthTokenFile",
	"spark.kubernetes.kerberos.krb5.path",
}

// SubmitKeytabConf name the Kerberos keytab: one in the image (local://)
// stays there, a local one of the submitting process is read by
// spark-submit and shipped in a Secret (KerberosConfDriverFeatureStep).
var SubmitKeytabConf = []string{"spark.kerberos.keytab", "spark.yarn.keytab"}

// NoResource is the primary resource of a JVM application whose classes
// are on the classpath already (SparkLauncher.NO_RESOURCE): no file.
const NoResource = "spark-internal"
