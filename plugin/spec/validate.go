package spec

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkplug-io/sparkplug/plugin/confvalue"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Validate checks a defaulted spec (run SetDefaults first; Parse does) and
// returns every problem, each with its path rooted at "spark" and what would
// be valid. Fields listed in Unsupported are rejected as not supported yet.
// What depends on the plugin's own defaults (an Ingress's URL format may be
// the plugin's) is checked by ParseWith.
func Validate(s *SparkApplicationSpec) field.ErrorList {
	if s == nil {
		return field.ErrorList{field.Required(rootPath, emptyBodyDetail)}
	}
	errs := validateUnsupported(s)
	errs = append(errs, validateApplication(s)...)
	errs = append(errs, validateConf(s)...)
	errs = append(errs, validateDeps(rootPath.Child("deps"), &s.Deps)...)
	errs = append(errs, validateRestartPolicy(rootPath.Child("restartPolicy"), &s.RestartPolicy)...)
	errs = append(errs, validateVolumes(rootPath.Child("volumes"), s.Volumes)...)
	errs = append(errs, validateNodeSelectors(s)...)

	volumes := map[string]bool{}
	for _, v := range s.Volumes {
		volumes[v.Name] = true
	}
	errs = append(errs, validateDriver(rootPath.Child("driver"), &s.Driver, volumes)...)
	errs = append(errs, validateExecutor(rootPath.Child("executor"), &s.Executor, volumes, s.DynamicAllocationEnabled())...)
	errs = append(errs, validateDynamicAllocation(rootPath.Child("dynamicAllocation"), s.DynamicAllocation, s.Executor.Instances)...)
	errs = append(errs, validateSparkplug(rootPath.Child("sparkplug"), s)...)
	errs = append(errs, validateMonitoring(rootPath.Child("monitoring"), s)...)
	errs = append(errs, validateSparkUIOptions(rootPath.Child("sparkUIOptions"), s.SparkUIOptions)...)
	errs = append(errs, validateDriverIngressOptions(rootPath.Child("driverIngressOptions"), s.DriverIngressOptions)...)
	errs = append(errs, validateBatchScheduler(s)...)
	errs = append(errs, validateClientMode(s)...)
	return errs
}

func ptrOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

var (
	supportedTypes          = []ApplicationType{TypeJava, TypeScala, TypePython, TypeR}
	supportedPullPolicies   = []string{string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever)}
	supportedRestartTypes   = []RestartPolicyType{RestartNever, RestartOnFailure, RestartAlways, RestartOnInfrastructureFailure}
	supportedSecretTypes    = []SecretType{SecretTypeGCPServiceAccount, SecretTypeHadoopDelegationToken, SecretTypeGeneric}
	supportedPythonVersions = []string{"2", "3"}
	sparkVersionPattern     = regexp.MustCompile(`^[0-9]+(\.[0-9]+){1,2}([-+][0-9A-Za-z.+-]+)?$`)
)

