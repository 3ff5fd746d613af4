package spark

// Labels that spark-submit puts on driver and executor pods. Spark reads some
// of them back (the executor allocator selects its executors by
// spark-app-selector and spark-role), so they must match Spark's own.
const (
	LabelAppSelector = "spark-app-selector"
	LabelAppName     = "spark-app-name"
	LabelRole        = "spark-role"
	LabelVersion     = "spark-version"
	LabelExecID      = "spark-exec-id"
	// LabelResourceProfileID is the resource profile of an executor.
	LabelResourceProfileID = "spark-resource-profile-id"

	RoleDriver   = "driver"
	RoleExecutor = "executor"
)

// Labels of the Kubeflow Spark operator that sparkplug also puts on the
// driver and executor pods, with the same meaning, so that NetworkPolicies,
// PodMonitors and other selectors written for the operator's pods keep
// selecting the pods sparkplug launches.
//
// LabelOperatorLaunchedBy is never set, nor allowed in a body: the operator
// (v2.5.2) watches only pods with launched-by-spark-operator=true (the
// label selector of its manager's pod cache, cmd/operator/controller/
// start.go and cmd/operator/webhook/start.go), and its mutating webhook
// selects pods by the same label (objectSelector of charts/spark-operator-
// chart/templates/webhook/mutatingwebhookconfiguration.yaml). A pod with
// it would be patched by the webhook and taken by the operator for the
// driver or an executor of one of its SparkApplications. The two labels
// set are outside both selectors, so an operator in the same cluster
// leaves sparkplug's pods alone.
const (
	OperatorDomain = "sparkoperator.k8s.io"

	// LabelOperatorAppName is the operator's SparkApplication name; sparkplug
	// sets it to its spark-app-name label's value.
	LabelOperatorAppName = OperatorDomain + "/app-name"
	// LabelOperatorSubmissionID is the operator's id of a submission (one
	// per attempt); sparkplug sets it to the attempt's application id
	// (objects.Names.AppID).
	LabelOperatorSubmissionID = OperatorDomain + "/submission-id"
	// LabelOperatorLaunchedBy marks the operator's own pods; see above.
	LabelOperatorLaunchedBy = OperatorDomain + "/launched-by-spark-operator"
)

// Container names and well-known paths of Spark's Kubernetes images.
const (
	DriverContainerName   = "spark-kubernetes-driver"
	ExecutorContainerName = "spark-kubernetes-executor"

	// ConfDir is where spark-submit mounts the properties ConfigMap in the
	// driver pod (SPARK_CONF_DIR).
	ConfDir = "/opt/spark/conf"
	// PropertiesFile is the file name of the effective Spark conf inside ConfDir.
	PropertiesFile = "spark.properties"
	// ConfVolumeName is the name of the volume that carries ConfDir.
	ConfVolumeName = "spark-conf-volume-driver"
	// LocalDirVolumePrefix names the emptyDir volumes Spark uses for scratch space.
	LocalDirVolumeName = "spark-local-dir-1"
	LocalDirPath       = "/var/data/spark-local-dir-1"

	// DriverPort, BlockManagerPort and UIPort are Spark's default ports; the
	// headless driver Service exposes the first two, the UI the third.
	DriverPort       = 7078
	BlockManagerPort = 7079
	UIPort           = 4040

	DriverPortName       = "driver-rpc-port"
	BlockManagerPortName = "blockmanager"
	UIPortName           = "spark-ui"
)

