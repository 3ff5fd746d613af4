package spec

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

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
	lim, err := ParseQuantity(strings.TrimSpace(*limit))
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
	q, err := ParseQuantity(strings.TrimSpace(v))
	if refusedQuantity(err) {
		return field.ErrorList{field.Invalid(p, v, err.Error()+"; write it like 500m or 2")}
	}
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

// validateJavaOptions applies Spark's rules for JVM options: the heap size
// comes from memory, never from -Xmx (SparkSubmitCommandBuilder for the
// driver, SparkConf.validateSettings for the executors), and no Spark
// property is set there (Spark's configuration guide: "it is illegal to
// set Spark properties ... with this option"). The second is also a
// bypass: the driver's JVM loads -Dspark.* system properties into its
// conf, so a key sparkplug reserves but does not write itself would be
// set after all.
func validateJavaOptions(p *field.Path, opts *string, role string) field.ErrorList {
	if opts == nil {
		return nil
	}
	if why := javaOptionsProblem(*opts, role); why != "" {
		return field.ErrorList{field.Invalid(p, *opts, why)}
	}
	return nil
}

// sparkProperty finds a -Dspark.* option, also quoted.
var sparkProperty = regexp.MustCompile(`(^|[\s"'])-Dspark\.`)

func javaOptionsProblem(opts, role string) string {
	switch {
	case strings.Contains(opts, "-Xmx"):
		return fmt.Sprintf("must not set the heap size with -Xmx, which Spark rejects; set spark.%s.memory instead", role)
	case sparkProperty.MatchString(opts):
		return "must not set Spark properties with -Dspark.*, which Spark forbids in JVM options; set them in sparkConf"
	}
	return ""
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
