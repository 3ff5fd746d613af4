package spec

import (
	"fmt"
	"net"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

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

func validateSparkplug(p *field.Path, s *SparkApplicationSpec) field.ErrorList {
	o := s.Sparkplug
	if o == nil {
		return nil
	}
	var errs field.ErrorList
	if o.PendingTimeout != nil {
		d, err := time.ParseDuration(*o.PendingTimeout)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(p.Child("pendingTimeout"), *o.PendingTimeout, "must be a duration such as 90s or 10m"))
		case d <= 0:
			errs = append(errs, field.Invalid(p.Child("pendingTimeout"), *o.PendingTimeout, "must be positive; remove it for the default of "+DefaultPendingTimeout.String()))
		}
	}
	if o.Launcher != nil {
		switch *o.Launcher {
		case LauncherNative:
		case LauncherSparkSubmit:
			errs = append(errs, validateSparkSubmitLauncher(p.Child("launcher"), s)...)
		default:
			errs = append(errs, field.NotSupported(p.Child("launcher"), *o.Launcher, []string{LauncherNative, LauncherSparkSubmit}))
		}
	}
	errs = append(errs, validateUIIngressOptions(p.Child("uiIngress"), o.UIIngress)...)
	return errs
}

// validateSparkSubmitLauncher checks what the spark-submit launcher asks
// of a body: cluster mode (in client mode the driver pod runs spark-submit
// itself), and, as spark-submit picks PythonRunner or RRunner by the
// primary resource's extension, a Python or R file that has it.
func validateSparkSubmitLauncher(p *field.Path, s *SparkApplicationSpec) field.ErrorList {
	if s.Mode != "" && s.Mode != ModeCluster {
		return field.ErrorList{field.Invalid(p, LauncherSparkSubmit, "the spark-submit launcher submits in cluster mode; in client mode the driver pod runs spark-submit itself: remove sparkplug.launcher, or use mode cluster")}
	}
	var want []string
	switch s.Type {
	case TypePython:
		want = []string{".py"}
	case TypeR:
		want = []string{".R", ".r"}
	}
	if file := strings.TrimSpace(ptrOr(s.MainApplicationFile)); len(want) > 0 && file != "" && !hasAnySuffix(file, want) {
		return field.ErrorList{field.Invalid(rootPath.Child("mainApplicationFile"), file,
			fmt.Sprintf("with the spark-submit launcher, a %s application's file must end in %s: spark-submit picks the %s runner by the extension", s.Type, strings.Join(want, " or "), s.Type))}
	}
	return nil
}

func ptrOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Launcher is the body's sparkplug.launcher, or "" when it names none
// (the plugin's default applies).
func (s *SparkApplicationSpec) Launcher() string {
	if s.Sparkplug == nil || s.Sparkplug.Launcher == nil {
		return ""
	}
	return *s.Sparkplug.Launcher
}

// LauncherFor is what creates the body's driver on a plugin whose default
// launcher (serve --launcher) is pluginDefault: the body's own
// sparkplug.launcher; else native in client mode, whose driver pod runs
// spark-submit itself, so there is nothing for a submitting spark-submit
// to do (validation refuses a client-mode body that asks for one); else
// pluginDefault, native when empty.
func (s *SparkApplicationSpec) LauncherFor(pluginDefault string) string {
	switch {
	case s.Launcher() != "":
		return s.Launcher()
	case s.Mode == ModeClient, pluginDefault == "":
		return LauncherNative
	default:
		return pluginDefault
	}
}

// DefaultPendingTimeout is how long a driver may wait to start when the
// body sets no sparkplug.pendingTimeout: long enough for a large image
// pull or a node autoscaler, short enough that a stuck step is seen the
// same hour.
const DefaultPendingTimeout = 10 * time.Minute

// PendingTimeout is the body's pending timeout, or the default.
func (s *SparkApplicationSpec) PendingTimeout() time.Duration {
	if s.Sparkplug != nil && s.Sparkplug.PendingTimeout != nil {
		if d, err := time.ParseDuration(*s.Sparkplug.PendingTimeout); err == nil && d > 0 {
			return d
		}
	}
	return DefaultPendingTimeout
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
		f, err := strconv.ParseFloat(strings.TrimSpace(*s.MemoryOverheadFactor), 64)
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
}

