package spec

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// SparkApplicationSpec is the body of a `plugin: {spark: ...}` step. Its JSON
// field names are those of the Spark operator's SparkApplication v1beta2
// `spec`, so a user pastes the YAML they already have. Decoding is strict: a
// field that is not listed here is an error naming its path.
type SparkApplicationSpec struct {
	Type                  ApplicationType              `json:"type,omitempty"`
	SparkVersion          string                       `json:"sparkVersion,omitempty"`
	Mode                  DeployMode                   `json:"mode,omitempty"`
	ProxyUser             *string                      `json:"proxyUser,omitempty"`
	Image                 *string                      `json:"image,omitempty"`
	ImagePullPolicy       *string                      `json:"imagePullPolicy,omitempty"`
	ImagePullSecrets      []string                     `json:"imagePullSecrets,omitempty"`
	MainClass             *string                      `json:"mainClass,omitempty"`
	MainApplicationFile   *string                      `json:"mainApplicationFile,omitempty"`
	Arguments             []string                     `json:"arguments,omitempty"`
	SparkConf             map[string]string            `json:"sparkConf,omitempty"`
	HadoopConf            map[string]string            `json:"hadoopConf,omitempty"`
	SparkConfigMap        *string                      `json:"sparkConfigMap,omitempty"`
	HadoopConfigMap       *string                      `json:"hadoopConfigMap,omitempty"`
	Volumes               []corev1.Volume              `json:"volumes,omitempty"`
	Driver                DriverSpec                   `json:"driver,omitempty"`
	Executor              ExecutorSpec                 `json:"executor,omitempty"`
	Deps                  Dependencies                 `json:"deps,omitempty"`
	RestartPolicy         RestartPolicy                `json:"restartPolicy,omitempty"`
	NodeSelector          map[string]string            `json:"nodeSelector,omitempty"`
	FailureRetries        *int32                       `json:"failureRetries,omitempty"`
	RetryInterval         *int64                       `json:"retryInterval,omitempty"`
	PythonVersion         *string                      `json:"pythonVersion,omitempty"`
	MemoryOverheadFactor  *string                      `json:"memoryOverheadFactor,omitempty"`
	Monitoring            *MonitoringSpec              `json:"monitoring,omitempty"`
	BatchScheduler        *string                      `json:"batchScheduler,omitempty"`
	TimeToLiveSeconds     *int64                       `json:"timeToLiveSeconds,omitempty"`
	BatchSchedulerOptions *BatchSchedulerConfiguration `json:"batchSchedulerOptions,omitempty"`
	SparkUIOptions        *SparkUIConfiguration        `json:"sparkUIOptions,omitempty"`
	DriverIngressOptions  []DriverIngressConfiguration `json:"driverIngressOptions,omitempty"`
	DynamicAllocation     *DynamicAllocation           `json:"dynamicAllocation,omitempty"`

	// Sparkplug holds settings of sparkplug's own, for which the Spark
	// operator has no field.
	Sparkplug *SparkplugOptions `json:"sparkplug,omitempty"`
}

// KueueOptions are the settings of a step queued with Kueue.
type KueueOptions struct {
	// OnPreemption is OnPreemptionRequeue (default: stop the driver and
	// queue a new attempt) or OnPreemptionFail (stop it and fail the
	// node). Any other eviction (PodsReadyTimeout, a stopped or
	// deactivated queue) fails the node.
	OnPreemption *string `json:"onPreemption,omitempty"`
}