// Spark configuration keys sparkplug sets or reads.
const (
	ConfAppName                  = "spark.app.name"
	ConfAppID                    = "spark.app.id"
	ConfSubmitDeployMode         = "spark.submit.deployMode"
	ConfMaster                   = "spark.master"
	ConfDriverHost               = "spark.driver.host"
	ConfDriverPort               = "spark.driver.port"
	ConfBlockManagerPort         = "spark.driver.blockManager.port"
	ConfDriverCores              = "spark.driver.cores"
	ConfDriverMemory             = "spark.driver.memory"
	ConfDriverMemoryOverhead     = "spark.driver.memoryOverhead"
	ConfDriverExtraJavaOptions   = "spark.driver.extraJavaOptions"
	ConfExecutorCores            = "spark.executor.cores"
	ConfExecutorMemory           = "spark.executor.memory"
	ConfExecutorMemoryOverhead   = "spark.executor.memoryOverhead"
	ConfExecutorInstances        = "spark.executor.instances"
	ConfExecutorExtraJavaOptions = "spark.executor.extraJavaOptions"
	ConfMemoryOverheadFactor     = "spark.kubernetes.memoryOverheadFactor"

	ConfNamespace                 = "spark.kubernetes.namespace"
	ConfContainerImage            = "spark.kubernetes.container.image"
	ConfDriverContainerImage      = "spark.kubernetes.driver.container.image"
	ConfExecutorContainerImage    = "spark.kubernetes.executor.container.image"
	ConfContainerImagePullPolicy  = "spark.kubernetes.container.image.pullPolicy"
	ConfContainerImagePullSecrets = "spark.kubernetes.container.image.pullSecrets"
	ConfDriverPodName             = "spark.kubernetes.driver.pod.name"
	ConfExecutorPodNamePrefix     = "spark.kubernetes.executor.podNamePrefix"
	ConfResourceNamePrefix        = "spark.kubernetes.resourceNamePrefix"
	ConfSubmitInDriver            = "spark.kubernetes.submitInDriver"
	ConfDriverServiceAccount      = "spark.kubernetes.authenticate.driver.serviceAccountName"
	ConfExecutorServiceAccount    = "spark.kubernetes.authenticate.executor.serviceAccountName"
	ConfDriverRequestCores        = "spark.kubernetes.driver.request.cores"
	ConfDriverLimitCores          = "spark.kubernetes.driver.limit.cores"
	ConfExecutorRequestCores      = "spark.kubernetes.executor.request.cores"
	ConfExecutorLimitCores        = "spark.kubernetes.executor.limit.cores"
	ConfPySparkMajorPythonVersion = "spark.kubernetes.pyspark.pythonVersion"
	ConfExecutorDeleteOnTerm      = "spark.kubernetes.executor.deleteOnTermination"

	// Prefixes followed by a label/annotation/env/selector key.
	ConfDriverLabelPrefix           = "spark.kubernetes.driver.label."
	ConfDriverAnnotationPrefix      = "spark.kubernetes.driver.annotation."
	ConfExecutorLabelPrefix         = "spark.kubernetes.executor.label."
	ConfExecutorAnnotationPrefix    = "spark.kubernetes.executor.annotation."
	ConfDriverEnvPrefix             = "spark.kubernetes.driverEnv."
	ConfExecutorEnvPrefix           = "spark.executorEnv."
	ConfNodeSelectorPrefix          = "spark.kubernetes.node.selector."
	ConfDriverNodeSelectorPrefix    = "spark.kubernetes.driver.node.selector."
	ConfExecutorNodeSelectorPrefix  = "spark.kubernetes.executor.node.selector."
	ConfHadoopPrefix                = "spark.hadoop."
	ConfDriverSecretsPrefix         = "spark.kubernetes.driver.secrets."
	ConfExecutorSecretsPrefix       = "spark.kubernetes.executor.secrets."
	ConfExecutorPodTemplateFile     = "spark.kubernetes.executor.podTemplateFile"
	ConfExecutorPodTemplateContName = "spark.kubernetes.executor.podTemplateContainerName"
)

// Environment variables Spark's image entrypoint reads in the driver container.
const (
	EnvDriverBindAddress = "SPARK_DRIVER_BIND_ADDRESS"
	EnvLocalDirs         = "SPARK_LOCAL_DIRS"
	EnvConfDir           = "SPARK_CONF_DIR"
	EnvUserPyFiles       = "PYSPARK_PYTHON"
	EnvApplicationID     = "SPARK_APPLICATION_ID"
)

// Application states, as the Spark operator names them. sparkplug reports the
// same words so users read the states they already know.
type State string

