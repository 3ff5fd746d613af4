package objects

import (
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/sparkplug-io/sparkplug/plugin/confvalue"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// Properties is the effective Spark conf of a run: what spark-submit would
// write into spark.properties for the body, and what the driver reads.
//
// It is built in three layers, each later one winning:
//
//  1. the conf spark-submit derives from its command line, as the Spark
//     operator passes each body field (submission.go: --conf per field,
//     --jars, --packages, ..., hadoopConf as spark.hadoop.*), and what
//     the operator sets before it submits (the Prometheus java agent,
//     the batch scheduler's keys, spark.ui.proxyBase under a UI
//     Ingress's path);
//  2. the body's sparkConf, so a user's explicit key beats a derived one;
//  3. the keys sparkplug owns because the run's identity depends on them
//     (OwnedConf, with clientConf's changes in client mode), and the
//     values Spark's own submission steps resolve (driver ports, the
//     default memory overhead factor).
func Properties(s *spec.SparkApplicationSpec, r Run) map[string]string {
	n := namesFor(s, r)
	c := map[string]string{}

	// spark-submit's command line.
	c[spark.ConfAppName] = n.AppName
	setList(c, spark.ConfJars, jars(s))
	setList(c, spark.ConfFiles, s.Deps.Files)
	setList(c, spark.ConfPyFiles, s.Deps.PyFiles)
	setList(c, spark.ConfArchives, s.Deps.Archives)
	setList(c, spark.ConfJarsPackages, s.Deps.Packages)
	setList(c, spark.ConfJarsExcludes, s.Deps.ExcludePackages)
	setList(c, spark.ConfJarsRepositories, s.Deps.Repositories)

	setStr(c, spark.ConfContainerImage, s.Image)
	setStr(c, spark.ConfDriverContainerImage, first(s.Driver.Image, s.Image))
	setStr(c, spark.ConfExecutorContainerImage, first(s.Executor.Image, s.Image))
	setStr(c, spark.ConfContainerImagePullPolicy, s.ImagePullPolicy)
	setList(c, spark.ConfContainerImagePullSecrets, s.ImagePullSecrets)
	setStr(c, spark.ConfPySparkMajorPythonVersion, s.PythonVersion)
	setStr(c, spark.ConfMemoryOverheadFactor, s.MemoryOverheadFactor)
	for k, v := range s.NodeSelector {
		c[spark.ConfNodeSelectorPrefix+k] = v
	}

	d := &s.Driver
	setInt(c, spark.ConfDriverCores, d.Cores)
	setStr(c, spark.ConfDriverRequestCores, d.CoreRequest)
	setStr(c, spark.ConfDriverLimitCores, d.CoreLimit)
	setSize(c, spark.ConfDriverMemory, d.Memory)
	setSize(c, spark.ConfDriverMemoryOverhead, d.MemoryOverhead)
	setStr(c, spark.ConfDriverServiceAccount, d.ServiceAccount)
	setStr(c, spark.ConfDriverExtraJavaOptions, d.JavaOptions)
	setStr(c, spark.ConfDriverMaster, d.KubernetesMaster)
	setPrefixed(c, spark.ConfDriverLabelPrefix, d.Labels)
	setPrefixed(c, spark.ConfDriverAnnotationPrefix, d.Annotations)
	setPrefixed(c, spark.ConfDriverServiceLabelPrefix, d.ServiceLabels)
	setPrefixed(c, spark.ConfDriverServiceAnnotationPrefix, d.ServiceAnnotations)
	setPrefixed(c, spark.ConfDriverEnvPrefix, d.EnvVars)
	for k, ref := range d.EnvSecretKeyRefs {
		c[spark.ConfDriverSecretKeyRefPrefix+k] = ref.Name + ":" + ref.Key
	}
	for _, sec := range d.Secrets {
		c[spark.ConfDriverSecretsPrefix+sec.Name] = sec.Path
		if env, file := secretEnv(sec.Type); env != "" {
			c[spark.ConfDriverEnvPrefix+env] = path.Join(sec.Path, file)
		}
	}

	e := &s.Executor
	setInt(c, spark.ConfExecutorInstances, e.Instances)
	setInt(c, spark.ConfExecutorCores, e.Cores)
	setStr(c, spark.ConfExecutorRequestCores, e.CoreRequest)
	setStr(c, spark.ConfExecutorLimitCores, e.CoreLimit)
	setSize(c, spark.ConfExecutorMemory, e.Memory)
	setSize(c, spark.ConfExecutorMemoryOverhead, e.MemoryOverhead)
	setStr(c, spark.ConfExecutorServiceAccount, e.ServiceAccount)
	setStr(c, spark.ConfExecutorExtraJavaOptions, e.JavaOptions)
	if e.DeleteOnTermination != nil {
		c[spark.ConfExecutorDeleteOnTerm] = strconv.FormatBool(*e.DeleteOnTermination)
	}
	setPrefixed(c, spark.ConfExecutorLabelPrefix, e.Labels)
	setPrefixed(c, spark.ConfExecutorAnnotationPrefix, e.Annotations)
	setPrefixed(c, spark.ConfExecutorEnvPrefix, e.EnvVars)
	for k, ref := range e.EnvSecretKeyRefs {
		c[spark.ConfExecutorSecretKeyRefPrefix+k] = ref.Name + ":" + ref.Key
	}
	for _, sec := range e.Secrets {
		c[spark.ConfExecutorSecretsPrefix+sec.Name] = sec.Path
		if env, file := secretEnv(sec.Type); env != "" {
			c[spark.ConfExecutorEnvPrefix+env] = path.Join(sec.Path, file)
		}
	}

	if da := s.DynamicAllocation; da != nil && da.Enabled {
		c[spark.ConfDynamicAllocationEnabled] = "true"
		setInt(c, spark.ConfDynamicAllocationInitialExecutors, da.InitialExecutors)
		setInt(c, spark.ConfDynamicAllocationMinExecutors, da.MinExecutors)
		setInt(c, spark.ConfDynamicAllocationMaxExecutors, da.MaxExecutors)
		// Kubernetes has no external shuffle service: the operator turns
		// shuffle tracking on unless the body says otherwise.
		c[spark.ConfShuffleTrackingEnabled] = strconv.FormatBool(da.ShuffleTrackingEnabled == nil || *da.ShuffleTrackingEnabled)
		if da.ShuffleTrackingTimeout != nil {
			c[spark.ConfShuffleTrackingTimeout] = strconv.FormatInt(*da.ShuffleTrackingTimeout, 10)
		}
	}
	for k, v := range s.HadoopConf {
		c[spark.ConfHadoopPrefix+k] = v
	}
	monitoringConf(c, s, r, n)
	schedulerConf(c, s, n)
	uiProxyConf(c, s, r, n)

	// The user's own conf.
	maps.Copy(c, s.SparkConf)
	addJavaAgent(c, s)

	// What sparkplug owns, and what Spark's submission steps resolve.
	maps.Copy(c, ownedConf(s, r, n))
	if s.Mode == spec.ModeClient {
		clientConf(c, s)
	}
	// DriverServiceFeatureStep writes the ports the Service exposes.
	if c[spark.ConfDriverPort] == "" {
		c[spark.ConfDriverPort] = strconv.Itoa(driverPort(c))
	}
	if c[spark.ConfBlockManagerPort] == "" {
		c[spark.ConfBlockManagerPort] = strconv.Itoa(blockManagerPort(c))
	}
	if _, ok := c[spark.ConfMemoryOverheadFactor]; !ok {
		// BasicDriverFeatureStep writes the default factor so that the
		// executors of a Python or R application get 0.4 too.
		c[spark.ConfMemoryOverheadFactor] = javaDouble(defaultOverheadFactor(s))
	}
	return c
}

// OwnedConf lists the conf keys sparkplug sets for every run, whatever the
// body's sparkConf says: the run's identity (names, application id,
// namespace), where the driver finds its conf and executor template,
// sparkplug's labels on the executors (so they land in the workflow's
// cache), and the Spark operator's labels sparkplug sets on them.
// Validation rejects them in sparkConf; Properties overwrites them
// regardless.
func OwnedConf() []string {
	keys := []string{
		spark.ConfMaster,
		spark.ConfSubmitDeployMode,
		spark.ConfAppID,
		spark.ConfNamespace,
		spark.ConfDriverPodName,
		spark.ConfExecutorPodNamePrefix,
		spark.ConfSubmitInDriver,
		spark.ConfDriverHost,
		spark.ConfAppResourceType,
		spark.ConfExecutorPodTemplateFile,
		spark.ConfExecutorPodTemplateContName,
	}
	for _, l := range sparkplugLabelKeys {
		keys = append(keys, spark.ConfExecutorLabelPrefix+l)
	}
	for _, l := range operatorLabelKeys {
		keys = append(keys, spark.ConfExecutorLabelPrefix+l)
	}
	return keys
}

// sparkplugLabelKeys are the labels sparkplug puts on everything it
// launches, executors included.
var sparkplugLabelKeys = []string{
	spark.LabelWorkflowUID,
	spark.LabelNode,
	spark.LabelTemplate,
	spark.LabelAttempt,
	spark.LabelManagedBy,
}

func ownedConf(s *spec.SparkApplicationSpec, r Run, n Names) map[string]string {
	c := map[string]string{
		spark.ConfMaster:                      spark.DefaultMaster,
		spark.ConfSubmitDeployMode:            spark.DeployModeCluster,
		spark.ConfAppID:                       n.AppID,
		spark.ConfNamespace:                   r.Workflow.Namespace,
		spark.ConfDriverPodName:               n.DriverPod,
		spark.ConfExecutorPodNamePrefix:       n.ExecutorPrefix,
		spark.ConfSubmitInDriver:              "true",
		spark.ConfDriverHost:                  n.Service + "." + r.Workflow.Namespace + ".svc",
		spark.ConfAppResourceType:             resourceType(s),
		spark.ConfExecutorPodTemplateFile:     path.Join(spark.PodTemplateDir, spark.PodTemplateFile),
		spark.ConfExecutorPodTemplateContName: spark.ExecutorContainerName,
	}
	for k, v := range sparkplugLabels(r) {
		c[spark.ConfExecutorLabelPrefix+k] = v
	}
	for k, v := range operatorLabels(n) {
		c[spark.ConfExecutorLabelPrefix+k] = v
	}
	return c
}

// operatorLabelKeys are the Spark operator's labels sparkplug puts on the
// driver and the executors (operatorLabels).
var operatorLabelKeys = []string{
	spark.LabelOperatorAppName,
	spark.LabelOperatorSubmissionID,
}

// operatorLabels are the Spark operator's labels of a run's pods, so that
// selectors written for the operator's pods (NetworkPolicies, PodMonitors)
// select them too: app-name, the SparkApplication's name in the operator,
// is the spark-app-name label's value (the operator's when the body's
// spark.app.name is that name: sparkplug convert leaves the body as it
// is), and submission-id, one per submission in the operator, is the
// attempt's application id. Never spark.LabelOperatorLaunchedBy: the operator would
// take the pods for its own (see its comment in package spark).
func operatorLabels(n Names) map[string]string {
	return map[string]string{
		spark.LabelOperatorAppName:      appNameLabel(n),
		spark.LabelOperatorSubmissionID: n.AppID,
	}
}

// appNameLabel is the spark-app-name label's value: spark.app.name made a
// label value as Spark makes it, or the prefix when nothing of it is left.
func appNameLabel(n Names) string {
	return valueOr(labelValue(n.AppName), n.Prefix)
}

// sparkplugLabels are sparkplug's labels of a run.
func sparkplugLabels(r Run) map[string]string {
	return map[string]string{
		spark.LabelWorkflowUID: r.Workflow.UID,
		spark.LabelNode:        NodeLabel(r.NodeID),
		spark.LabelTemplate:    r.TemplateKey,
		spark.LabelAttempt:     strconv.Itoa(attemptOf(r)),
		spark.LabelManagedBy:   spark.ManagedByValue,
	}
}

// jars is spark.jars: the body's jars and, for a JVM application, its main
// jar, which spark-submit adds so the executors load it too.
func jars(s *spec.SparkApplicationSpec) []string {
	out := slices.Clone(s.Deps.Jars)
	if jvm(s) && s.MainApplicationFile != nil && *s.MainApplicationFile != "" && !slices.Contains(out, *s.MainApplicationFile) {
		out = append(out, *s.MainApplicationFile)
	}
	return out
}

func jvm(s *spec.SparkApplicationSpec) bool {
	return s.Type != spec.TypePython && s.Type != spec.TypeR
}

func resourceType(s *spec.SparkApplicationSpec) string {
	switch s.Type {
	case spec.TypePython:
		return spark.ResourceTypePython
	case spec.TypeR:
		return spark.ResourceTypeR
	default: // Java, Scala; validation rejects anything else
		return spark.ResourceTypeJava
	}
}

// secretEnv is the environment variable and file name the Spark operator
// sets for a typed secret.
func secretEnv(t spec.SecretType) (env, file string) {
	switch t {
	case spec.SecretTypeGCPServiceAccount:
		return spark.EnvGoogleApplicationCredentials, spark.ServiceAccountJSONKeyFile
	case spec.SecretTypeHadoopDelegationToken:
		return spark.EnvHadoopTokenFileLocation, spark.HadoopDelegationTokenFile
	default: // Generic and unset: mounted only
		return "", ""
	}
}

// defaultOverheadFactor is Spark's memory overhead factor when neither
// spark.kubernetes.memoryOverheadFactor nor a role's own factor is set.
func defaultOverheadFactor(s *spec.SparkApplicationSpec) float64 {
	if jvm(s) {
		return spark.MemoryOverheadFactorJVM
	}
	return spark.MemoryOverheadFactorNonJVM
}

// javaDouble formats f as Java's Double.toString does for the factors Spark
// writes (0.1, 0.4, 1.0).
func javaDouble(f float64) string {
	out := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(out, ".") {
		out += ".0"
	}
	return out
}

// driverPort is spark.driver.port, or Spark's default.
func driverPort(c map[string]string) int {
	return intOr(c[spark.ConfDriverPort], spark.DriverPort)
}

// blockManagerPort is spark.driver.blockManager.port, else
// spark.blockManager.port, else Spark's default.
func blockManagerPort(c map[string]string) int {
	return intOr(c[spark.ConfBlockManagerPort], intOr(c[spark.ConfBlockManagerPortAll], spark.BlockManagerPort))
}

// uiPort is spark.ui.port, or Spark's default.
func uiPort(c map[string]string) int {
	return intOr(c[spark.ConfUIPort], spark.UIPort)
}

// intOr reads a port as Spark reads it (confvalue.Int); an unset or
// unreadable value gives def (Cluster rejects unreadable ports, see
// checkConf).
func intOr(s string, def int) int {
	n, err := confvalue.Int("", s)
	if err != nil || n <= 0 {
		return def
	}
	return int(n)
}

func first(ps ...*string) *string {
	for _, p := range ps {
		if p != nil && *p != "" {
			return p
		}
	}
	return nil
}

func setStr(c map[string]string, k string, v *string) {
	if v != nil && *v != "" {
		c[k] = *v
	}
}

// setSize sets a memory size in Spark's notation. The body may also write
// a Kubernetes quantity ("2Gi", "1.5Gi"), which Spark cannot read; it
// becomes whole MiB, rounded up ("2048m", "1536m").
func setSize(c map[string]string, k string, v *string) {
	if v == nil || *v == "" {
		return
	}
	c[k] = sparkSize(*v)
}

func sparkSize(v string) string {
	if _, err := byteStringAsMiB(v); err == nil {
		return v
	}
	// What validation read (spec.ParseMemory), written as Spark reads it:
	// trimmed ("1g\u00a0" is 1g to the field, nothing to Spark), or whole
	// MiB.
	if out, err := spec.SparkSize(v); err == nil {
		return out
	}
	return v // Cluster reports it
}

func setInt(c map[string]string, k string, v *int32) {
	if v != nil {
		c[k] = strconv.Itoa(int(*v))
	}
}

func setList(c map[string]string, k string, v []string) {
	if len(v) > 0 {
		c[k] = strings.Join(v, ",")
	}
}

func setPrefixed(c map[string]string, prefix string, m map[string]string) {
	for k, v := range m {
		c[prefix+k] = v
	}
}

// prefixed returns the entries of c under prefix, with the prefix removed.
func prefixed(c map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range c {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "" {
			out[rest] = v
		}
	}
	return out
}