func validateConf(s *SparkApplicationSpec) field.ErrorList {
	var errs field.ErrorList
	p := rootPath.Child("sparkConf")
	for _, k := range sortedKeys(s.SparkConf) {
		if strings.TrimSpace(k) == "" {
			errs = append(errs, field.Invalid(p.Key(k), k, "must be a Spark configuration key such as spark.executor.memory"))
			continue
		}
		if why, owned := ownedSparkConf[k]; owned {
			errs = append(errs, field.Forbidden(p.Key(k), why))
		}
	}
	p = rootPath.Child("hadoopConf")
	for _, k := range sortedKeys(s.HadoopConf) {
		switch {
		case strings.TrimSpace(k) == "":
			errs = append(errs, field.Invalid(p.Key(k), k, "must be a Hadoop configuration key such as fs.s3a.endpoint"))
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

// validatePod checks what the driver and the executors have in common.
func validatePod(p *field.Path, role string, s *SparkPodSpec, volumes map[string]bool) field.ErrorList {
	var errs field.ErrorList
	if s.Cores != nil && *s.Cores < 1 {
		errs = append(errs, field.Invalid(p.Child("cores"), *s.Cores, "must be at least 1; for part of a CPU set coreRequest, e.g. 500m"))
	}
	if s.CoreLimit != nil {
		errs = append(errs, validateCPU(p.Child("coreLimit"), *s.CoreLimit)...)
	}
	if s.Memory != nil {
		errs = append(errs, validateMemory(p.Child("memory"), *s.Memory, ParseMemory, false)...)
	}
	if s.MemoryOverhead != nil {
		errs = append(errs, validateMemory(p.Child("memoryOverhead"), *s.MemoryOverhead, ParseMemory, true)...)
	}
	if s.MemoryLimit != nil {
		errs = append(errs, validateMemory(p.Child("memoryLimit"), *s.MemoryLimit, ParseMemoryLimit, false)...)
	}
	if s.GPU != nil {
		if msgs := validation.IsQualifiedName(s.GPU.Name); s.GPU.Name == "" || len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("gpu", "name"), s.GPU.Name, "must be a resource name such as nvidia.com/gpu"))
		}
		if s.GPU.Quantity < 1 {
			errs = append(errs, field.Invalid(p.Child("gpu", "quantity"), s.GPU.Quantity, "must be at least 1"))
		}
	}
	if s.Image != nil {
		errs = append(errs, validateImage(p.Child("image"), *s.Image)...)
	}
	for i, c := range s.ConfigMaps {
		cp := p.Child("configMaps").Index(i)
		errs = append(errs, validateName(cp.Child("name"), c.Name, validation.IsDNS1123Subdomain, "a ConfigMap name")...)
		errs = append(errs, validateMountPath(cp.Child("path"), c.Path)...)
	}
	for i, sec := range s.Secrets {
		sp := p.Child("secrets").Index(i)
		errs = append(errs, validateName(sp.Child("name"), sec.Name, validation.IsDNS1123Subdomain, "a Secret name")...)
		errs = append(errs, validateMountPath(sp.Child("path"), sec.Path)...)
		switch {
		case sec.Type == "":
			errs = append(errs, field.Required(sp.Child("secretType"), "give Generic, GCPServiceAccount or HadoopDelegationToken"))
		case !slices.Contains(supportedSecretTypes, sec.Type):
			errs = append(errs, field.NotSupported(sp.Child("secretType"), sec.Type, supportedSecretTypes))
		}
	}
	errs = append(errs, validateEnv(p, s)...)
	errs = append(errs, validateLabels(p.Child("labels"), s.Labels)...)
	errs = append(errs, validateAnnotations(p.Child("annotations"), s.Annotations)...)
	for i, m := range s.VolumeMounts {
		mp := p.Child("volumeMounts").Index(i)
		switch {
		case m.Name == "":
			errs = append(errs, field.Required(mp.Child("name"), "give the name of a volume in spark.volumes"))
		case !volumes[m.Name]:
			errs = append(errs, &field.Error{Type: field.ErrorTypeNotFound, Field: mp.Child("name").String(), BadValue: m.Name,
				Detail: fmt.Sprintf("add a volume named %q to spark.volumes", m.Name)})
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(mp.Child("mountPath"), "give the path to mount the volume at"))
		}
	}
	errs = append(errs, validateTolerations(p.Child("tolerations"), s.Tolerations)...)
	if s.SchedulerName != nil {
		errs = append(errs, validateName(p.Child("schedulerName"), *s.SchedulerName, validation.IsDNS1123Subdomain, "a scheduler name")...)
	}
	errs = append(errs, validateContainers(p, role, s.InitContainers, s.Sidecars)...)
	errs = append(errs, validateSelector(p.Child("nodeSelector"), s.NodeSelector)...)
	if s.TerminationGracePeriodSeconds != nil && *s.TerminationGracePeriodSeconds < 0 {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), *s.TerminationGracePeriodSeconds, "must be 0 or more seconds"))
	}
	if s.ServiceAccount != nil {
		errs = append(errs, validateName(p.Child("serviceAccount"), *s.ServiceAccount, validation.IsDNS1123Subdomain, "a ServiceAccount name")...)
	}
	for i, h := range s.HostAliases {
		if net.ParseIP(h.IP) == nil {
			errs = append(errs, field.Invalid(p.Child("hostAliases").Index(i).Child("ip"), h.IP, "must be an IP address"))
		}
	}
	if s.RuntimeClassName != nil {
		errs = append(errs, validateName(p.Child("runtimeClassName"), *s.RuntimeClassName, validation.IsDNS1123Subdomain, "a RuntimeClass name")...)
	}
	return errs
}