const (
	StateNew              State = ""
	StateSubmitted        State = "SUBMITTED"
	StateRunning          State = "RUNNING"
	StateSucceeding       State = "SUCCEEDING"
	StateCompleted        State = "COMPLETED"
	StateFailing          State = "FAILING"
	StateFailed           State = "FAILED"
	StateSubmissionFailed State = "SUBMISSION_FAILED"
	StatePendingRerun     State = "PENDING_RERUN"
	StateUnknown          State = "UNKNOWN"
	// StateQueued is sparkplug's own: the step waits for Kueue to admit
	// its first attempt; nothing of it runs yet.
	StateQueued State = "QUEUED"
)

// Exit codes a container reports after a signal: SIGTERM (128+15), which a
// JVM or Python driver gets when its pod is stopped, and SIGKILL (128+9),
// which the kernel's OOM killer and an expired grace period send.
const (
	ExitCodeSIGTERM = 143
	ExitCodeSIGKILL = 137
)

// sparkplug's own labels and annotations. Spark pods never carry
// workflows.argoproj.io/* keys: Argo's controller selects its pods by them.
const (
	Domain = "sparkplug.io"

	// LabelWorkflowUID selects everything launched for one Workflow; the
	// sidecar's cache watches only objects with its workflow's value.
	LabelWorkflowUID = Domain + "/workflow-uid"
	// LabelNode is a short hash of the Argo node id (node ids can exceed the
	// 63 characters a label value allows); AnnotationNodeID has the id itself.
	LabelNode = Domain + "/node"
	// LabelTemplate is the hash of the canonical Argo template that asked for
	// the run; identical templates share it.
	LabelTemplate = Domain + "/template"
	// LabelAttempt is the restart-policy attempt, "1" for the first run.
	LabelAttempt = Domain + "/attempt"
	// LabelManagedBy marks objects sparkplug created.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedByValue = "sparkplug"

	AnnotationNodeID       = Domain + "/node-id"
	AnnotationWorkflowName = Domain + "/workflow-name"
	// AnnotationIncarnation is the Workflow's status.startedAt (RFC 3339)
	// when the run was launched (objects.Run.Incarnation): a run of an
	// earlier incarnation, before `argo retry`, is not the node's run.
	AnnotationIncarnation = Domain + "/incarnation"
	// AnnotationNameKey is the key a run's names were drawn with
	// (objects.Run.NameKey) when its own names were taken.
	AnnotationNameKey = Domain + "/name-key"

	// A driver sparkplug stopped itself (a time limit, a driver that
	// cannot start) leaves a tombstone: its ConfigMap, re-owned by the
	// Workflow, keeps these annotations so the run is never launched again
	// for the same attempt and its result can be reported again.
	AnnotationStopped       = Domain + "/stopped"        // the limit: Timeout, PendingTimeout, CannotStart
	AnnotationStoppedAt     = Domain + "/stopped-at"     // RFC 3339
	AnnotationStoppedReason = Domain + "/stopped-reason" // the failure reason shown in the message
	AnnotationStoppedDetail = Domain + "/stopped-detail" // the one line a person reads
	AnnotationDriver        = Domain + "/driver"         // the stopped driver pod's name
	AnnotationDriverUID     = Domain + "/driver-uid"     // and its uid: a tombstone naming none counts for no driver

	// AnnotationDriverLog records the key the driver's log was archived
	// at in the workflow's artifact repository, so the node reports it as
	// its driver-log artifact and no process stores it twice.
	// AnnotationDriverLogError records why it could not be archived.
	AnnotationDriverLog      = Domain + "/driver-log"
	AnnotationDriverLogError = Domain + "/driver-log-error"
	// MaxDriverLogErrorBytes bounds the reason AnnotationDriverLogError
	// records, as it is written and as a message shows it.
	MaxDriverLogErrorBytes = 512

	// AnnotationTTLSeconds carries the body's timeToLiveSeconds: a driver
	// that finished that long ago, and whose result Argo recorded, is
	// deleted (with its executors, ConfigMap and Service).
	AnnotationTTLSeconds = Domain + "/ttl-seconds"
	// LabelTTLSeconds is the same number as a label, so that drivers with
	// a time to live can be listed across a namespace: those of finished
	// workflows, whose own sidecar is gone, are expired by any sidecar
	// serving the namespace.
	LabelTTLSeconds = Domain + "/ttl-seconds"
)

