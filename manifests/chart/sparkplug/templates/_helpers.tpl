{{/*
The namespaces the chart installs into: jobNamespaces, or the release's.
*/}}
{{- define "sparkplug.namespaces" -}}
{{- toJson (.Values.jobNamespaces | default (list .Release.Namespace)) -}}
{{- end -}}

{{/*
Labels of every object. Argo needs none of them; its own label on the
plugin ConfigMap is set there.
*/}}
{{- define "sparkplug.labels" -}}
app.kubernetes.io/name: sparkplug
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
The sidecar's args: serve on the loopback port the agent calls, then each
serve flag that is set, then extraArgs. A JSON list.
*/}}
{{- define "sparkplug.args" -}}
{{- $args := list "serve" "--addr=127.0.0.1:4355" -}}
{{- $flags := list
  (list "workers" .Values.serve.workers)
  (list "resync" .Values.serve.resync)
  (list "write-gap" .Values.serve.writeGap)
  (list "progress-interval" .Values.serve.progressInterval)
  (list "not-found-grace" .Values.serve.notFoundGrace)
  (list "ttl-interval" .Values.serve.ttlInterval)
  (list "ttl-leftover-interval" .Values.serve.ttlLeftoverInterval)
  (list "shutdown-grace" .Values.serve.shutdownGrace)
  (list "kube-api-qps" .Values.serve.kubeAPIQPS)
  (list "kube-api-burst" .Values.serve.kubeAPIBurst)
  (list "ingress-url-format" .Values.serve.ingressURLFormat)
  (list "ingress-class-name" .Values.serve.ingressClassName)
  (list "log-format" .Values.serve.logFormat)
  (list "log-level" .Values.serve.logLevel)
  (list "metrics-addr" .Values.serve.metricsAddr)
  (list "launcher" .Values.serve.launcher)
  (list "spark-home" .Values.serve.sparkHome)
  (list "max-spark-submits" .Values.serve.maxSparkSubmits)
  (list "submit-timeout" .Values.serve.submitTimeout)
  (list "kubernetes-request-timeout" .Values.serve.kubernetesRequestTimeout)
  (list "history-server-url" .Values.serve.historyServerURL)
  (list "archive-logs" .Values.serve.archiveLogs)
  (list "archive-logs-max-bytes" .Values.serve.archiveLogsMaxBytes)
  (list "archive-logs-timeout" .Values.serve.archiveLogsTimeout)
  (list "allowed-service-accounts" .Values.serve.allowedServiceAccounts)
  (list "pod-security-level" .Values.serve.podSecurityLevel)
  (list "allowed-ingress-host-suffixes" .Values.serve.allowedIngressHostSuffixes)
  (list "allowed-ingress-annotation-prefixes" .Values.serve.allowedIngressAnnotationPrefixes)
  (list "allow-ingress-snippets" .Values.serve.allowIngressSnippets)
  (list "allowed-service-types" .Values.serve.allowedServiceTypes)
-}}
{{- $args = concat $args (include "sparkplug.flags" $flags | fromJsonArray) -}}
{{- toJson (concat $args .Values.extraArgs) -}}
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
  "securityContext" (dict
    "runAsNonRoot" true
    "runAsUser" 8737
    "runAsGroup" 8737
    "readOnlyRootFilesystem" true
    "allowPrivilegeEscalation" false
    "privileged" false
    "capabilities" (dict "drop" (list "ALL"))
    "seccompProfile" (dict "type" "RuntimeDefault"))
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
sparkplug.sparkSubmitRBAC is "true" when the plugin's ServiceAccount gets
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