func validateDriver(p *field.Path, d *DriverSpec, volumes map[string]bool) field.ErrorList {
	errs := validatePod(p, spark.RoleDriver, &d.SparkPodSpec, volumes)
	errs = append(errs, validateTemplate(p, spark.RoleDriver, &d.SparkPodSpec, volumes)...)
	errs = append(errs, validatePorts(p.Child("ports"), d.Ports)...)
	errs = append(errs, validateCoreRequest(p, d.CoreRequest, d.Cores, d.CoreLimit)...)
	errs = append(errs, validateJavaOptions(p.Child("javaOptions"), d.JavaOptions, spark.RoleDriver)...)
	if d.KubernetesMaster != nil && strings.TrimSpace(*d.KubernetesMaster) == "" {
		errs = append(errs, field.Invalid(p.Child("kubernetesMaster"), *d.KubernetesMaster, "must be the API server URL, e.g. https://kubernetes.default.svc; remove it to use the cluster's own"))
	}
	errs = append(errs, validateLabels(p.Child("serviceLabels"), d.ServiceLabels)...)
	errs = append(errs, validateAnnotations(p.Child("serviceAnnotations"), d.ServiceAnnotations)...)
	if d.PriorityClassName != nil {
		errs = append(errs, validateName(p.Child("priorityClassName"), *d.PriorityClassName, validation.IsDNS1123Subdomain, "a PriorityClass name")...)
	}
	return errs
}

func validateExecutor(p *field.Path, e *ExecutorSpec, volumes map[string]bool, dynamic bool) field.ErrorList {
	errs := validatePod(p, spark.RoleExecutor, &e.SparkPodSpec, volumes)
	errs = append(errs, validateTemplate(p, spark.RoleExecutor, &e.SparkPodSpec, volumes)...)
	errs = append(errs, validatePorts(p.Child("ports"), e.Ports)...)
	if e.Instances != nil {
		switch {
		case dynamic && *e.Instances < 0:
			errs = append(errs, field.Invalid(p.Child("instances"), *e.Instances, "must be 0 or more"))
		case !dynamic && *e.Instances < 1:
			errs = append(errs, field.Invalid(p.Child("instances"), *e.Instances, "must be at least 1; 0 executors is allowed only with spark.dynamicAllocation.enabled"))
		}
	}
	errs = append(errs, validateCoreRequest(p, e.CoreRequest, e.Cores, e.CoreLimit)...)
	errs = append(errs, validateJavaOptions(p.Child("javaOptions"), e.JavaOptions, spark.RoleExecutor)...)
	if e.PriorityClassName != nil {
		errs = append(errs, validateName(p.Child("priorityClassName"), *e.PriorityClassName, validation.IsDNS1123Subdomain, "a PriorityClass name")...)
	}
	return errs
}