// More of Spark's conf keys: the ones spark-submit writes into
// spark.properties for dependencies, dynamic allocation and the driver's
// own Kubernetes settings, and the ones whose values shape the driver pod
// (Spark's BasicDriverFeatureStep, LocalDirsFeatureStep, MountSecrets- and
// EnvSecretsFeatureStep read them at submission).
const (
	ConfJars             = "spark.jars"
	ConfFiles            = "spark.files"
	ConfPyFiles          = "spark.submit.pyFiles"
	ConfArchives         = "spark.archives"
	ConfJarsPackages     = "spark.jars.packages"
	ConfJarsExcludes     = "spark.jars.excludes"
	ConfJarsRepositories = "spark.jars.repositories"

	ConfDynamicAllocationEnabled          = "spark.dynamicAllocation.enabled"
	ConfDynamicAllocationInitialExecutors = "spark.dynamicAllocation.initialExecutors"
	ConfDynamicAllocationMinExecutors     = "spark.dynamicAllocation.minExecutors"
	ConfDynamicAllocationMaxExecutors     = "spark.dynamicAllocation.maxExecutors"
	ConfShuffleTrackingEnabled            = "spark.dynamicAllocation.shuffleTracking.enabled"
	ConfShuffleTrackingTimeout            = "spark.dynamicAllocation.shuffleTracking.timeout"

	// ConfAppResourceType is java, python or r (Spark's internal
	// spark.kubernetes.resource.type, set by DriverCommandFeatureStep).
	ConfAppResourceType = "spark.kubernetes.resource.type"
	// ConfDriverMaster is the API server URL the driver uses
	// (SparkApplication's driver.kubernetesMaster).
	ConfDriverMaster                  = "spark.kubernetes.driver.master"
	ConfDriverMemoryOverheadFactor    = "spark.driver.memoryOverheadFactor"
	ConfDriverMinMemoryOverhead       = "spark.driver.minMemoryOverhead"
	ConfUIPort                        = "spark.ui.port"
	ConfBlockManagerPortAll           = "spark.blockManager.port"
	ConfLocalDir                      = "spark.local.dir"
	ConfLocalDirsTmpfs                = "spark.kubernetes.local.dirs.tmpfs"
	ConfSchedulerName                 = "spark.kubernetes.scheduler.name"
	ConfDriverSchedulerName           = "spark.kubernetes.driver.scheduler.name"
	ConfPySparkPython                 = "spark.pyspark.python"
	ConfPySparkDriverPython           = "spark.pyspark.driver.python"
	ConfDriverServiceLabelPrefix      = "spark.kubernetes.driver.service.label."
	ConfDriverServiceAnnotationPrefix = "spark.kubernetes.driver.service.annotation."
	ConfDriverSecretKeyRefPrefix      = "spark.kubernetes.driver.secretKeyRef."
	ConfExecutorSecretKeyRefPrefix    = "spark.kubernetes.executor.secretKeyRef."
	// ConfDriverResourcePrefix is followed by <name>.amount and <name>.vendor:
	// a custom resource limit <vendor>/<name> on the driver container.
	ConfDriverResourcePrefix = "spark.driver.resource."
)