func validateApplication(s *SparkApplicationSpec) field.ErrorList {
	var errs field.ErrorList
	p := rootPath

	switch {
	case s.Type == "":
		errs = append(errs, field.Required(p.Child("type"), "give Java, Scala, Python or R"))
	case !slices.Contains(supportedTypes, s.Type):
		errs = append(errs, field.NotSupported(p.Child("type"), s.Type, supportedTypes))
	}

	switch s.Mode {
	case ModeCluster, ModeClient:
	case "":
		errs = append(errs, field.Required(p.Child("mode"), "give cluster or client"))
	case ModeInClusterClient:
		errs = append(errs, field.Invalid(p.Child("mode"), s.Mode, "is not a deploy mode of spark-submit and the Spark operator rejects it too; use client, where the driver pod runs spark-submit --deploy-mode client, or cluster"))
	default:
		errs = append(errs, field.NotSupported(p.Child("mode"), s.Mode, []DeployMode{ModeCluster, ModeClient}))
	}

	file := ""
	if s.MainApplicationFile != nil {
		file = strings.TrimSpace(*s.MainApplicationFile)
	}
	if file == "" {
		errs = append(errs, field.Required(p.Child("mainApplicationFile"), "give the jar, Python or R file to run, e.g. local:///opt/spark/examples/jars/spark-examples.jar"))
	}
	hasClass := s.MainClass != nil && strings.TrimSpace(*s.MainClass) != ""
	switch s.Type {
	case TypeJava, TypeScala:
		if !hasClass {
			detail := fmt.Sprintf("a %s application needs the fully qualified class to run, e.g. org.apache.spark.examples.SparkPi", s.Type)
			switch strings.ToLower(path.Ext(file)) {
			case ".py":
				detail += "; mainApplicationFile is a Python file: set type: Python"
			case ".r":
				detail += "; mainApplicationFile is an R file: set type: R"
			}
			errs = append(errs, field.Required(p.Child("mainClass"), detail))
		}
	case TypePython, TypeR:
		if s.MainClass != nil {
			errs = append(errs, field.Forbidden(p.Child("mainClass"), fmt.Sprintf("a %s application has no main class; remove mainClass", s.Type)))
		}
	}

	driverImage := s.Driver.Image != nil && *s.Driver.Image != ""
	executorImage := s.Executor.Image != nil && *s.Executor.Image != ""
	if s.Image == nil || *s.Image == "" {
		if !driverImage || !executorImage {
			errs = append(errs, field.Required(p.Child("image"), "give the Spark container image, or both spark.driver.image and spark.executor.image"))
		}
	} else {
		errs = append(errs, validateImage(p.Child("image"), *s.Image)...)
	}
	if s.ImagePullPolicy != nil && !slices.Contains(supportedPullPolicies, *s.ImagePullPolicy) {
		errs = append(errs, field.NotSupported(p.Child("imagePullPolicy"), *s.ImagePullPolicy, supportedPullPolicies))
	}
	for i, name := range s.ImagePullSecrets {
		errs = append(errs, validateName(p.Child("imagePullSecrets").Index(i), name, validation.IsDNS1123Subdomain, "a Secret name")...)
	}

	if s.SparkVersion != "" && !sparkVersionPattern.MatchString(s.SparkVersion) {
		errs = append(errs, field.Invalid(p.Child("sparkVersion"), s.SparkVersion, "must be a Spark version like 3.5.1"))
	}
	if s.ProxyUser != nil && strings.TrimSpace(*s.ProxyUser) == "" {
		errs = append(errs, field.Invalid(p.Child("proxyUser"), *s.ProxyUser, "must name a user; remove proxyUser to submit as the driver's own user"))
	}
	if s.PythonVersion != nil && !slices.Contains(supportedPythonVersions, *s.PythonVersion) {
		errs = append(errs, field.NotSupported(p.Child("pythonVersion"), *s.PythonVersion, supportedPythonVersions))
	}
	if s.MemoryOverheadFactor != nil {
		// sparkplug passes it on as spark.kubernetes.memoryOverheadFactor:
		// read as Spark reads that key.
		f, err := confvalue.Double(spark.ConfMemoryOverheadFactor, *s.MemoryOverheadFactor)
		if err != nil || f < 0 || f >= 1 {
			errs = append(errs, field.Invalid(p.Child("memoryOverheadFactor"), *s.MemoryOverheadFactor, "must be a number from 0 up to (not including) 1, e.g. \"0.4\", as Spark requires of spark.kubernetes.memoryOverheadFactor"))
		}
	}
	if s.SparkConfigMap != nil {
		errs = append(errs, validateName(p.Child("sparkConfigMap"), *s.SparkConfigMap, validation.IsDNS1123Subdomain, "a ConfigMap name")...)
	}
	if s.HadoopConfigMap != nil {
		errs = append(errs, validateName(p.Child("hadoopConfigMap"), *s.HadoopConfigMap, validation.IsDNS1123Subdomain, "a ConfigMap name")...)
	}
	if s.TimeToLiveSeconds != nil && *s.TimeToLiveSeconds < 0 {
		errs = append(errs, field.Invalid(p.Child("timeToLiveSeconds"), *s.TimeToLiveSeconds, "must be 0 or more seconds"))
	}
	return errs
}

// javaOptionsKeys are the sparkConf keys of JVM options, by role
// (validateJavaOptions).
var javaOptionsKeys = map[string]string{
	spark.ConfDriverExtraJavaOptions:    spark.RoleDriver,
	"spark.driver.defaultJavaOptions":   spark.RoleDriver,
	spark.ConfExecutorExtraJavaOptions:  spark.RoleExecutor,
	"spark.executor.defaultJavaOptions": spark.RoleExecutor,
}