// validateDynamicAllocation follows Spark's own checks of the executor
// bounds (ExecutorAllocationManager.validateSettings): 0 <= min <= max,
// max > 0, and the initial count, max(min, initial, instances), <= max.
func validateDynamicAllocation(p *field.Path, d *DynamicAllocation, instances *int32) field.ErrorList {
	if d == nil || !d.Enabled {
		return nil
	}
	var errs field.ErrorList
	minOK, maxOK := true, true
	if d.MinExecutors != nil && *d.MinExecutors < 0 {
		errs = append(errs, field.Invalid(p.Child("minExecutors"), *d.MinExecutors, "must be 0 or more"))
		minOK = false
	}
	if d.MaxExecutors != nil && *d.MaxExecutors < 1 {
		errs = append(errs, field.Invalid(p.Child("maxExecutors"), *d.MaxExecutors, "must be at least 1"))
		maxOK = false
	}
	if d.InitialExecutors != nil && *d.InitialExecutors < 0 {
		errs = append(errs, field.Invalid(p.Child("initialExecutors"), *d.InitialExecutors, "must be 0 or more"))
	}
	if d.ShuffleTrackingTimeout != nil && *d.ShuffleTrackingTimeout < 0 {
		errs = append(errs, field.Invalid(p.Child("shuffleTrackingTimeout"), *d.ShuffleTrackingTimeout, "must be 0 or more milliseconds"))
	}
	if minOK && maxOK && d.MinExecutors != nil && d.MaxExecutors != nil && *d.MinExecutors > *d.MaxExecutors {
		errs = append(errs, field.Invalid(p.Child("minExecutors"), *d.MinExecutors, fmt.Sprintf("must not exceed maxExecutors (%d)", *d.MaxExecutors)))
	}
	if maxOK && d.MaxExecutors != nil {
		var initial int32
		for _, v := range []*int32{d.MinExecutors, d.InitialExecutors, instances} {
			if v != nil && *v > initial {
				initial = *v
			}
		}
		if initial > *d.MaxExecutors {
			errs = append(errs, field.Invalid(p.Child("maxExecutors"), *d.MaxExecutors, fmt.Sprintf("must be at least the initial number of executors, the largest of minExecutors, initialExecutors and spark.executor.instances (%d)", initial)))
		}
	}
	return errs
}

func validateCoreRequest(p *field.Path, request *string, cores *int32, limit *string) field.ErrorList {
	var errs field.ErrorList
	var req *resource.Quantity
	if request != nil {
		if errs = validateCPU(p.Child("coreRequest"), *request); len(errs) == 0 {
			q := resource.MustParse(strings.TrimSpace(*request))
			req = &q
		}
	} else if cores != nil && *cores >= 1 {
		req = resource.NewQuantity(int64(*cores), resource.DecimalSI)
	}
	if limit == nil || req == nil {
		return errs
	}
	lim, err := resource.ParseQuantity(strings.TrimSpace(*limit))
	if err != nil || lim.Sign() <= 0 || req.Cmp(lim) <= 0 {
		return errs
	}
	if request != nil {
		errs = append(errs, field.Invalid(p.Child("coreRequest"), *request, fmt.Sprintf("must not exceed coreLimit (%s)", *limit)))
	} else {
		errs = append(errs, field.Invalid(p.Child("coreLimit"), *limit, fmt.Sprintf("must be at least cores (%d), the CPU the pod requests when coreRequest is unset", *cores)))
	}
	return errs
}

