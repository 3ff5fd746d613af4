package spec

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestValidateMetadataAndConf: labels and annotations, env, names, node
// selectors and tolerations, sparkConf and hadoopConf.
func TestValidateMetadataAndConf(t *testing.T) {
	type spec = SparkApplicationSpec
	runValidateCases(t, []validateCase{
		// labels and annotations
		{"label spark-role reserved", func(s *spec) { s.Driver.Labels = map[string]string{"spark-role": "x"} },
			[]wantErr{{"spark.driver.labels[spark-role]", "Forbidden: sparkplug sets it to driver or executor, and Spark finds its executors by it; remove it"}}},
		{"label spark-app-selector reserved", func(s *spec) { s.Executor.Labels = map[string]string{"spark-app-selector": "x"} },
			[]wantErr{{"spark.executor.labels[spark-app-selector]", "Forbidden: sparkplug sets it to the application id"}}},
		{"label spark-app-name reserved", func(s *spec) { s.Driver.Labels = map[string]string{"spark-app-name": "x"} },
			[]wantErr{{"spark.driver.labels[spark-app-name]", "Forbidden"}}},
		{"label sparkoperator.k8s.io/app-name reserved", func(s *spec) { s.Driver.Labels = map[string]string{"sparkoperator.k8s.io/app-name": "x"} },
			[]wantErr{{"spark.driver.labels[sparkoperator.k8s.io/app-name]", "Forbidden: sparkplug sets it on the driver and executors to the application name, as spark-app-name; remove it"}}},
		{"label sparkoperator.k8s.io/submission-id reserved", func(s *spec) { s.Executor.Labels = map[string]string{"sparkoperator.k8s.io/submission-id": "x"} },
			[]wantErr{{"spark.executor.labels[sparkoperator.k8s.io/submission-id]", "Forbidden: sparkplug sets it on the driver and executors to the attempt's application id; remove it"}}},
		{"label sparkoperator.k8s.io/launched-by-spark-operator refused", func(s *spec) {
			s.Driver.Labels = map[string]string{"sparkoperator.k8s.io/launched-by-spark-operator": "true"}
		}, []wantErr{{"spark.driver.labels[sparkoperator.k8s.io/launched-by-spark-operator]", "Forbidden: the Spark operator would take the pods for its own (its pod cache and mutating webhook select pods by this label), and sparkplug never sets it; remove it"}}},
		{"the operator's other labels are the user's", func(s *spec) {
			s.Driver.Labels = map[string]string{"sparkoperator.k8s.io/scheduled-app-name": "x", "sparkoperator.k8s.io/team": "y"}
		}, nil},
		{"label managed-by reserved", func(s *spec) { s.Driver.Labels = map[string]string{"app.kubernetes.io/managed-by": "me"} },
			[]wantErr{{"spark.driver.labels[app.kubernetes.io/managed-by]", "sparkplug sets it to sparkplug"}}},
		{"label in sparkplug's domain", func(s *spec) { s.Executor.Labels = map[string]string{"sparkplug.io/node": "x"} },
			[]wantErr{{"spark.executor.labels[sparkplug.io/node]", "Forbidden: the sparkplug.io/ keys are sparkplug's bookkeeping"}}},
		{"label in a sparkplug subdomain", func(s *spec) { s.Executor.Labels = map[string]string{"x.sparkplug.io/a": "b"} },
			[]wantErr{{"spark.executor.labels[x.sparkplug.io/a]", "Forbidden"}}},
		{"annotation in Argo's domain", func(s *spec) { s.Driver.Annotations = map[string]string{"workflows.argoproj.io/node-id": "x"} },
			[]wantErr{{"spark.driver.annotations[workflows.argoproj.io/node-id]", "Forbidden: the workflows.argoproj.io/ keys are Argo's, and its controller would take the Spark pods for workflow pods"}}},
		{"service label in sparkplug's domain", func(s *spec) { s.Driver.ServiceLabels = map[string]string{"sparkplug.io/x": "y"} },
			[]wantErr{{"spark.driver.serviceLabels[sparkplug.io/x]", "Forbidden"}}},
		{"label key invalid", func(s *spec) { s.Driver.Labels = map[string]string{"team name": "a", "ok": "fine"} },
			[]wantErr{{"spark.driver.labels[team name]", `Invalid value: "team name": is not a valid label key`}}},
		{"label value invalid", func(s *spec) { s.Executor.Labels = map[string]string{"team": "data eng"} },
			[]wantErr{{"spark.executor.labels[team]", `Invalid value: "data eng": is not a valid label value`}}},
		{"annotation key invalid", func(s *spec) { s.Executor.Annotations = map[string]string{"/x": "y"} },
			[]wantErr{{"spark.executor.annotations[/x]", "is not a valid annotation key"}}},
		{"annotation values are free", func(s *spec) { s.Executor.Annotations = map[string]string{"note": "any text at all: {}"} }, nil},

		// env
		{"env name invalid", func(s *spec) { s.Driver.Env = []corev1.EnvVar{{Name: "1BAD", Value: "x"}} },
			[]wantErr{{"spark.driver.env[0].name", `Invalid value: "1BAD": a valid environment variable name`}}},
		{"env name missing", func(s *spec) { s.Executor.Env = []corev1.EnvVar{{Value: "x"}} },
			[]wantErr{{"spark.executor.env[0].name", "Required value"}}},
		{"env value and valueFrom", func(s *spec) {
			s.Driver.Env = []corev1.EnvVar{{Name: "A", Value: "x", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
		}, []wantErr{{"spark.driver.env[0].valueFrom", "give value or valueFrom, not both"}}},
		{"envVars key invalid", func(s *spec) { s.Executor.EnvVars = map[string]string{"A=B": "x"} },
			[]wantErr{{"spark.executor.envVars[A=B]", "a valid environment variable name"}}},
		{"envFrom with both sources", func(s *spec) {
			s.Driver.EnvFrom = []corev1.EnvFromSource{{
				ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "a"}},
				SecretRef:    &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "b"}},
			}}
		}, []wantErr{{"spark.driver.envFrom[0]", "give exactly one of configMapRef and secretRef"}}},
		{"envFrom secret name missing", func(s *spec) { s.Driver.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{}}} },
			[]wantErr{{"spark.driver.envFrom[0].secretRef.name", "Required value: give a Secret name"}}},

		// names
		{"serviceAccount invalid", func(s *spec) { s.Driver.ServiceAccount = ptr("Spark_SA") },
			[]wantErr{{"spark.driver.serviceAccount", `Invalid value: "Spark_SA": is not a ServiceAccount name`}}},
		{"schedulerName invalid", func(s *spec) { s.Executor.SchedulerName = ptr("Volcano!") },
			[]wantErr{{"spark.executor.schedulerName", "is not a scheduler name"}}},
		{"priorityClassName invalid", func(s *spec) { s.Executor.PriorityClassName = ptr("High") },
			[]wantErr{{"spark.executor.priorityClassName", "is not a PriorityClass name"}}},
		{"runtimeClassName invalid", func(s *spec) { s.Driver.RuntimeClassName = ptr("gVisor") },
			[]wantErr{{"spark.driver.runtimeClassName", "is not a RuntimeClass name"}}},
		{"sparkConfigMap invalid", func(s *spec) { s.SparkConfigMap = ptr("Spark Conf") },
			[]wantErr{{"spark.sparkConfigMap", "is not a ConfigMap name"}}},
		{"hadoopConfigMap empty", func(s *spec) { s.HadoopConfigMap = ptr("") },
			[]wantErr{{"spark.hadoopConfigMap", "Required value: give a ConfigMap name"}}},

		// node selectors and tolerations
		{"nodeSelector value invalid", func(s *spec) { s.Executor.NodeSelector = map[string]string{"pool": "spot pool"} },
			[]wantErr{{"spark.executor.nodeSelector[pool]", "is not a valid label value"}}},
		{"nodeSelector key invalid", func(s *spec) { s.NodeSelector = map[string]string{"-pool": "a"} },
			[]wantErr{{"spark.nodeSelector[-pool]", "is not a valid label key"}}},
		{"nodeSelector at both levels", func(s *spec) {
			s.NodeSelector, s.Driver.NodeSelector = map[string]string{"a": "b"}, map[string]string{"c": "d"}
		}, []wantErr{{"spark.nodeSelector", "Forbidden: give the node selector either here or in spark.driver and spark.executor, not both"}}},
		{"toleration operator", func(s *spec) { s.Driver.Tolerations = []corev1.Toleration{{Key: "k", Operator: "In"}} },
			[]wantErr{{"spark.driver.tolerations[0].operator", `Unsupported value: "In": supported values: "Equal", "Exists"`}}},
		{"toleration Exists with a value", func(s *spec) { s.Driver.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Exists", Value: "v"}} },
			[]wantErr{{"spark.driver.tolerations[0].value", "must be empty when operator is Exists"}}},
		{"toleration effect", func(s *spec) { s.Executor.Tolerations = []corev1.Toleration{{Key: "k", Value: "v", Effect: "NoRun"}} },
			[]wantErr{{"spark.executor.tolerations[0].effect", `Unsupported value: "NoRun": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"`}}},
		{"toleration seconds without NoExecute", func(s *spec) {
			s.Executor.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Exists", Effect: "NoSchedule", TolerationSeconds: ptr[int64](60)}}
		}, []wantErr{{"spark.executor.tolerations[0].effect", "must be NoExecute when tolerationSeconds is set"}}},
		{"toleration without key needs Exists", func(s *spec) { s.Driver.Tolerations = []corev1.Toleration{{Operator: "Equal", Value: "v"}} },
			[]wantErr{{"spark.driver.tolerations[0].operator", "must be Exists when key is empty"}}},
		{"toleration of every taint is valid", func(s *spec) { s.Driver.Tolerations = []corev1.Toleration{{Operator: "Exists"}} }, nil},

		// sparkConf and hadoopConf
		{"sparkConf namespace owned", func(s *spec) { s.SparkConf = map[string]string{"spark.kubernetes.namespace": "x"} },
			[]wantErr{{"spark.sparkConf[spark.kubernetes.namespace]", "Forbidden: sparkplug sets it: the driver runs in the workflow's namespace"}}},
		{"sparkConf driver pod name owned", func(s *spec) { s.SparkConf = map[string]string{"spark.kubernetes.driver.pod.name": "x"} },
			[]wantErr{{"spark.sparkConf[spark.kubernetes.driver.pod.name]", "sparkplug sets it"}}},
		{"sparkConf key with '=' passes for another key in --conf k=v", func(s *spec) {
			s.SparkConf = map[string]string{"spark.kubernetes.driver.pod.name=other": "x"}
		}, []wantErr{{"spark.sparkConf[spark.kubernetes.driver.pod.name=other]", "must not contain '=': spark-submit would read the key up to it"}}},
		{"sparkConf key with a newline", func(s *spec) { s.SparkConf = map[string]string{"spark.a\nspark.master": "x"} },
			[]wantErr{{"spark.sparkConf[spark.a\nspark.master]", "must not contain control characters"}}},
		{"sparkConf keys with ':', spaces and '\\' are written escaped", func(s *spec) {
			s.SparkConf = map[string]string{"spark.a:b": "x", "spark.a b": "x", `spark.a\b`: "x", "#spark.a!": "x"}
		}, nil},
		{"hadoopConf key with '='", func(s *spec) { s.HadoopConf = map[string]string{"fs.a=b": "x"} },
			[]wantErr{{"spark.hadoopConf[fs.a=b]", "must not contain '='"}}},
		{"sparkConf decommission label reserved", func(s *spec) {
			s.SparkConf = map[string]string{"spark.kubernetes.executor.decommissionLabel": "spark-role", "spark.kubernetes.executor.decommissionLabelValue": "driver"}
		}, []wantErr{
			{"spark.sparkConf[spark.kubernetes.executor.decommissionLabel]", "Forbidden: the driver would write this label on executors past sparkplug's check of reserved labels"},
			{"spark.sparkConf[spark.kubernetes.executor.decommissionLabelValue]", "Forbidden: the driver would write this label"},
		}},
		{"sparkConf operator labels reserved", func(s *spec) {
			s.SparkConf = map[string]string{
				"spark.kubernetes.driver.label.sparkoperator.k8s.io/app-name":                     "x",
				"spark.kubernetes.executor.label.sparkoperator.k8s.io/submission-id":              "x",
				"spark.kubernetes.executor.label.sparkoperator.k8s.io/launched-by-spark-operator": "true",
			}
		}, []wantErr{
			{"spark.sparkConf[spark.kubernetes.driver.label.sparkoperator.k8s.io/app-name]", "Forbidden: label sparkoperator.k8s.io/app-name: sparkplug sets it on the driver and executors to the application name"},
			{"spark.sparkConf[spark.kubernetes.executor.label.sparkoperator.k8s.io/launched-by-spark-operator]", "Forbidden: label sparkoperator.k8s.io/launched-by-spark-operator: the Spark operator would take the pods for its own"},
			{"spark.sparkConf[spark.kubernetes.executor.label.sparkoperator.k8s.io/submission-id]", "Forbidden: label sparkoperator.k8s.io/submission-id: sparkplug sets it on the driver and executors to the attempt's application id"},
		}},
		{"sparkConf app id owned", func(s *spec) { s.SparkConf = map[string]string{"spark.app.id": "x"} },
			[]wantErr{{"spark.sparkConf[spark.app.id]", "sparkplug sets it"}}},
		{"sparkConf executor pod name prefix owned", func(s *spec) { s.SparkConf = map[string]string{"spark.kubernetes.executor.podNamePrefix": "x"} },
			[]wantErr{{"spark.sparkConf[spark.kubernetes.executor.podNamePrefix]", "sparkplug sets it from the driver pod name"}}},
		{"sparkConf master owned", func(s *spec) { s.SparkConf = map[string]string{"spark.master": "local[*]"} },
			[]wantErr{{"spark.sparkConf[spark.master]", "set spark.driver.kubernetesMaster"}}},
		{"sparkConf deploy mode owned", func(s *spec) { s.SparkConf = map[string]string{"spark.submit.deployMode": "client"} },
			[]wantErr{{"spark.sparkConf[spark.submit.deployMode]", "set spark.mode instead"}}},
		{"sparkConf image points at the field", func(s *spec) { s.SparkConf = map[string]string{"spark.kubernetes.executor.container.image": "x"} },
			[]wantErr{{"spark.sparkConf[spark.kubernetes.executor.container.image]", "Forbidden: set spark.executor.image instead"}}},
		{"sparkConf service account points at the field", func(s *spec) {
			s.SparkConf = map[string]string{"spark.kubernetes.authenticate.driver.serviceAccountName": "x"}
		}, []wantErr{{"spark.sparkConf[spark.kubernetes.authenticate.driver.serviceAccountName]", "set spark.driver.serviceAccount instead"}}},
		{"other sparkConf is free", func(s *spec) {
			s.SparkConf = map[string]string{"spark.sql.shuffle.partitions": "10", "spark.driver.memory": "2g"}
		}, nil},
		{"hadoopConf with the spark.hadoop. prefix", func(s *spec) { s.HadoopConf = map[string]string{"spark.hadoop.fs.s3a.endpoint": "x"} },
			[]wantErr{{"spark.hadoopConf[spark.hadoop.fs.s3a.endpoint]", `sparkplug adds the spark.hadoop. prefix itself; write "fs.s3a.endpoint"`}}},
	})
}