// Values spark-submit derives rather than reads.
const (
	// DefaultMaster is spark.master for a driver submitted from inside the
	// cluster.
	DefaultMaster     = "k8s://https://kubernetes.default.svc:443"
	DeployModeCluster = "cluster"

	// PythonRunnerClass and RRunnerClass are the --class spark-submit gives
	// the driver of Python and R applications.
	PythonRunnerClass = "org.apache.spark.deploy.PythonRunner"
	RRunnerClass      = "org.apache.spark.deploy.RRunner"

	ResourceTypeJava   = "java"
	ResourceTypePython = "python"
	ResourceTypeR      = "r"

	// Memory overhead: max(factor * memory, MemoryOverheadMinMiB); the
	// factor is 0.1 for JVM applications and 0.4 for Python and R.
	MemoryOverheadMinMiB          = 384
	MemoryOverheadFactorJVM       = 0.1
	MemoryOverheadFactorNonJVM    = 0.4
	ExecutorPodNamePrefixMaxChars = 47
)

// The executor pod template: spark-submit mounts it in the driver pod from
// a ConfigMap (PodTemplateConfigMapStep) at this path, and the driver reads
// it when it creates executors.
const (
	PodTemplateVolumeName = "pod-template-volume"
	PodTemplateDir        = "/opt/spark/pod-template"
	PodTemplateFile       = "pod-spec-template.yml"
	// ExecutorPodTemplateKey is the key of the template in sparkplug's
	// ConfigMap, next to PropertiesFile.
	ExecutorPodTemplateKey = "executor-pod-template.yaml"
)

// ConfigMaps and Secrets the Spark operator mounts for a SparkApplication's
// sparkConfigMap, hadoopConfigMap and typed secrets, with its paths, so an
// application moved from the operator finds its files where it did.
const (
	SparkConfigMapVolumeName  = "spark-configmap-volume"
	SparkConfigMapDir         = "/etc/spark/conf"
	HadoopConfigMapVolumeName = "hadoop-configmap-volume"
	HadoopConfDir             = "/etc/hadoop/conf"

	EnvHadoopConfDir                = "HADOOP_CONF_DIR"
	EnvGoogleApplicationCredentials = "GOOGLE_APPLICATION_CREDENTIALS"
	EnvHadoopTokenFileLocation      = "HADOOP_TOKEN_FILE_LOCATION"
	EnvPySparkPython                = "PYSPARK_PYTHON"
	EnvPySparkDriverPython          = "PYSPARK_DRIVER_PYTHON"
	// ServiceAccountJSONKeyFile and HadoopDelegationTokenFile are the file
	// names inside a GCPServiceAccount and a HadoopDelegationToken secret.
	ServiceAccountJSONKeyFile = "key.json"
	HadoopDelegationTokenFile = "hadoop.token"
)

// Pod templates: the Spark operator's driver.template and executor.template
// (a PodTemplateSpec). Spark reads the driver's from
// spark.kubernetes.driver.podTemplateFile when spark-submit builds the
// driver pod; sparkplug builds that pod itself, so the keys are the body's
// to set only through driver.template.
const (
	ConfDriverPodTemplateFile     = "spark.kubernetes.driver.podTemplateFile"
	ConfDriverPodTemplateContName = "spark.kubernetes.driver.podTemplateContainerName"
)

// Monitoring with Prometheus, as the Spark operator sets it up
// (internal/controller/sparkapplication/monitoring_config.go): Spark's
// metrics configuration and the JMX exporter's configuration are files in
// the run's ConfigMap, mounted at MetricsConfDir in the driver and the
// executors; the exporter runs as a -javaagent on PrometheusPort.
const (
	ConfMetricsConf      = "spark.metrics.conf"
	ConfMetricsNamespace = "spark.metrics.namespace"

	MetricsConfDir        = "/etc/metrics/conf"
	MetricsConfVolumeName = "spark-metrics-conf-volume"
	MetricsPropertiesKey  = "metrics.properties"
	PrometheusConfigKey   = "prometheus.yaml"
	PrometheusPort        = 8090
	PrometheusPortName    = "jmx-exporter"
	PrometheusMetricsPath = "/metrics"
	AnnotationPromScrape  = "prometheus.io/scrape"
	AnnotationPromPort    = "prometheus.io/port"
	AnnotationPromPath    = "prometheus.io/path"
)