// ownedSparkConf are the sparkConf keys a user may not set, and why. The
// first group is what sparkplug sets for every run; the second is what the
// Spark operator rejects too (internal/webhook/sparkconf_validator.go), each
// pointing at the field that sets it.
var ownedSparkConf = map[string]string{
	spark.ConfDriverPodName:                                "sparkplug sets it: it names the driver pod after the workflow node so that it finds the pod again",
	spark.ConfNamespace:                                    "sparkplug sets it: the driver runs in the workflow's namespace",
	spark.ConfAppID:                                        "sparkplug sets it: it finds the pods of each run by the application id",
	spark.ConfExecutorPodNamePrefix:                        "sparkplug sets it from the driver pod name",
	spark.ConfMaster:                                       "sparkplug sets it to the cluster's API server; to use another, set spark.driver.kubernetesMaster",
	spark.ConfSubmitDeployMode:                             "sparkplug sets it from spark.mode; set spark.mode instead",
	spark.ConfSubmitInDriver:                               "sparkplug sets it: the driver pod runs spark-submit in client mode inside the pod",
	spark.ConfDriverHost:                                   "sparkplug sets it to the driver's headless Service",
	spark.ConfAppResourceType:                              "sparkplug sets it from spark.type",
	spark.ConfExecutorPodTemplateFile:                      "sparkplug generates the executor pod template from spark.executor; give a template as spark.executor.template",
	spark.ConfExecutorPodTemplateContName:                  "sparkplug generates the executor pod template from spark.executor and names its Spark container spark-kubernetes-executor",
	spark.ConfDriverPodTemplateFile:                        "sparkplug builds the driver pod itself; give a template as spark.driver.template",
	spark.ConfDriverPodTemplateContName:                    "sparkplug builds the driver pod itself; in spark.driver.template, name the Spark container spark-kubernetes-driver (or put it first)",
	spark.ConfExecutorLabelPrefix + spark.LabelWorkflowUID: "sparkplug labels the executors with their workflow; it finds them by it",
	spark.ConfExecutorLabelPrefix + spark.LabelNode:        "sparkplug labels the executors with their node",
	spark.ConfExecutorLabelPrefix + spark.LabelTemplate:    "sparkplug labels the executors with their template",
	spark.ConfExecutorLabelPrefix + spark.LabelAttempt:     "sparkplug labels the executors with their attempt",
	spark.ConfExecutorLabelPrefix + spark.LabelManagedBy:   "sparkplug marks the executors as its own",

	"spark.kubernetes.driver.master":                        "set spark.driver.kubernetesMaster instead",
	spark.ConfContainerImage:                                "set spark.image instead",
	spark.ConfDriverContainerImage:                          "set spark.driver.image instead",
	spark.ConfExecutorContainerImage:                        "set spark.executor.image instead",
	spark.ConfDriverServiceAccount:                          "set spark.driver.serviceAccount instead",
	spark.ConfExecutorServiceAccount:                        "set spark.executor.serviceAccount instead",
	"spark.kubernetes.authenticate.oauthToken":              "the Spark pods authenticate with their service account's token; grant that service account the permissions instead",
	"spark.kubernetes.authenticate.oauthTokenFile":          "the Spark pods authenticate with their service account's token; grant that service account the permissions instead",
	"spark.kubernetes.authenticate.driver.oauthToken":       "the Spark pods authenticate with their service account's token; grant that service account the permissions instead",
	"spark.kubernetes.authenticate.driver.oauthTokenFile":   "the Spark pods authenticate with their service account's token; grant that service account the permissions instead",
	"spark.kubernetes.authenticate.executor.oauthToken":     "the Spark pods authenticate with their service account's token; grant that service account the permissions instead",
	"spark.kubernetes.authenticate.executor.oauthTokenFile": "the Spark pods authenticate with their service account's token; grant that service account the permissions instead",
	// The driver writes this label on the executors it decommissions, a
	// label no check of the body's labels sees (it could be spark-role or
	// under sparkplug's or Argo's domain).
	"spark.kubernetes.executor.decommissionLabel":      "the driver would write this label on executors past sparkplug's check of reserved labels; sparkplug does not support it",
	"spark.kubernetes.executor.decommissionLabelValue": "the driver would write this label on executors past sparkplug's check of reserved labels; sparkplug does not support it",
}

