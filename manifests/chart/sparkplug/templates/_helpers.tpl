{{/*
The namespaces the chart installs into: jobNamespaces, or the release's.
*/}}
{{- define "sparkplug.namespaces" -}}
{{- toJson (.Values.jobNamespaces | default (list .Release.Namespace)) -}}
{{- end -}}

{{/*
The chart's name in the app.kubernetes.io/name label: nameOverride, else
sparkplug.
*/}}
{{- define "sparkplug.name" -}}
{{- .Values.nameOverride | default "sparkplug" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The prefix of the names of the release's objects (<fullname>-monitor,
<fullname>-controller, the admission policy's <fullname>.<namespace>...):
fullnameOverride; else, with nameOverride, <release>-<nameOverride> (the
release's name alone when it holds nameOverride); else the release's name
(not Helm's usual <release>-<chart>: the names stay those of releases
installed before these values).
*/}}
{{- define "sparkplug.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if and .Values.nameOverride (not (contains .Values.nameOverride .Release.Name)) -}}
{{- printf "%s-%s" .Release.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/*
The prefix of the Roles the chart names for no release, one set per job
namespace (sparkplug-spark-driver, sparkplug-argo-agent): sparkplug, or
the fullname when nameOverride or fullnameOverride is set. The plugin's
spark-executor-plugin ConfigMap, ServiceAccount, token Secret and Role
keep their names whatever these say: Argo derives them from the plugin's
name, spark.
*/}}
{{- define "sparkplug.sharedPrefix" -}}
{{- if or .Values.nameOverride .Values.fullnameOverride -}}
{{- include "sparkplug.fullname" . -}}
{{- else -}}
sparkplug
{{- end -}}
{{- end -}}

{{/*
Labels of every object. Argo needs none of them; its own label on the
plugin ConfigMap is set there.
*/}}
{{- define "sparkplug.labels" -}}
app.kubernetes.io/name: {{ include "sparkplug.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/*
The sidecar's image: repository:tag, and @digest when one is set (the
runtime pulls by the digest; the tag says which release it is).
*/}}
{{- define "sparkplug.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- with .Values.image.digest }}@{{ . }}{{ end -}}
{{- end -}}

{{/*
"true" in controller mode (mode: controller), else empty.
*/}}
{{- define "sparkplug.controllerMode" -}}
{{- if eq .Values.mode "controller" }}true{{ end -}}
{{- end -}}

{{/*
The sidecar's args: serve on the loopback port the agent calls, then each
serve flag that is set, then extraArgs. A JSON list.
*/}}
{{- define "sparkplug.args" -}}
{{- $args := list "serve" "--addr=127.0.0.1:4355" -}}
{{- $args = concat $args (include "sparkplug.serveFlags" (dict "root" . "steps" false) | fromJsonArray) -}}
{{- toJson (concat $args .Values.extraArgs) -}}
{{- end -}}

{{/*
The serve.* flags that are set, "--name=value", in this order. Each pair's
third item says whether it is a step-running flag, which `sparkplug
controller` has too: with steps true (controller mode) only those; the
others are the sidecar's process and server settings, which the
controller takes from monitor.* or has not. A JSON list.
*/}}
{{- define "sparkplug.serveFlags" -}}
{{- $s := .root.Values.serve -}}
{{- $all := list
  (list "workers" $s.workers true)
  (list "resync" $s.resync true)
  (list "write-gap" $s.writeGap true)
  (list "progress-interval" $s.progressInterval true)
  (list "interim-hold" $s.interimHold true)
  (list "not-found-grace" $s.notFoundGrace true)
  (list "ttl-interval" $s.ttlInterval false)
  (list "ttl-leftover-interval" $s.ttlLeftoverInterval true)
  (list "shutdown-grace" $s.shutdownGrace false)
  (list "kube-api-qps" $s.kubeAPIQPS false)
  (list "kube-api-burst" $s.kubeAPIBurst false)
  (list "ingress-url-format" $s.ingressURLFormat true)
  (list "ingress-class-name" $s.ingressClassName true)
  (list "log-format" $s.logFormat false)
  (list "log-level" $s.logLevel false)
  (list "metrics-addr" $s.metricsAddr false)
  (list "launcher" $s.launcher true)
  (list "spark-home" $s.sparkHome true)
  (list "max-spark-submits" $s.maxSparkSubmits true)
  (list "submit-timeout" $s.submitTimeout true)
  (list "kubernetes-request-timeout" $s.kubernetesRequestTimeout true)
  (list "history-server-url" $s.historyServerURL true)
  (list "archive-logs" $s.archiveLogs true)
  (list "archive-logs-max-bytes" $s.archiveLogsMaxBytes true)
  (list "archive-logs-timeout" $s.archiveLogsTimeout true)
  (list "allowed-service-accounts" $s.allowedServiceAccounts true)
  (list "pod-security-level" $s.podSecurityLevel true)
  (list "allowed-ingress-host-suffixes" $s.allowedIngressHostSuffixes true)
  (list "allowed-ingress-annotation-prefixes" $s.allowedIngressAnnotationPrefixes true)
  (list "allow-ingress-snippets" $s.allowIngressSnippets true)
  (list "allowed-service-types" $s.allowedServiceTypes true)
  (list "kueue-queue" (include "sparkplug.kueueQueue" .root) true)
  (list "allowed-workload-priority-classes" .root.Values.kueue.allowedPriorityClasses true)
-}}
{{- $flags := list -}}
{{- range $all -}}
{{- if or (not $.steps) (index . 2) -}}
{{- $flags = append $flags (list (index . 0) (index . 1)) -}}
{{- end -}}
{{- end -}}
{{- include "sparkplug.flags" $flags -}}
{{- end -}}

{{/*
The LocalQueue of steps without a queue label, --kueue-queue of serve and
of the controller: kueue.defaultQueue, only with kueue.enabled (else
nothing of Kueue is rendered); set without it fails, as it would queue
steps whose account may not create Workloads.
*/}}
{{- define "sparkplug.kueueQueue" -}}
{{- if .Values.kueue.enabled -}}
{{- .Values.kueue.defaultQueue -}}
{{- else if .Values.kueue.defaultQueue -}}
{{- fail (printf "kueue.defaultQueue is %q but kueue.enabled is false: without kueue.enabled the steps' ServiceAccount may not create Kueue Workloads. Set --set kueue.enabled=true" .Values.kueue.defaultQueue) -}}
{{- end -}}
{{- end -}}

{{/*
Flags from a list of (name value) pairs: "--name=value" for each value
that is set (not null, not ""), in the list's order. A JSON list.
*/}}
{{- define "sparkplug.flags" -}}
{{- $args := list -}}
{{- range . -}}
{{- $v := index . 1 -}}
{{- if not (kindIs "invalid" $v) -}}
{{- $v = include "sparkplug.value" $v -}}
{{- if ne $v "" -}}
{{- $args = append $args (printf "--%s=%s" (index . 0) $v) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toJson $args -}}
{{- end -}}

{{/*
A value as a flag reads it. Numbers from YAML are float64: 1000000 would
print as 1e+06. A list is comma-separated (empty: no flag).
*/}}
{{- define "sparkplug.value" -}}
{{- if kindIs "slice" . -}}
{{- join "," . -}}
{{- else if and (kindIs "float64" .) (eq . (floor .)) -}}
{{- int64 . -}}
{{- else -}}
{{- toString . -}}
{{- end -}}
{{- end -}}

{{/*
The sidecar container, as plugin.yaml's spec.sidecar.container: toYaml
sorts the keys, so with the default values this is the YAML that
`make plugin` writes into manifests/spark-executor-plugin-configmap.yaml.
*/}}
{{- define "sparkplug.container" -}}
{{- $c := dict
  "name" "spark-executor-plugin"
  "image" (include "sparkplug.image" .)
  "args" (include "sparkplug.args" . | fromJsonArray)
  "ports" (list (dict "containerPort" 4355))
  "resources" .Values.resources
  "securityContext" (include "sparkplug.pluginSecurityContext" . | fromJson)
-}}
{{- $env := list -}}
{{- with .Values.goMemLimit -}}
{{- $env = append $env (dict "name" "GOMEMLIMIT" "value" .) -}}
{{- end -}}
{{- /* The agent pod's name and namespace, as plugin.yaml sets them: the
sidecar reads its own pod at start to learn its workflow. */ -}}
{{- $env = append $env (dict "name" "POD_NAME" "valueFrom" (dict "fieldRef" (dict "fieldPath" "metadata.name"))) -}}
{{- $env = append $env (dict "name" "POD_NAMESPACE" "valueFrom" (dict "fieldRef" (dict "fieldPath" "metadata.namespace"))) -}}
{{- $_ := set $c "env" $env -}}
{{- with .Values.image.pullPolicy -}}
{{- $_ := set $c "imagePullPolicy" . -}}
{{- end -}}
{{- toYaml $c -}}
{{- end -}}

{{/*
The plugin container's securityContext, the sidecar's and the
acknowledger's: uid 8737, which reads the agent's token file (plugin.yaml
says why). A JSON object.
*/}}
{{- define "sparkplug.pluginSecurityContext" -}}
{{- toJson (dict
    "runAsNonRoot" true
    "runAsUser" 8737
    "runAsGroup" 8737
    "readOnlyRootFilesystem" true
    "allowPrivilegeEscalation" false
    "privileged" false
    "capabilities" (dict "drop" (list "ALL"))
    "seccompProfile" (dict "type" "RuntimeDefault")) -}}
{{- end -}}

{{/*
The acknowledger's image (controller mode), as sparkplug.image.
*/}}
{{- define "sparkplug.ackImage" -}}
{{ .Values.ackImage.repository }}:{{ .Values.ackImage.tag | default .Chart.AppVersion }}
{{- with .Values.ackImage.digest }}@{{ . }}{{ end -}}
{{- end -}}

{{/*
Controller mode's plugin container, the acknowledger, as plugin-ack.yaml's
spec.sidecar.container: with the default values the YAML `make plugin`
writes into manifests/modes/controller/spark-executor-plugin-configmap.yaml.
Same name (the agent's token is under /var/run/argo/<name>) and port as
the sidecar's.
*/}}
{{- define "sparkplug.ackContainer" -}}
{{- $c := dict
  "name" "spark-executor-plugin"
  "image" (include "sparkplug.ackImage" .)
  "args" (list "--addr=127.0.0.1:4355")
  "ports" (list (dict "containerPort" 4355))
  "resources" .Values.controller.ackResources
  "securityContext" (include "sparkplug.pluginSecurityContext" . | fromJson)
-}}
{{- with .Values.ackImage.pullPolicy -}}
{{- $_ := set $c "imagePullPolicy" . -}}
{{- end -}}
{{- toYaml $c -}}
{{- end -}}

{{/*
The ServiceAccount that runs the Spark steps, for the extra Roles
(spark-submit, log archive, Kueue) of a job namespace ns: the sidecar's,
spark-executor-plugin of ns, or in controller mode the controller's, in
the release's namespace; and the prefix of those Roles' names. A JSON
object: {"name", "namespace", "prefix"}. Called with (list $ ns).
*/}}
{{- define "sparkplug.stepAccount" -}}
{{- $root := index . 0 -}}
{{- if include "sparkplug.controllerMode" $root -}}
{{- $name := include "sparkplug.monitor.fullname" $root -}}
{{- toJson (dict "name" $name "namespace" $root.Release.Namespace "prefix" $name) -}}
{{- else -}}
{{- toJson (dict "name" "spark-executor-plugin" "namespace" (index . 1) "prefix" "spark-executor-plugin") -}}
{{- end -}}
{{- end -}}

{{/*
sparkplug.sparkSubmitRBAC is "true" when the steps' ServiceAccount gets
spark-submit's patch on ConfigMaps and Services: rbac.sparkSubmit, or, when
it is null, whether serve.sparkHome is set (the spark-submit launcher can
run). Empty otherwise.
*/}}
{{- define "sparkplug.sparkSubmitRBAC" -}}
{{- if kindIs "bool" .Values.rbac.sparkSubmit -}}
{{- if .Values.rbac.sparkSubmit }}true{{ end -}}
{{- else if .Values.serve.sparkHome -}}
true
{{- end -}}
{{- end -}}

{{/*
Fails when the plugin ConfigMap would go into the namespace of Argo's
workflow-controller (argo.namespace) and argo.allowControllerNamespace is
not set. Argo gives an agent pod the plugins of its workflow's namespace
and of its own: a ConfigMap there reaches every namespace's agent pods.
With the sidecar, those of a namespace without the plugin's ServiceAccount
fail (Argo mounts its token); with the acknowledger, Spark steps of a
namespace the controller has no Role in are acknowledged and never run.
*/}}
{{- define "sparkplug.checkArgoNamespace" -}}
{{- $argo := .Values.argo.namespace -}}
{{- if and $argo (not .Values.argo.allowControllerNamespace) (has $argo (include "sparkplug.namespaces" . | fromJsonArray)) -}}
{{- $what := "jobNamespaces lists it" -}}
{{- if not .Values.jobNamespaces -}}
{{- $what = "jobNamespaces is empty, so the release's namespace (-n) is the job namespace" -}}
{{- end -}}
{{- $harm := "the sparkplug sidecar, and they fail in every namespace without the ServiceAccount spark-executor-plugin" -}}
{{- if include "sparkplug.controllerMode" . -}}
{{- $harm = "the acknowledger, which acknowledges Spark steps of namespaces sparkplug controller has no Role in: they never run" -}}
{{- end -}}
{{- fail (printf "the plugin ConfigMap would go into namespace %q, that of Argo's workflow-controller (argo.namespace), as %s: Argo would give the agent pods of EVERY namespace %s. List the namespaces that run Spark steps in jobNamespaces (e.g. --set 'jobNamespaces={team-a,team-b}'); set argo.namespace if Argo runs elsewhere; or, if Argo manages this namespace only (a namespaced install) or every namespace is meant to run Spark steps, allow it with --set argo.allowControllerNamespace=true" $argo $what $harm) -}}
{{- end -}}
{{- end -}}

{{/*
The name of helm test's ServiceAccount, Role and RoleBinding, and the
prefix of its Pods and Workflows: <fullname>-sparkplug-test, or
<fullname>-test when the fullname says sparkplug.
*/}}
{{- define "sparkplug.tests.name" -}}
{{- $name := include "sparkplug.fullname" . -}}
{{- if not (contains "sparkplug" $name) -}}
{{- $name = printf "%s-sparkplug" $name -}}
{{- end -}}
{{- printf "%s-test" ($name | trunc 40 | trimSuffix "-") -}}
{{- end -}}

{{/*
The images this release runs that are the chart's default repository
without a digest: no release is published there yet (docs/install.md,
Install from a clone), so nothing can pull them. A release's packaged
chart pins its images by digest. A JSON list of the images.
*/}}
{{- define "sparkplug.unpublishedImages" -}}
{{- $images := list -}}
{{- $controller := include "sparkplug.controllerMode" . -}}
{{- if and (not $controller) (eq .Values.image.repository "ghcr.io/sparkplug-io/sparkplug") (not .Values.image.digest) -}}
{{- $images = append $images (include "sparkplug.image" .) -}}
{{- end -}}
{{- if include "sparkplug.monitor.enabled" . -}}
{{- $m := .Values.monitor.image -}}
{{- $repository := $m.repository | default .Values.image.repository -}}
{{- $digest := ternary $m.digest .Values.image.digest (ne $m.repository "") -}}
{{- if and (eq $repository "ghcr.io/sparkplug-io/sparkplug") (not $digest) -}}
{{- $images = append $images (include "sparkplug.monitor.image" .) -}}
{{- end -}}
{{- end -}}
{{- if and $controller (eq .Values.ackImage.repository "ghcr.io/sparkplug-io/sparkplug-ack") (not .Values.ackImage.digest) -}}
{{- $images = append $images (include "sparkplug.ackImage" .) -}}
{{- end -}}
{{- toJson (uniq $images) -}}
{{- end -}}

{{/*
" (annotated KEY, ...)" for a ServiceAccount's annotations in NOTES.txt,
or nothing without any. Called with the annotations.
*/}}
{{- define "sparkplug.annotationKeys" -}}
{{- with . }} (annotated {{ keys . | sortAlpha | join ", " }}){{ end -}}
{{- end -}}