// SparkplugOptions are sparkplug's own settings of one Spark step.
type SparkplugOptions struct {
	// Kueue is what the step does when Kueue takes its quota back; the
	// step is queued by the kueue.x-k8s.io/queue-name label of its
	// template's metadata (or the plugin's --kueue-queue), not here.
	Kueue *KueueOptions `json:"kueue,omitempty"`
	// PendingTimeout fails an attempt whose driver has not started running
	// within it (a Go duration such as 10m; default DefaultPendingTimeout).
	// A driver waiting on a reason that never resolves by itself
	// (ImagePullBackOff, InvalidImageName, CreateContainerConfigError, ...)
	// fails at once, whatever the timeout.
	PendingTimeout *string `json:"pendingTimeout,omitempty"`
	// Launcher says what creates the driver: LauncherNative, sparkplug
	// itself in Go (the default unless sparkplug serve --launcher says
	// otherwise), or LauncherSparkSubmit, Spark's own client run by the
	// plugin (sparkplug serve --spark-home). Both give the driver the same
	// name, labels, annotations and owner, so everything after the launch is
	// the same; spark-submit is for what only Spark's client does, such as
	// uploading local files through spark.kubernetes.file.upload.path.
	Launcher *string `json:"launcher,omitempty"`
	// UIIngress is the Ingress of the step's Spark UI: what sparkplug
	// serve's --ingress-url-format and --ingress-class-name give every
	// step, which the Spark operator takes from its flags of the same
	// names, set or overridden for this step.
	UIIngress *UIIngressOptions `json:"uiIngress,omitempty"`
	// HistoryServerURL is the base URL of the Spark History Server that
	// reads this step's event logs (spark.eventLog.dir), e.g.
	// https://spark-history.example.com: each node then reports the
	// output history-ui, the application's page there, which still
	// answers once the driver and its UI are gone. Unset: the plugin's
	// --history-server-url (ParseWith); empty: no history-ui output for
	// this step.
	HistoryServerURL *string `json:"historyServerURL,omitempty"`
	// ArchiveLogs stores the driver's log, once it ends, in the
	// workflow's Argo artifact repository (S3), reported as the node's
	// output artifact driver-log, which the Argo UI opens and which
	// outlives the driver. Unset: the plugin's --archive-logs.
	ArchiveLogs *bool `json:"archiveLogs,omitempty"`
}

// UIIngressOptions are the settings the Spark operator takes from its
// controller's flags (its Helm chart's controller.uiIngress values), for
// one step. Each one the body leaves unset is the plugin's (ParseWith);
// an empty string sets "none" for this step.
type UIIngressOptions struct {
	// URLFormat is where the Spark UI is reached: a host, a path or both,
	// optionally with a scheme, with the placeholders {{$appName}} (the
	// run's name, which names all its objects), {{$appNamespace}} and
	// {{$appId}} (the application id), e.g.
	// "{{$appName}}.spark.example.com" or
	// "spark.example.com/{{$appNamespace}}/{{$appName}}". With it, a run
	// with a UI Service (sparkUIOptions, or client mode) gets an Ingress to
	// that Service, and a path sets spark.ui.proxyBase. Empty: no Ingress.
	URLFormat *string `json:"urlFormat,omitempty"`
	// IngressClassName is the spec.ingressClassName of every Ingress of the
	// step, the UI's and driverIngressOptions', as the operator's
	// --ingress-class-name. Empty: the cluster's default IngressClass.
	IngressClassName *string `json:"ingressClassName,omitempty"`
}

// Launchers of sparkplug.launcher.
const (
	LauncherNative      = "native"
	LauncherSparkSubmit = "spark-submit"
)

// ApplicationType is the language of the application.
type ApplicationType string

const (
	TypeJava   ApplicationType = "Java"
	TypeScala  ApplicationType = "Scala"
	TypePython ApplicationType = "Python"
	TypeR      ApplicationType = "R"
)

// DeployMode says where the driver runs relative to spark-submit.
type DeployMode string

const (
	ModeCluster         DeployMode = "cluster"
	ModeClient          DeployMode = "client"
	ModeInClusterClient DeployMode = "in-cluster-client"
)

// RestartPolicy says if and when a terminated application is run again.
type RestartPolicy struct {
	Type                             RestartPolicyType `json:"type,omitempty"`
	OnSubmissionFailureRetries       *int32            `json:"onSubmissionFailureRetries,omitempty"`
	OnFailureRetries                 *int32            `json:"onFailureRetries,omitempty"`
	OnSubmissionFailureRetryInterval *int64            `json:"onSubmissionFailureRetryInterval,omitempty"`
	OnFailureRetryInterval           *int64            `json:"onFailureRetryInterval,omitempty"`
}

// RestartPolicyType is Never, OnFailure or Always.
type RestartPolicyType string

const (
	RestartNever     RestartPolicyType = "Never"
	RestartOnFailure RestartPolicyType = "OnFailure"
	RestartAlways    RestartPolicyType = "Always"
	// RestartOnInfrastructureFailure reruns only attempts that ended for
	// reasons outside the application (driver evicted, preempted, its node
	// lost, its pod deleted by someone else, a time limit sparkplug
	// enforces is not one), up to onFailureRetries. Apache's
	// spark-kubernetes-operator has the same policy; the Spark operator
	// (v1beta2) does not.
	RestartOnInfrastructureFailure RestartPolicyType = "OnInfrastructureFailure"
)