// reservedMetadataConf says why a spark.kubernetes.{driver,executor}.
// {label,annotation}.<key> or spark.kubernetes.driver.service.
// {label,annotation}.<key> entry may not be set: <key> is a label Spark or
// sparkplug sets, or under sparkplug's or Argo's domain. Through these
// keys a body could otherwise write sparkplug's bookkeeping on its pods
// and Services and pass for another run; driver.serviceLabels and
// driver.serviceAnnotations are refused the same keys. A reserved label is
// named in the message: a message cuts a field path after 64 bytes of its
// key, and the Spark operator's keys make keys that long.
func reservedMetadataConf(k string) string {
	for _, prefix := range []string{
		spark.ConfDriverLabelPrefix, spark.ConfExecutorLabelPrefix, spark.ConfDriverAnnotationPrefix, spark.ConfExecutorAnnotationPrefix,
		spark.ConfDriverServiceLabelPrefix, spark.ConfDriverServiceAnnotationPrefix,
	} {
		key, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		if r, reserved := spark.ReservedLabels[key]; reserved && strings.HasSuffix(prefix, ".label.") {
			return "label " + key + ": " + r.Why + "; remove it"
		}
		return spark.ReservedKey(key)
	}
	return ""
}

// confKeyProblem says why k cannot be a key of sparkConf or hadoopConf,
// or "". spark-submit reads --conf k=v up to the first '='
// (SparkSubmitUtils.parseSparkConfProperty), and so do the -Dk=v options
// Spark gives executors: a key with '=' would set another key there, one
// sparkplug refuses ("spark.kubernetes.driver.pod.name=x"). A control
// character cannot be in an argument (NUL) or is no Spark key. The rest
// (':', spaces, '\', '#') spark.properties escapes as java.util.Properties
// does, and reads back as written.
func confKeyProblem(k string) string {
	switch {
	case strings.Contains(k, "="):
		return "must not contain '=': spark-submit would read the key up to it (--conf key=value), a different key; remove the '='"
	case strings.ContainsFunc(k, unicode.IsControl):
		return "must not contain control characters (newlines, tabs, NUL); no Spark configuration key has them"
	}
	return ""
}

func validateConf(s *SparkApplicationSpec) field.ErrorList {
	var errs field.ErrorList
	p := rootPath.Child("sparkConf")
	for _, k := range sortedKeys(s.SparkConf) {
		if strings.TrimSpace(k) == "" {
			errs = append(errs, field.Invalid(p.Key(k), k, "must be a Spark configuration key such as spark.executor.memory"))
			continue
		}
		if why := confKeyProblem(k); why != "" {
			errs = append(errs, field.Invalid(p.Key(k), k, why))
			continue
		}
		if why, owned := ownedSparkConf[k]; owned {
			errs = append(errs, field.Forbidden(p.Key(k), why))
		} else if why := reservedMetadataConf(k); why != "" {
			errs = append(errs, field.Forbidden(p.Key(k), why))
		} else if role, ok := javaOptionsKeys[k]; ok {
			if why := javaOptionsProblem(s.SparkConf[k], role); why != "" {
				errs = append(errs, field.Invalid(p.Key(k), s.SparkConf[k], why))
			}
		}
	}
	// The values sparkplug reads to size requests, quota and executor
	// counts: read as Spark reads them, or refused.
	for _, e := range confvalue.Problems(s.SparkConf) {
		errs = append(errs, field.Invalid(p.Key(e.Key), e.Value, e.Why))
	}
	p = rootPath.Child("hadoopConf")
	for _, k := range sortedKeys(s.HadoopConf) {
		switch {
		case strings.TrimSpace(k) == "":
			errs = append(errs, field.Invalid(p.Key(k), k, "must be a Hadoop configuration key such as fs.s3a.endpoint"))
		case confKeyProblem(k) != "":
			errs = append(errs, field.Invalid(p.Key(k), k, confKeyProblem(k)))
		case strings.HasPrefix(k, spark.ConfHadoopPrefix):
			errs = append(errs, field.Invalid(p.Key(k), k, fmt.Sprintf("sparkplug adds the %s prefix itself; write %q", spark.ConfHadoopPrefix, strings.TrimPrefix(k, spark.ConfHadoopPrefix))))
		}
	}
	return errs
}