func validateCPU(p *field.Path, v string) field.ErrorList {
	q, err := resource.ParseQuantity(strings.TrimSpace(v))
	if err != nil {
		return field.ErrorList{field.Invalid(p, v, "is not a Kubernetes CPU quantity like 500m or 2")}
	}
	if q.Sign() <= 0 {
		return field.ErrorList{field.Invalid(p, v, "must be more than 0 CPU")}
	}
	return nil
}

func validateMemory(p *field.Path, v string, parse func(string) (int64, error), zeroOK bool) field.ErrorList {
	n, err := parse(v)
	if err != nil {
		return field.ErrorList{field.Invalid(p, v, err.Error())}
	}
	if n == 0 && !zeroOK {
		return field.ErrorList{field.Invalid(p, v, "must be more than 0 bytes")}
	}
	return nil
}

// validateJavaOptions applies Spark's rule: the heap size comes from memory,
// never from -Xmx (SparkSubmitCommandBuilder for the driver,
// SparkConf.validateSettings for the executors).
func validateJavaOptions(p *field.Path, opts *string, role string) field.ErrorList {
	if opts == nil || !strings.Contains(*opts, "-Xmx") {
		return nil
	}
	return field.ErrorList{field.Invalid(p, *opts, fmt.Sprintf("must not set the heap size with -Xmx, which Spark rejects; set spark.%s.memory instead", role))}
}

func validateImage(p *field.Path, image string) field.ErrorList {
	if strings.TrimSpace(image) == "" || strings.ContainsAny(image, " \t\r\n") {
		return field.ErrorList{field.Invalid(p, image, "must be a container image reference such as docker.io/apache/spark:3.5.1")}
	}
	return nil
}

func validateMountPath(p *field.Path, v string) field.ErrorList {
	switch {
	case v == "":
		return field.ErrorList{field.Required(p, "give the absolute path to mount at, e.g. /etc/secrets")}
	case !strings.HasPrefix(v, "/"):
		return field.ErrorList{field.Invalid(p, v, "must be an absolute path, e.g. /etc/secrets")}
	}
	return nil
}

func validateEnv(p *field.Path, s *SparkPodSpec) field.ErrorList {
	var errs field.ErrorList
	for i, e := range s.Env {
		ep := p.Child("env").Index(i)
		errs = append(errs, validateEnvName(ep.Child("name"), e.Name)...)
		if e.Value != "" && e.ValueFrom != nil {
			errs = append(errs, field.Invalid(ep.Child("valueFrom"), field.OmitValueType{}, "give value or valueFrom, not both"))
		}
	}
	for _, k := range sortedKeys(s.EnvVars) {
		errs = append(errs, validateEnvName(p.Child("envVars").Key(k), k)...)
	}
	for _, k := range sortedKeys(s.EnvSecretKeyRefs) {
		kp := p.Child("envSecretKeyRefs").Key(k)
		errs = append(errs, validateEnvName(kp, k)...)
		ref := s.EnvSecretKeyRefs[k]
		errs = append(errs, validateName(kp.Child("name"), ref.Name, validation.IsDNS1123Subdomain, "a Secret name")...)
		if ref.Key == "" {
			errs = append(errs, field.Required(kp.Child("key"), "name the key of the Secret to read"))
		}
	}
	for i, e := range s.EnvFrom {
		ep := p.Child("envFrom").Index(i)
		switch {
		case (e.ConfigMapRef == nil) == (e.SecretRef == nil):
			errs = append(errs, field.Invalid(ep, field.OmitValueType{}, "give exactly one of configMapRef and secretRef"))
		case e.ConfigMapRef != nil:
			errs = append(errs, validateName(ep.Child("configMapRef", "name"), e.ConfigMapRef.Name, validation.IsDNS1123Subdomain, "a ConfigMap name")...)
		case e.SecretRef != nil:
			errs = append(errs, validateName(ep.Child("secretRef", "name"), e.SecretRef.Name, validation.IsDNS1123Subdomain, "a Secret name")...)
		}
		if e.Prefix != "" {
			if msgs := validation.IsEnvVarName(e.Prefix); len(msgs) > 0 {
				errs = append(errs, field.Invalid(ep.Child("prefix"), e.Prefix, strings.Join(msgs, "; ")))
			}
		}
	}
	return errs
}