// Dependencies are the files and packages the application needs.
type Dependencies struct {
	Jars            []string `json:"jars,omitempty"`
	Files           []string `json:"files,omitempty"`
	PyFiles         []string `json:"pyFiles,omitempty"`
	Packages        []string `json:"packages,omitempty"`
	ExcludePackages []string `json:"excludePackages,omitempty"`
	Repositories    []string `json:"repositories,omitempty"`
	Archives        []string `json:"archives,omitempty"`
}

// SparkPodSpec is what the driver and the executors have in common.
type SparkPodSpec struct {
	Template                      *corev1.PodTemplateSpec    `json:"template,omitempty"`
	Cores                         *int32                     `json:"cores,omitempty"`
	CoreLimit                     *string                    `json:"coreLimit,omitempty"`
	Memory                        *string                    `json:"memory,omitempty"`
	MemoryLimit                   *string                    `json:"memoryLimit,omitempty"`
	MemoryOverhead                *string                    `json:"memoryOverhead,omitempty"`
	GPU                           *GPUSpec                   `json:"gpu,omitempty"`
	Image                         *string                    `json:"image,omitempty"`
	ConfigMaps                    []NamePath                 `json:"configMaps,omitempty"`
	Secrets                       []SecretInfo               `json:"secrets,omitempty"`
	Env                           []corev1.EnvVar            `json:"env,omitempty"`
	EnvVars                       map[string]string          `json:"envVars,omitempty"`
	EnvFrom                       []corev1.EnvFromSource     `json:"envFrom,omitempty"`
	EnvSecretKeyRefs              map[string]NameKey         `json:"envSecretKeyRefs,omitempty"`
	Labels                        map[string]string          `json:"labels,omitempty"`
	Annotations                   map[string]string          `json:"annotations,omitempty"`
	VolumeMounts                  []corev1.VolumeMount       `json:"volumeMounts,omitempty"`
	Affinity                      *corev1.Affinity           `json:"affinity,omitempty"`
	Tolerations                   []corev1.Toleration        `json:"tolerations,omitempty"`
	PodSecurityContext            *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`
	SecurityContext               *corev1.SecurityContext    `json:"securityContext,omitempty"`
	SchedulerName                 *string                    `json:"schedulerName,omitempty"`
	Sidecars                      []corev1.Container         `json:"sidecars,omitempty"`
	InitContainers                []corev1.Container         `json:"initContainers,omitempty"`
	HostNetwork                   *bool                      `json:"hostNetwork,omitempty"`
	NodeSelector                  map[string]string          `json:"nodeSelector,omitempty"`
	DNSConfig                     *corev1.PodDNSConfig       `json:"dnsConfig,omitempty"`
	TerminationGracePeriodSeconds *int64                     `json:"terminationGracePeriodSeconds,omitempty"`
	ServiceAccount                *string                    `json:"serviceAccount,omitempty"`
	HostAliases                   []corev1.HostAlias         `json:"hostAliases,omitempty"`
	ShareProcessNamespace         *bool                      `json:"shareProcessNamespace,omitempty"`
	RuntimeClassName              *string                    `json:"runtimeClassName,omitempty"`
}

// DriverSpec is the driver's pod and its driver-only settings.
type DriverSpec struct {
	SparkPodSpec       `json:",inline"`
	PodName            *string           `json:"podName,omitempty"`
	CoreRequest        *string           `json:"coreRequest,omitempty"`
	JavaOptions        *string           `json:"javaOptions,omitempty"`
	Lifecycle          *corev1.Lifecycle `json:"lifecycle,omitempty"`
	KubernetesMaster   *string           `json:"kubernetesMaster,omitempty"`
	ServiceAnnotations map[string]string `json:"serviceAnnotations,omitempty"`
	ServiceLabels      map[string]string `json:"serviceLabels,omitempty"`
	Ports              []Port            `json:"ports,omitempty"`
	PriorityClassName  *string           `json:"priorityClassName,omitempty"`
}

// ExecutorSpec is the executors' pod and executor-only settings.
type ExecutorSpec struct {
	SparkPodSpec        `json:",inline"`
	Instances           *int32            `json:"instances,omitempty"`
	CoreRequest         *string           `json:"coreRequest,omitempty"`
	JavaOptions         *string           `json:"javaOptions,omitempty"`
	Lifecycle           *corev1.Lifecycle `json:"lifecycle,omitempty"`
	DeleteOnTermination *bool             `json:"deleteOnTermination,omitempty"`
	Ports               []Port            `json:"ports,omitempty"`
	PriorityClassName   *string           `json:"priorityClassName,omitempty"`
}

// NamePath is an object name and the path to mount it at.
type NamePath struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// SecretType says how a mounted Secret is used.
type SecretType string

const (
	SecretTypeGCPServiceAccount     SecretType = "GCPServiceAccount"
	SecretTypeHadoopDelegationToken SecretType = "HadoopDelegationToken"
	SecretTypeGeneric               SecretType = "Generic"
)

// SecretInfo is a Secret to mount and its use.
type SecretInfo struct {
	Name string     `json:"name"`
	Path string     `json:"path"`
	Type SecretType `json:"secretType"`
}

// NameKey names one key of a Secret.
type NameKey struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// Port is a container port of a Spark pod.
type Port struct {
	Name          string `json:"name"`
	Protocol      string `json:"protocol"`
	ContainerPort int32  `json:"containerPort"`
}

// GPUSpec asks for GPUs of one resource name.
type GPUSpec struct {
	Name     string `json:"name"`
	Quantity int64  `json:"quantity"`
}

// MonitoringSpec exposes Spark's metrics.
type MonitoringSpec struct {
	ExposeDriverMetrics   bool            `json:"exposeDriverMetrics"`
	ExposeExecutorMetrics bool            `json:"exposeExecutorMetrics"`
	MetricsProperties     *string         `json:"metricsProperties,omitempty"`
	MetricsPropertiesFile *string         `json:"metricsPropertiesFile,omitempty"`
	Prometheus            *PrometheusSpec `json:"prometheus,omitempty"`
}

// PrometheusSpec configures the Prometheus JMX exporter java agent.
type PrometheusSpec struct {
	JmxExporterJar string  `json:"jmxExporterJar"`
	Port           *int32  `json:"port,omitempty"`
	PortName       *string `json:"portName,omitempty"`
	ConfigFile     *string `json:"configFile,omitempty"`
	Configuration  *string `json:"configuration,omitempty"`
}

// BatchSchedulerConfiguration is passed to a batch scheduler such as Volcano.
type BatchSchedulerConfiguration struct {
	Queue             *string             `json:"queue,omitempty"`
	PriorityClassName *string             `json:"priorityClassName,omitempty"`
	Resources         corev1.ResourceList `json:"resources,omitempty"`
}

// SparkUIConfiguration shapes the Service and Ingress of the Spark UI.
type SparkUIConfiguration struct {
	ServicePort        *int32                    `json:"servicePort,omitempty"`
	ServicePortName    *string                   `json:"servicePortName,omitempty"`
	ServiceType        *corev1.ServiceType       `json:"serviceType,omitempty"`
	ServiceAnnotations map[string]string         `json:"serviceAnnotations,omitempty"`
	ServiceLabels      map[string]string         `json:"serviceLabels,omitempty"`
	IngressAnnotations map[string]string         `json:"ingressAnnotations,omitempty"`
	IngressTLS         []networkingv1.IngressTLS `json:"ingressTLS,omitempty"`
}

// DriverIngressConfiguration exposes another port of the driver through a
// Service, and with an ingressURLFormat an Ingress.
type DriverIngressConfiguration struct {
	ServicePort        *int32                    `json:"servicePort"`
	ServicePortName    *string                   `json:"servicePortName"`
	ServiceType        *corev1.ServiceType       `json:"serviceType,omitempty"`
	ServiceAnnotations map[string]string         `json:"serviceAnnotations,omitempty"`
	ServiceLabels      map[string]string         `json:"serviceLabels,omitempty"`
	IngressURLFormat   string                    `json:"ingressURLFormat,omitempty"`
	IngressAnnotations map[string]string         `json:"ingressAnnotations,omitempty"`
	IngressTLS         []networkingv1.IngressTLS `json:"ingressTLS,omitempty"`
}

// DynamicAllocation configures Spark's dynamic executor allocation.
type DynamicAllocation struct {
	Enabled                bool   `json:"enabled,omitempty"`
	InitialExecutors       *int32 `json:"initialExecutors,omitempty"`
	MinExecutors           *int32 `json:"minExecutors,omitempty"`
	MaxExecutors           *int32 `json:"maxExecutors,omitempty"`
	ShuffleTrackingEnabled *bool  `json:"shuffleTrackingEnabled,omitempty"`
	ShuffleTrackingTimeout *int64 `json:"shuffleTrackingTimeout,omitempty"`
}