func validateDeps(p *field.Path, d *Dependencies) field.ErrorList {
	var errs field.ErrorList
	lists := []struct {
		name  string
		items []string
	}{
		{"jars", d.Jars}, {"files", d.Files}, {"pyFiles", d.PyFiles}, {"repositories", d.Repositories}, {"archives", d.Archives},
	}
	for _, l := range lists {
		for i, item := range l.items {
			if strings.TrimSpace(item) == "" {
				errs = append(errs, field.Invalid(p.Child(l.name).Index(i), item, "must be a path or URI; remove the empty entry"))
			}
		}
	}
	// Spark's SparkSubmitUtils.extractMavenCoordinates reads '/' as ':'.
	for i, item := range d.Packages {
		if parts := strings.Split(strings.ReplaceAll(item, "/", ":"), ":"); len(parts) != 3 || slices.ContainsFunc(parts, isBlank) {
			errs = append(errs, field.Invalid(p.Child("packages").Index(i), item, "must be Maven coordinates groupId:artifactId:version, e.g. org.apache.spark:spark-avro_2.12:3.5.1"))
		}
	}
	for i, item := range d.ExcludePackages {
		if parts := strings.Split(item, ":"); len(parts) != 2 || slices.ContainsFunc(parts, isBlank) {
			errs = append(errs, field.Invalid(p.Child("excludePackages").Index(i), item, "must be groupId:artifactId, e.g. org.slf4j:slf4j-log4j12"))
		}
	}
	return errs
}

func validateRestartPolicy(p *field.Path, r *RestartPolicy) field.ErrorList {
	var errs field.ErrorList
	switch {
	case r.Type == "":
		errs = append(errs, field.Required(p.Child("type"), "give Never, OnFailure, OnInfrastructureFailure or Always"))
	case !slices.Contains(supportedRestartTypes, r.Type):
		errs = append(errs, field.NotSupported(p.Child("type"), r.Type, supportedRestartTypes))
	}
	if r.OnFailureRetries != nil && *r.OnFailureRetries < 0 {
		errs = append(errs, field.Invalid(p.Child("onFailureRetries"), *r.OnFailureRetries, "must be 0 or more"))
	}
	if r.OnSubmissionFailureRetries != nil && *r.OnSubmissionFailureRetries < 0 {
		errs = append(errs, field.Invalid(p.Child("onSubmissionFailureRetries"), *r.OnSubmissionFailureRetries, "must be 0 or more"))
	}
	if r.OnFailureRetryInterval != nil && *r.OnFailureRetryInterval < 1 {
		errs = append(errs, field.Invalid(p.Child("onFailureRetryInterval"), *r.OnFailureRetryInterval, "must be at least 1 second"))
	}
	if r.OnSubmissionFailureRetryInterval != nil && *r.OnSubmissionFailureRetryInterval < 1 {
		errs = append(errs, field.Invalid(p.Child("onSubmissionFailureRetryInterval"), *r.OnSubmissionFailureRetryInterval, "must be at least 1 second"))
	}
	return errs
}

func validateVolumes(p *field.Path, volumes []corev1.Volume) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, v := range volumes {
		vp := p.Index(i).Child("name")
		errs = append(errs, validateName(vp, v.Name, validation.IsDNS1123Label, "a volume name")...)
		if v.Name != "" && seen[v.Name] {
			errs = append(errs, field.Duplicate(vp, v.Name))
		}
		seen[v.Name] = true
	}
	return errs
}

func validateNodeSelectors(s *SparkApplicationSpec) field.ErrorList {
	errs := validateSelector(rootPath.Child("nodeSelector"), s.NodeSelector)
	// The Spark operator's validator rejects this too.
	if len(s.NodeSelector) > 0 && (len(s.Driver.NodeSelector) > 0 || len(s.Executor.NodeSelector) > 0) {
		errs = append(errs, field.Forbidden(rootPath.Child("nodeSelector"), "give the node selector either here or in spark.driver and spark.executor, not both"))
	}
	return errs
}

// sortErrs orders errors by field, so a map's iteration order never shows.
func sortErrs(errs field.ErrorList) field.ErrorList {
	slices.SortStableFunc(errs, func(a, b *field.Error) int { return strings.Compare(a.Field, b.Field) })
	return errs
}