func validateEnvName(p *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "give the variable's name")}
	}
	if msgs := validation.IsEnvVarName(name); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(p, name, strings.Join(msgs, "; "))}
	}
	return nil
}

// reservedLabels are the label keys sparkplug or Spark set on Spark pods.
var reservedLabels = map[string]string{
	spark.LabelRole:        "sparkplug sets it to driver or executor, and Spark finds its executors by it",
	spark.LabelAppSelector: "sparkplug sets it to the application id, and Spark finds its executors by it",
	spark.LabelAppName:     "sparkplug sets it to the application name",
	spark.LabelExecID:      "Spark sets it to each executor's id and finds the executors by it",
	spark.LabelVersion:     "Spark sets it to the Spark version",
	spark.LabelManagedBy:   "sparkplug sets it to " + spark.ManagedByValue + " on what it creates",
}

// reservedDomain says why a label or annotation key is not the user's, by
// its prefix domain (or a subdomain of it).
func reservedDomain(key string) string {
	prefix, _, found := strings.Cut(key, "/")
	if !found {
		return ""
	}
	in := func(domain string) bool { return prefix == domain || strings.HasSuffix(prefix, "."+domain) }
	switch {
	case in(spark.Domain):
		return "the " + spark.Domain + "/ keys are sparkplug's bookkeeping; choose another prefix"
	case in("workflows.argoproj.io"):
		return "the workflows.argoproj.io/ keys are Argo's, and its controller would take the Spark pods for workflow pods; choose another prefix"
	}
	return ""
}

func validateLabels(p *field.Path, labels map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(labels) {
		kp := p.Key(k)
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			errs = append(errs, field.Invalid(kp, k, "is not a valid label key: "+strings.Join(msgs, "; ")))
			continue
		}
		if why, ok := reservedLabels[k]; ok {
			errs = append(errs, field.Forbidden(kp, why+"; remove it"))
			continue
		}
		if why := reservedDomain(k); why != "" {
			errs = append(errs, field.Forbidden(kp, why))
			continue
		}
		if msgs := validation.IsValidLabelValue(labels[k]); len(msgs) > 0 {
			errs = append(errs, field.Invalid(kp, labels[k], "is not a valid label value: "+strings.Join(msgs, "; ")))
		}
	}
	return errs
}

// totalAnnotationSize is Kubernetes' limit on the size of all annotations
// of an object.
const totalAnnotationSize = 256 << 10

func validateAnnotations(p *field.Path, annotations map[string]string) field.ErrorList {
	var errs field.ErrorList
	size := 0
	for _, k := range sortedKeys(annotations) {
		size += len(k) + len(annotations[k])
		kp := p.Key(k)
		if msgs := validation.IsQualifiedName(strings.ToLower(k)); len(msgs) > 0 {
			errs = append(errs, field.Invalid(kp, k, "is not a valid annotation key: "+strings.Join(msgs, "; ")))
			continue
		}
		if why := reservedDomain(k); why != "" {
			errs = append(errs, field.Forbidden(kp, why))
		}
	}
	if size > totalAnnotationSize {
		errs = append(errs, field.TooLong(p, field.OmitValueType{}, totalAnnotationSize))
	}
	return errs
}

func validateSelector(p *field.Path, sel map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(sel) {
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Key(k), k, "is not a valid label key: "+strings.Join(msgs, "; ")))
			continue
		}
		if msgs := validation.IsValidLabelValue(sel[k]); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Key(k), sel[k], "is not a valid label value: "+strings.Join(msgs, "; ")))
		}
	}
	return errs
}

var (
	supportedTolerationOperators = []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}
	supportedTaintEffects        = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}
)