// TestValidateLifetimeAndVolumes: the restart policy and lifetime, versions
// and factors, volumes and mounts, GPUs, containers, Java options, deps, and
// what is not supported yet.
func TestValidateLifetimeAndVolumes(t *testing.T) {
	type spec = SparkApplicationSpec
	runValidateCases(t, []validateCase{
		// restart policy and lifetime
		{"restartPolicy type", func(s *spec) { s.RestartPolicy.Type = "Sometimes" },
			[]wantErr{{"spark.restartPolicy.type", `Unsupported value: "Sometimes": supported values: "Never", "OnFailure", "Always"`}}},
		{"restartPolicy negative retries", func(s *spec) {
			s.RestartPolicy = RestartPolicy{Type: RestartOnFailure, OnFailureRetries: ptr[int32](-1), OnSubmissionFailureRetries: ptr[int32](-2)}
			SetDefaults(s)
		}, []wantErr{
			{"spark.restartPolicy.onFailureRetries", "Invalid value: -1: must be 0 or more"},
			{"spark.restartPolicy.onSubmissionFailureRetries", "Invalid value: -2: must be 0 or more"},
		}},
		{"restartPolicy zero intervals", func(s *spec) {
			s.RestartPolicy = RestartPolicy{Type: RestartAlways, OnFailureRetryInterval: ptr[int64](0), OnSubmissionFailureRetryInterval: ptr[int64](0)}
		}, []wantErr{
			{"spark.restartPolicy.onFailureRetryInterval", "must be at least 1 second"},
			{"spark.restartPolicy.onSubmissionFailureRetryInterval", "must be at least 1 second"},
		}},
		{"timeToLiveSeconds negative", func(s *spec) { s.TimeToLiveSeconds = ptr[int64](-1) },
			[]wantErr{{"spark.timeToLiveSeconds", "must be 0 or more seconds"}}},
		{"pendingTimeout not a duration", func(s *spec) { s.Sparkplug = &SparkplugOptions{PendingTimeout: ptr("ten minutes")} },
			[]wantErr{{"spark.sparkplug.pendingTimeout", "must be a duration"}}},
		{"pendingTimeout not positive", func(s *spec) { s.Sparkplug = &SparkplugOptions{PendingTimeout: ptr("0s")} },
			[]wantErr{{"spark.sparkplug.pendingTimeout", "must be positive"}}},
		{"launcher spark-submit", func(s *spec) { s.Sparkplug = &SparkplugOptions{Launcher: ptr(LauncherSparkSubmit)} }, nil},
		{"kueue onPreemption Fail", func(s *spec) {
			s.Sparkplug = &SparkplugOptions{Kueue: &KueueOptions{OnPreemption: ptr(OnPreemptionFail)}}
		}, nil},
		{"kueue onPreemption unknown", func(s *spec) { s.Sparkplug = &SparkplugOptions{Kueue: &KueueOptions{OnPreemption: ptr("Retry")}} },
			[]wantErr{{"spark.sparkplug.kueue.onPreemption", `Unsupported value: "Retry": supported values: "Requeue", "Fail"`}}},
		{"launcher native", func(s *spec) { s.Sparkplug = &SparkplugOptions{Launcher: ptr(LauncherNative)} }, nil},
		{"launcher unknown", func(s *spec) { s.Sparkplug = &SparkplugOptions{Launcher: ptr("spark-operator")} },
			[]wantErr{{"spark.sparkplug.launcher", `Unsupported value: "spark-operator": supported values: "native", "spark-submit"`}}},
		{"launcher spark-submit in client mode", func(s *spec) {
			s.Mode, s.Sparkplug = ModeClient, &SparkplugOptions{Launcher: ptr(LauncherSparkSubmit)}
		}, []wantErr{{"spark.sparkplug.launcher", "in client mode the driver pod runs spark-submit itself"}}},
		{"launcher spark-submit with a Python file spark-submit would take for a jar", func(s *spec) {
			s.Type, s.MainClass, s.MainApplicationFile = TypePython, nil, ptr("local:///opt/app/main")
			s.Sparkplug = &SparkplugOptions{Launcher: ptr(LauncherSparkSubmit)}
		}, []wantErr{{"spark.mainApplicationFile", "must end in .py"}}},
		{"driver port out of range", func(s *spec) { s.Driver.Ports = []Port{{Name: "metrics", ContainerPort: 70000}} },
			[]wantErr{{"spark.driver.ports[0].containerPort", "between 1 and 65535"}}},
		{"executor port is one of Spark's own", func(s *spec) { s.Executor.Ports = []Port{{Name: "ui", ContainerPort: 4040}} },
			[]wantErr{{"spark.executor.ports[0].containerPort", "Spark's own ports"}}},
		{"port protocol", func(s *spec) { s.Driver.Ports = []Port{{Name: "m", Protocol: "HTTP", ContainerPort: 8080}} },
			[]wantErr{{"spark.driver.ports[0].protocol", "Unsupported value"}}},
		{"duplicate port name", func(s *spec) {
			s.Driver.Ports = []Port{{Name: "m", ContainerPort: 8080}, {Name: "m", ContainerPort: 8081}}
		}, []wantErr{{"spark.driver.ports[1].name", "Duplicate value"}}},
		{"envSecretKeyRefs without key", func(s *spec) { s.Driver.EnvSecretKeyRefs = map[string]NameKey{"PASSWORD": {Name: "db"}} },
			[]wantErr{{"spark.driver.envSecretKeyRefs[PASSWORD].key", "name the key"}}},
		{"envSecretKeyRefs bad variable name", func(s *spec) { s.Executor.EnvSecretKeyRefs = map[string]NameKey{"1BAD": {Name: "db", Key: "k"}} },
			[]wantErr{{"spark.executor.envSecretKeyRefs[1BAD]", ""}}},
		{"terminationGracePeriodSeconds negative", func(s *spec) { s.Driver.TerminationGracePeriodSeconds = ptr[int64](-5) },
			[]wantErr{{"spark.driver.terminationGracePeriodSeconds", "must be 0 or more seconds"}}},

		// versions and factors
		{"sparkVersion not a version", func(s *spec) { s.SparkVersion = "latest" },
			[]wantErr{{"spark.sparkVersion", `Invalid value: "latest": must be a Spark version like 3.5.1`}}},
		{"sparkVersion with a pre-release is valid", func(s *spec) { s.SparkVersion = "4.0.0-preview2" }, nil},
		{"pythonVersion", func(s *spec) { s.PythonVersion = ptr("3.11") },
			[]wantErr{{"spark.pythonVersion", `Unsupported value: "3.11": supported values: "2", "3"`}}},
		{"memoryOverheadFactor out of range", func(s *spec) { s.MemoryOverheadFactor = ptr("1.5") },
			[]wantErr{{"spark.memoryOverheadFactor", "must be a number from 0 up to (not including) 1"}}},
		{"proxyUser blank", func(s *spec) { s.ProxyUser = ptr("") },
			[]wantErr{{"spark.proxyUser", "must name a user"}}},

		// volumes, mounts, configMaps, secrets
		{"volumeMount of an unknown volume", func(s *spec) {
			s.Executor.VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
		},
			[]wantErr{{"spark.executor.volumeMounts[0].name", `Not found: "scratch": add a volume named "scratch" to spark.volumes`}}},
		{"volumeMount without a path", func(s *spec) { s.Driver.VolumeMounts = []corev1.VolumeMount{{Name: "data"}} },
			[]wantErr{{"spark.driver.volumeMounts[0].mountPath", "Required value"}}},
		{"volume names duplicate", func(s *spec) { s.Volumes = append(s.Volumes, corev1.Volume{Name: "data"}) },
			[]wantErr{{"spark.volumes[1].name", `Duplicate value: "data"`}}},
		{"volume name invalid", func(s *spec) { s.Volumes = append(s.Volumes, corev1.Volume{Name: "My.Vol"}) },
			[]wantErr{{"spark.volumes[1].name", "is not a volume name"}}},
		{"configMap without a name and with a relative path", func(s *spec) { s.Driver.ConfigMaps = []NamePath{{Path: "conf"}} },
			[]wantErr{
				{"spark.driver.configMaps[0].name", "Required value: give a ConfigMap name"},
				{"spark.driver.configMaps[0].path", `Invalid value: "conf": must be an absolute path`},
			}},
		{"secret type not supported", func(s *spec) { s.Executor.Secrets = []SecretInfo{{Name: "s", Path: "/s", Type: "Opaque"}} },
			[]wantErr{{"spark.executor.secrets[0].secretType", `Unsupported value: "Opaque": supported values: "GCPServiceAccount", "HadoopDelegationToken", "Generic"`}}},
		{"secret without type and path", func(s *spec) { s.Executor.Secrets = []SecretInfo{{Name: "s"}} },
			[]wantErr{
				{"spark.executor.secrets[0].path", "Required value"},
				{"spark.executor.secrets[0].secretType", "Required value"},
			}},

		// gpu, containers, java options
		{"gpu quantity zero", func(s *spec) { s.Executor.GPU = &GPUSpec{Name: "nvidia.com/gpu"} },
			[]wantErr{{"spark.executor.gpu.quantity", "must be at least 1"}}},
		{"gpu name missing", func(s *spec) { s.Executor.GPU = &GPUSpec{Quantity: 1} },
			[]wantErr{{"spark.executor.gpu.name", "must be a resource name such as nvidia.com/gpu"}}},
		{"sidecar named like the Spark container", func(s *spec) { s.Driver.Sidecars = []corev1.Container{{Name: "spark-kubernetes-driver", Image: "x"}} },
			[]wantErr{{"spark.driver.sidecars[0].name", "is the Spark container's name"}}},
		{"init container and sidecar share a name", func(s *spec) {
			s.Executor.InitContainers = []corev1.Container{{Name: "fetch", Image: "x"}}
			s.Executor.Sidecars = []corev1.Container{{Name: "fetch", Image: "y"}}
		}, []wantErr{{"spark.executor.sidecars[0].name", `Duplicate value: "fetch"`}}},
		{"sidecar without image", func(s *spec) { s.Driver.Sidecars = []corev1.Container{{Name: "log"}} },
			[]wantErr{{"spark.driver.sidecars[0].image", "Required value"}}},
		{"hostAlias without an IP", func(s *spec) { s.Driver.HostAliases = []corev1.HostAlias{{IP: "db", Hostnames: []string{"db"}}} },
			[]wantErr{{"spark.driver.hostAliases[0].ip", "must be an IP address"}}},
		{"driver javaOptions sets the heap", func(s *spec) { s.Driver.JavaOptions = ptr("-XX:+UseG1GC -Xmx4g") },
			[]wantErr{{"spark.driver.javaOptions", "must not set the heap size with -Xmx, which Spark rejects; set spark.driver.memory instead"}}},
		{"executor javaOptions sets the heap", func(s *spec) { s.Executor.JavaOptions = ptr("-Xmx2g") },
			[]wantErr{{"spark.executor.javaOptions", "set spark.executor.memory instead"}}},
		{"driver javaOptions sets a reserved Spark property", func(s *spec) {
			s.Driver.JavaOptions = ptr("-XX:+UseG1GC -Dspark.kubernetes.executor.decommissionLabel=x")
		}, []wantErr{{"spark.driver.javaOptions", "must not set Spark properties with -Dspark.*"}}},
		{"executor javaOptions sets a quoted Spark property", func(s *spec) { s.Executor.JavaOptions = ptr(`"-Dspark.driver.host=evil"`) },
			[]wantErr{{"spark.executor.javaOptions", "set them in sparkConf"}}},
		{"sparkConf JVM options set a Spark property", func(s *spec) {
			s.SparkConf = map[string]string{"spark.driver.extraJavaOptions": "-Dlog4j.configuration=x -Dspark.kubernetes.driver.pod.name=victim"}
		}, []wantErr{{"spark.sparkConf[spark.driver.extraJavaOptions]", "must not set Spark properties"}}},
		{"sparkConf default JVM options set the heap", func(s *spec) {
			s.SparkConf = map[string]string{"spark.executor.defaultJavaOptions": "-Xmx8g"}
		}, []wantErr{{"spark.sparkConf[spark.executor.defaultJavaOptions]", "set spark.executor.memory instead"}}},
		{"kubernetesMaster blank", func(s *spec) { s.Driver.KubernetesMaster = ptr(" ") },
			[]wantErr{{"spark.driver.kubernetesMaster", "must be the API server URL"}}},

		// deps
		{"package without a version", func(s *spec) { s.Deps.Packages = []string{"org.apache.spark:spark-avro_2.12"} },
			[]wantErr{{"spark.deps.packages[0]", "must be Maven coordinates groupId:artifactId:version"}}},
		{"package with a slash is valid", func(s *spec) { s.Deps.Packages = []string{"org.apache.spark/spark-avro_2.12:3.5.1"} }, nil},
		{"excludePackage with a version", func(s *spec) { s.Deps.ExcludePackages = []string{"org.slf4j:slf4j-log4j12:1.7"} },
			[]wantErr{{"spark.deps.excludePackages[0]", "must be groupId:artifactId"}}},
		{"empty jar", func(s *spec) { s.Deps.Jars = []string{"local:///a.jar", ""} },
			[]wantErr{{"spark.deps.jars[1]", "remove the empty entry"}}},

		// not supported yet
		{"driver podName", func(s *spec) { s.Driver.PodName = ptr("my-driver") },
			[]wantErr{{"spark.driver.podName", "Forbidden: not supported yet by sparkplug: sparkplug names the driver pod"}}},
		{"failureRetries points at restartPolicy", func(s *spec) { s.FailureRetries = ptr[int32](3) },
			[]wantErr{{"spark.failureRetries", "not supported yet by sparkplug: deprecated by the Spark operator; use spark.restartPolicy"}}},
	})
}
