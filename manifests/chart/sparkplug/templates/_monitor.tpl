{{/*
sparkplug monitor (monitor.enabled): the names and args its templates
share.
*/}}

{{/*
The name of the monitor's Deployment, ServiceAccount, Service, Roles and
Lease: <release>-monitor, so two releases in one namespace keep apart.
*/}}
{{- define "sparkplug.monitor.fullname" -}}
{{- printf "%s-monitor" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The labels the Deployment selects its pods by, and the Service and the
ServiceMonitor select by.
*/}}
{{- define "sparkplug.monitor.selectorLabels" -}}
app.kubernetes.io/name: sparkplug
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: monitor
{{- end -}}

{{/*
Labels of every monitor object.
*/}}
{{- define "sparkplug.monitor.labels" -}}
{{ include "sparkplug.labels" . }}
app.kubernetes.io/component: monitor
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
set, then monitor.extraArgs. A JSON list.
*/}}
{{- define "sparkplug.monitor.args" -}}
{{- $m := .Values.monitor -}}
{{- $namespaces := include "sparkplug.namespaces" . | fromJsonArray -}}
{{- $args := list "monitor"
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