// validateTolerations applies the rules of Kubernetes' pod validation.
func validateTolerations(p *field.Path, tolerations []corev1.Toleration) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		tp := p.Index(i)
		if t.Key != "" {
			if msgs := validation.IsQualifiedName(t.Key); len(msgs) > 0 {
				errs = append(errs, field.Invalid(tp.Child("key"), t.Key, strings.Join(msgs, "; ")))
			}
		} else if t.Operator != corev1.TolerationOpExists {
			errs = append(errs, field.Invalid(tp.Child("operator"), t.Operator, "must be Exists when key is empty, to tolerate every taint"))
		}
		switch t.Operator {
		case "", corev1.TolerationOpEqual:
			if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
				errs = append(errs, field.Invalid(tp.Child("value"), t.Value, strings.Join(msgs, "; ")))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(tp.Child("value"), t.Value, "must be empty when operator is Exists"))
			}
		default:
			errs = append(errs, field.NotSupported(tp.Child("operator"), t.Operator, supportedTolerationOperators))
		}
		if t.Effect != "" && !slices.Contains(supportedTaintEffects, t.Effect) {
			errs = append(errs, field.NotSupported(tp.Child("effect"), t.Effect, supportedTaintEffects))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(tp.Child("effect"), t.Effect, "must be NoExecute when tolerationSeconds is set"))
		}
	}
	return errs
}

// validateContainers checks the init containers and sidecars: each needs a
// unique DNS-label name that is not the Spark container's, and an image.
func validateContainers(p *field.Path, role string, inits, sidecars []corev1.Container) field.ErrorList {
	sparkContainer := spark.DriverContainerName
	if role == spark.RoleExecutor {
		sparkContainer = spark.ExecutorContainerName
	}
	var errs field.ErrorList
	seen := map[string]bool{}
	check := func(cp *field.Path, c corev1.Container) {
		np := cp.Child("name")
		errs = append(errs, validateName(np, c.Name, validation.IsDNS1123Label, "a container name")...)
		switch {
		case c.Name == sparkContainer:
			errs = append(errs, field.Invalid(np, c.Name, "is the Spark container's name; choose another"))
		case c.Name != "" && seen[c.Name]:
			errs = append(errs, field.Duplicate(np, c.Name))
		}
		seen[c.Name] = true
		if strings.TrimSpace(c.Image) == "" {
			errs = append(errs, field.Required(cp.Child("image"), "give the container image"))
		}
	}
	for i, c := range inits {
		check(p.Child("initContainers").Index(i), c)
	}
	for i, c := range sidecars {
		check(p.Child("sidecars").Index(i), c)
	}
	return errs
}

// validateName checks a Kubernetes object name with one of the
// k8s.io/apimachinery validators.
func validateName(p *field.Path, name string, is func(string) []string, what string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "give "+what)}
	}
	if msgs := is(name); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(p, name, "is not "+what+": "+strings.Join(msgs, "; "))}
	}
	return nil
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// validatePorts checks extra container ports; Spark's own ports (driver
// RPC, block manager, UI) are always added and must not be repeated.
func validatePorts(p *field.Path, ports []Port) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for i, port := range ports {
		pp := p.Index(i)
		for _, msg := range validation.IsValidPortName(port.Name) {
			errs = append(errs, field.Invalid(pp.Child("name"), port.Name, msg))
		}
		if names[port.Name] {
			errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
		}
		names[port.Name] = true
		for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
			errs = append(errs, field.Invalid(pp.Child("containerPort"), port.ContainerPort, msg))
		}
		switch port.ContainerPort {
		case spark.DriverPort, spark.BlockManagerPort, spark.UIPort:
			errs = append(errs, field.Invalid(pp.Child("containerPort"), port.ContainerPort, "is one of Spark's own ports (7078, 7079, 4040), which sparkplug always opens; choose another"))
		}
		switch port.Protocol {
		case "", "TCP", "UDP", "SCTP":
		default:
			errs = append(errs, field.NotSupported(pp.Child("protocol"), port.Protocol, []string{"TCP", "UDP", "SCTP"}))
		}
	}
	return errs
}