// The Spark UI Service the Spark operator creates for sparkUIOptions
// (<app>-ui-svc): it selects the driver and forwards ServicePort to
// spark.ui.port.
const (
	UIServicePortName = "spark-driver-ui-port"
)

// The Ingresses the Spark operator creates for its --ingress-url-format
// (the UI's) and for driverIngressOptions, and the Spark conf that puts
// the UI under the Ingress's path.
const (
	// ConfUIProxyBase is the path Spark's UI writes its links under;
	// ConfUIProxyRedirectURI where its redirects point ("/": the same host).
	ConfUIProxyBase        = "spark.ui.proxyBase"
	ConfUIProxyRedirectURI = "spark.ui.proxyRedirectUri"
	// AnnotationNginxRewriteTarget makes ingress-nginx strip an Ingress
	// path's prefix: the operator's paths end in (/|$)(.*) and rewrite to
	// /$2.
	AnnotationNginxRewriteTarget = "nginx.ingress.kubernetes.io/rewrite-target"
	NginxRewriteTarget           = "/$2"
	IngressSubPathPattern        = "(/|$)(.*)"
	// AnnotationIngressClass is the deprecated annotation form of
	// spec.ingressClassName; the API server refuses an Ingress with both
	// when they differ.
	AnnotationIngressClass = "kubernetes.io/ingress.class"
	// DriverIngressPortNamePrefix names a driverIngressOptions Service's
	// port driver-ing-<port> when servicePortName is unset.
	DriverIngressPortNamePrefix = "driver-ing-"
)

// Batch schedulers the Spark operator supports for batchScheduler, and
// the pod metadata each reads.
const (
	SchedulerVolcano       = "volcano"
	SchedulerYuniKorn      = "yunikorn"
	SchedulerKubeScheduler = "kube-scheduler"

	// AnnotationVolcanoGroup names a pod's Volcano PodGroup.
	AnnotationVolcanoGroup = "scheduling.k8s.io/group-name"
	// LabelPodGroup names a pod's PodGroup of scheduler-plugins, whose
	// Coscheduling plugin a kube-scheduler runs.
	LabelPodGroup = "scheduling.x-k8s.io/pod-group"

	// The PodGroups the Spark operator creates: Volcano's for volcano,
	// scheduler-plugins' for kube-scheduler. Both kinds are PodGroup, both
	// resources podgroups.
	VolcanoPodGroupAPIVersion          = "scheduling.volcano.sh/v1beta1"
	SchedulerPluginsPodGroupAPIVersion = "scheduling.x-k8s.io/v1alpha1"
	PodGroupKind                       = "PodGroup"
	PodGroupResource                   = "podgroups"

	// LabelYuniKornQueue is the queue YuniKorn puts the application in.
	LabelYuniKornQueue = "queue"
	// AnnotationYuniKornTaskGroupName is the task group of a pod;
	// AnnotationYuniKornTaskGroups, on the originating (driver) pod, defines
	// the groups for gang scheduling.
	AnnotationYuniKornTaskGroupName = "yunikorn.apache.org/task-group-name"
	AnnotationYuniKornTaskGroups    = "yunikorn.apache.org/task-groups"
	YuniKornDriverTaskGroup         = "spark-driver"
	YuniKornExecutorTaskGroup       = "spark-executor"

	// More executor memory keys Spark adds to the executor pod's request.
	ConfExecutorMemoryOverheadFactor = "spark.executor.memoryOverheadFactor"
	ConfExecutorMinMemoryOverhead    = "spark.executor.minMemoryOverhead"
	ConfExecutorPySparkMemory        = "spark.executor.pyspark.memory"
	ConfMemoryOffHeapEnabled         = "spark.memory.offHeap.enabled"
	ConfMemoryOffHeapSize            = "spark.memory.offHeap.size"
	ConfExecutorSchedulerName        = "spark.kubernetes.executor.scheduler.name"
	// ConfExecutorResourcePrefix is followed by <name>.amount and
	// <name>.vendor: a limit <vendor>/<name> on every executor.
	ConfExecutorResourcePrefix = "spark.executor.resource."
)
