{{/*
The ServiceAccounts of the release's namespace that are bound in every job
namespace: the controller's (mode: controller), the monitor's
(monitor.enabled) and helm test's (tests.enabled). A JSON list of
{"value", "name"}.
*/}}
{{- define "sparkplug.releaseAccounts" -}}
{{- $out := list -}}
{{- if include "sparkplug.monitor.enabled" . -}}
{{- $value := "monitor.enabled=true" -}}
{{- if include "sparkplug.controllerMode" . -}}
{{- $value = "mode=controller" -}}
{{- end -}}
{{- $out = append $out (dict "value" $value "name" (include "sparkplug.monitor.fullname" .)) -}}
{{- end -}}
{{- if .Values.tests.enabled -}}
{{- $out = append $out (dict "value" "tests.enabled=true" "name" (include "sparkplug.tests.name" .)) -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/*
Fails when the release's namespace is a job namespace beside others while
one of sparkplug.releaseAccounts is enabled. Argo lets a Workflow run its
steps as any ServiceAccount of its namespace: a workflow author of the
release's namespace could run a plain container step as that account and
act with its Role in every other job namespace. One job namespace that is
the release's own (jobNamespaces empty, the default) is allowed: the
account reaches no namespace its workflows' authors do not already work in.
*/}}
{{- define "sparkplug.checkReleaseNamespace" -}}
{{- $namespaces := include "sparkplug.namespaces" . | fromJsonArray -}}
{{- $accounts := include "sparkplug.releaseAccounts" . | fromJsonArray -}}
{{- if and $accounts (gt (len $namespaces) 1) (has .Release.Namespace $namespaces) -}}
{{- $what := list -}}
{{- range $accounts -}}
{{- $what = append $what (printf "%s (ServiceAccount %s)" .value .name) -}}
{{- end -}}
{{- $others := without $namespaces .Release.Namespace -}}
{{- fail (printf "the release's namespace %q is listed in jobNamespaces while %s is enabled: that ServiceAccount lives in %q and is bound in every job namespace, and Argo lets any Workflow of %q run a step as it, so any workflow author there could act in %s. Install the release into a namespace of its own that runs no workflows (helm install -n sparkplug-system ... --set 'jobNamespaces={%s}'), or take %q out of jobNamespaces" .Release.Namespace (join ", " $what) .Release.Namespace .Release.Namespace (join ", " $others) (join "," $namespaces) .Release.Namespace) -}}
{{- end -}}
{{- end -}}

{{/*
"true" when the admission policy is rendered: admissionPolicy.enabled true;
or null, and the cluster serves admissionregistration.k8s.io/v1
ValidatingAdmissionPolicy (helm template: --api-versions
admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy).
*/}}
{{- define "sparkplug.admissionPolicy" -}}
{{- $v := .Values.admissionPolicy.enabled -}}
{{- if kindIs "bool" $v -}}
{{- if $v }}true{{ end -}}
{{- else if .Capabilities.APIVersions.Has "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy" -}}
true
{{- end -}}
{{- end -}}

{{/*
The admission policy's and binding's name: cluster-scoped, so the
release's (its fullname) and its namespace's.
*/}}
{{- define "sparkplug.admissionPolicyName" -}}
{{- printf "%s.%s.sparkplug.io" (include "sparkplug.fullname" .) .Release.Namespace -}}
{{- end -}}

{{/*
The names the admission policy gives its rules, exactly as this release
creates them. A JSON object:
  sparkplug       usernames of the accounts that run Spark steps: the
                  plugin's of each job namespace, or the controller's
  protected       NAMESPACE:NAME of the accounts no pod made by a
                  ServiceAccount may run as: those, the monitor's, helm
                  test's (helm, run by a person, makes its pods), Argo's
                  (argo.serviceAccounts)
  tokens          the token Secrets no pod may mount or read (but the
                  plugin's, in an agent pod)
  argoController  the username of Argo's workflow-controller, or, with
                  argo.controllerServiceAccount empty, the prefix of every
                  ServiceAccount of argo.namespace (ending in ":")
  trusted         admissionPolicy.trustedUsers
  namespaces      where the binding holds: the job namespaces, the
                  release's, Argo's
*/}}
{{- define "sparkplug.admissionNames" -}}
{{- $sparkplug := list -}}
{{- $protected := list -}}
{{- $tokens := list "spark-executor-plugin.service-account-token" -}}
{{- if include "sparkplug.controllerMode" . -}}
{{- $name := include "sparkplug.monitor.fullname" . -}}
{{- $sparkplug = append $sparkplug (printf "system:serviceaccount:%s:%s" .Release.Namespace $name) -}}
{{- else -}}
{{- range $ns := include "sparkplug.namespaces" . | fromJsonArray -}}
{{- $sparkplug = append $sparkplug (printf "system:serviceaccount:%s:spark-executor-plugin" $ns) -}}
{{- $protected = append $protected (printf "%s:spark-executor-plugin" $ns) -}}
{{- end -}}
{{- end -}}
{{- if include "sparkplug.monitor.enabled" . -}}
{{- $name := include "sparkplug.monitor.fullname" . -}}
{{- $protected = append $protected (printf "%s:%s" .Release.Namespace $name) -}}
{{- $tokens = append $tokens (printf "%s.service-account-token" $name) -}}
{{- end -}}
{{- if .Values.tests.enabled -}}
{{- $protected = append $protected (printf "%s:%s" .Release.Namespace (include "sparkplug.tests.name" .)) -}}
{{- end -}}
{{- $argo := .Values.argo -}}
{{- range $argo.serviceAccounts -}}
{{- $protected = append $protected (printf "%s:%s" $argo.namespace .) -}}
{{- $tokens = append $tokens (printf "%s.service-account-token" .) -}}
{{- end -}}
{{- $namespaces := concat (include "sparkplug.namespaces" . | fromJsonArray) (list .Release.Namespace $argo.namespace) -}}
{{- toJson (dict
  "namespaces" (uniq $namespaces)
  "sparkplug" $sparkplug
  "protected" (uniq $protected)
  "tokens" (uniq $tokens)
  "argoController" (printf "system:serviceaccount:%s:%s" $argo.namespace $argo.controllerServiceAccount)
  "trusted" (.Values.admissionPolicy.trustedUsers | default list)) -}}
{{- end -}}
