{{/*
sparkplug monitor (monitor.enabled), or in controller mode sparkplug
controller, which does the monitor's work and the sidecars': the names and
args their templates share. The controller is rendered by the monitor's
templates, as component controller, with monitor.*'s settings but those of
controller.* (sparkplug.monitor.settings).
*/}}

{{/*
"true" when the monitor's templates render: monitor.enabled, or controller
mode. Both at once is refused: the controller replaces the monitor.
*/}}
{{- define "sparkplug.monitor.enabled" -}}
{{- if include "sparkplug.controllerMode" . -}}
{{- if .Values.monitor.enabled -}}
{{- fail "mode controller replaces the monitor (sparkplug controller does its work): set monitor.enabled=false; monitor.* other settings apply to the controller" -}}
{{- end -}}
true
{{- else if .Values.monitor.enabled -}}
true
{{- end -}}
{{- end -}}

{{/*
monitor or controller: the component label, the first argument and the
container's name.
*/}}
{{- define "sparkplug.monitor.component" -}}
{{- if include "sparkplug.controllerMode" . }}controller{{ else }}monitor{{ end -}}
{{- end -}}

{{/*
monitor.* with, in controller mode, controller.*'s replicas, resources,
goMemLimit, extraArgs and serviceAccount over them, and its nodeSelector,
tolerations, affinity and priorityClassName where they are set. A JSON
object.
*/}}
{{- define "sparkplug.monitor.settings" -}}
{{- $m := deepCopy .Values.monitor -}}
{{- if include "sparkplug.controllerMode" . -}}
{{- $c := .Values.controller -}}
{{- $_ := set $m "replicas" $c.replicas -}}
{{- $_ = set $m "resources" $c.resources -}}
{{- $_ = set $m "goMemLimit" $c.goMemLimit -}}
{{- $_ = set $m "extraArgs" $c.extraArgs -}}
{{- $_ = set $m "serviceAccount" $c.serviceAccount -}}
{{- range $k := list "nodeSelector" "tolerations" "affinity" "priorityClassName" -}}
{{- with index $c $k -}}
{{- $_ = set $m $k . -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toJson $m -}}
{{- end -}}

{{/*
The name of the monitor's Deployment, ServiceAccount, Service, Roles and
Lease: <fullname>-monitor (<fullname>-controller), so two releases in one
namespace keep apart.
*/}}
{{- define "sparkplug.monitor.fullname" -}}
{{- printf "%s-%s" (include "sparkplug.fullname" .) (include "sparkplug.monitor.component" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The labels the Deployment selects its pods by, and the Service and the
ServiceMonitor select by.
*/}}
{{- define "sparkplug.monitor.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sparkplug.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: {{ include "sparkplug.monitor.component" . }}
{{- end -}}

{{/*
Labels of every monitor object.
*/}}
{{- define "sparkplug.monitor.labels" -}}
{{ include "sparkplug.labels" . }}
app.kubernetes.io/component: {{ include "sparkplug.monitor.component" . }}
{{- end -}}

{{/*
The monitor's image: monitor.image when its repository is set, else the
sidecar's (image.*, which a release pins).
*/}}
{{- define "sparkplug.monitor.image" -}}
{{- with .Values.monitor.image.repository -}}
{{ . }}:{{ $.Values.monitor.image.tag | default $.Chart.AppVersion }}
{{- with $.Values.monitor.image.digest }}@{{ . }}{{ end -}}
{{- else -}}
{{ include "sparkplug.image" . }}
{{- end -}}
{{- end -}}

{{/*
The monitor's args: the job namespaces, the metrics and health addresses
of its container ports, the Lease's name, then each monitor flag that is
set, then (the controller) serve.*'s step flags, then extraArgs. A JSON
list.
*/}}
{{- define "sparkplug.monitor.args" -}}
{{- $m := include "sparkplug.monitor.settings" . | fromJson -}}
{{- $namespaces := include "sparkplug.namespaces" . | fromJsonArray -}}
{{- $args := list (include "sparkplug.monitor.component" .)
  (printf "--namespaces=%s" (join "," $namespaces))
  "--metrics-addr=:9090"
  "--health-addr=:8081"
  (printf "--leader-elect=%t" $m.leaderElect)
-}}
{{- if $m.leaderElect -}}
{{- $args = append $args (printf "--leader-election-id=%s" (include "sparkplug.monitor.fullname" .)) -}}
{{- end -}}
{{- $flags := list
  (list "metrics-labels" (join "," ($m.metricsLabels | default list)))
  (list "metrics-job-start-latency-buckets" (include "sparkplug.numbers" $m.jobStartLatencyBuckets))
  (list "ttl-interval" $m.ttlInterval)
  (list "kube-api-qps" $m.kubeAPIQPS)
  (list "kube-api-burst" $m.kubeAPIBurst)
  (list "log-level" $m.logLevel)
  (list "log-format" $m.logFormat)
-}}
{{- $args = concat $args (include "sparkplug.flags" $flags | fromJsonArray) -}}
{{- if include "sparkplug.controllerMode" . -}}
{{- $args = concat $args (include "sparkplug.serveFlags" (dict "root" . "steps" true) | fromJsonArray) -}}
{{- end -}}
{{- toJson (concat $args ($m.extraArgs | default list)) -}}
{{- end -}}

{{/*
A list of numbers as one flag value, comma-separated, each as a flag
reads it ("" for none).
*/}}
{{- define "sparkplug.numbers" -}}
{{- $out := list -}}
{{- range . -}}
{{- $out = append $out (include "sparkplug.value" .) -}}
{{- end -}}
{{- join "," $out -}}
{{- end -}}
