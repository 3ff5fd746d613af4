package policy

import (
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/setting"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/templates"
)

// base is a valid body every case adds to.
const base = `
type: Scala
mode: cluster
image: spark:3.5.3
sparkVersion: 3.5.3
mainClass: org.apache.spark.examples.SparkPi
mainApplicationFile: local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar
`

// build parses base plus extra and builds its objects as the plugin
// does.
func build(t *testing.T, extra string) (*spec.SparkApplicationSpec, *objects.Set) {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(base + extra))
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.ParseWith(raw, spec.PluginDefaults{})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	b, err := objects.New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := b.Build(s, objects.Run{Workflow: spark.WorkflowRef{Name: "wf", Namespace: "ns", UID: "uid-1"}, NodeID: "wf-1", TemplateKey: "key", Attempt: 1})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return s, objs
}

func TestCheck(t *testing.T) {
	def := Default()
	with := func(f func(*Policy)) Policy { p := Default(); f(&p); return p }
	for _, tc := range []struct {
		name   string
		policy Policy
		body   string
		// want are the parts of the message, each the field, the rule and
		// a word of the detail; none: allowed.
		want []string
	}{
		{"a service account of its own", def, "driver: {serviceAccount: spark}\nexecutor: {serviceAccount: spark}", nil},
		{"the driver as the plugin", def, "driver: {serviceAccount: spark-executor-plugin}",
			[]string{"spark.driver.serviceAccount: ServiceAccount spark-executor-plugin is the plugin's own", "(policy rule plugin-service-account)"}},
		{"the executors as the plugin", def, "driver: {serviceAccount: spark}\nexecutor: {serviceAccount: spark-executor-plugin}",
			[]string{"spark.executor.serviceAccount: ServiceAccount spark-executor-plugin is the plugin's own"}},
		{"the plugin through the driver's template", def, "driver: {template: {spec: {serviceAccountName: spark-executor-plugin}}}",
			[]string{"spark.driver.template.spec.serviceAccountName: ServiceAccount spark-executor-plugin is the plugin's own"}},
		{"the plugin through the deprecated field of the executors' template", def, "executor: {template: {spec: {serviceAccount: spark-executor-plugin}}}",
			[]string{"spark.executor.template.spec.serviceAccount: ServiceAccount spark-executor-plugin", "plugin-service-account"}},
		{"a plugin account learnt from the token", Policy{PluginServiceAccounts: []string{DefaultPluginServiceAccount, "argo-spark"}}, "driver: {serviceAccount: argo-spark}",
			[]string{"spark.driver.serviceAccount: ServiceAccount argo-spark is the plugin's own"}},
		{"an allowed account", with(func(p *Policy) { p.ServiceAccounts = []string{"spark"} }), "driver: {serviceAccount: spark}", nil},
		{"an account not allowed", with(func(p *Policy) { p.ServiceAccounts = []string{"spark"} }), "driver: {serviceAccount: spark}\nexecutor: {serviceAccount: other}",
			[]string{"spark.executor.serviceAccount: ServiceAccount other is not one the plugin allows (spark)", "allowed-service-accounts"}},
		{"no account: default, not allowed", with(func(p *Policy) { p.ServiceAccounts = []string{"spark"} }), "",
			[]string{"spark.driver.serviceAccount: not set, so the pods run as ServiceAccount default", "allowed-service-accounts"}},

		{"another secret mounted", def, "driver: {secrets: [{name: db, path: /db, secretType: Generic}]}", nil},
		{"the token secret mounted", def, "driver: {secrets: [{name: spark-executor-plugin.service-account-token, path: /t, secretType: Generic}]}",
			[]string{"spark.driver.secrets[0].name: Secret spark-executor-plugin.service-account-token is named as the token of the plugin's ServiceAccount", "plugin-token-secret"}},
		{"a legacy token secret in the executors' conf", def, "sparkConf: {spark.kubernetes.executor.secrets.spark-executor-plugin-token-x4k2p: /t}",
			[]string{"spark.sparkConf[spark.kubernetes.executor.secrets.spark-executor-plugin-token-x4k2p]: Secret spark-executor-plugin-token-x4k2p", "plugin-token-secret"}},
		{"the token as an executor env var", def, "executor: {envSecretKeyRefs: {T: {name: spark-executor-plugin.service-account-token, key: token}}}",
			[]string{"spark.executor.envSecretKeyRefs[T].name: Secret spark-executor-plugin.service-account-token", "plugin-token-secret"}},
		{"the token through envFrom of a sidecar", def, "driver: {sidecars: [{name: s, image: busybox, envFrom: [{secretRef: {name: spark-executor-plugin.service-account-token}}]}]}",
			[]string{"spark.driver.sidecars[0].envFrom[0].secretRef.name: Secret spark-executor-plugin.service-account-token", "plugin-token-secret"}},
		{"the token as a projected volume", def, `
volumes: [{name: t, projected: {sources: [{secret: {name: spark-executor-plugin.service-account-token}}]}}]
executor: {volumeMounts: [{name: t, mountPath: /t}]}`,
			[]string{"spark.volumes[0].projected.sources[0].secret.name: Secret spark-executor-plugin.service-account-token", "plugin-token-secret"}},
		{"a token of the pod's own account, another audience", def, `
volumes: [{name: t, projected: {sources: [{serviceAccountToken: {audience: vault, path: token}}]}}]
driver: {serviceAccount: spark, volumeMounts: [{name: t, mountPath: /t}]}`, nil},

		{"baseline off: a hostPath", def, "volumes: [{name: h, hostPath: {path: /}}]\ndriver: {volumeMounts: [{name: h, mountPath: /h}]}", nil},
		{"baseline: the default pods", with(func(p *Policy) { p.PodSecurity = LevelBaseline }), "", nil},
		{"baseline: a hostPath", with(func(p *Policy) { p.PodSecurity = LevelBaseline }), "volumes: [{name: h, hostPath: {path: /}}]\ndriver: {volumeMounts: [{name: h, mountPath: /h}]}",
			[]string{`spark.driver: the driver pod does not meet Pod Security Standard "baseline": hostPath volumes (volume "h")`, "pod-security-level"}},
		{"baseline: a hostPath in the executors' conf", with(func(p *Policy) { p.PodSecurity = LevelBaseline }),
			"sparkConf: {spark.kubernetes.executor.volumes.hostPath.h.mount.path: /h, spark.kubernetes.executor.volumes.hostPath.h.options.path: /}",
			[]string{`spark.executor: the executor pod does not meet Pod Security Standard "baseline": hostPath volumes (volume "h")`}},
		{"baseline: privileged executors", with(func(p *Policy) { p.PodSecurity = LevelBaseline }), "executor: {securityContext: {privileged: true}}",
			[]string{`spark.executor: the executor pod does not meet Pod Security Standard "baseline": privileged`}},
		{"restricted: the default pods", with(func(p *Policy) { p.PodSecurity = LevelRestricted }), "",
			[]string{`spark.driver: the driver pod does not meet Pod Security Standard "restricted"`, "pod-security-level"}},
		{"restricted: pods that meet it", with(func(p *Policy) { p.PodSecurity = LevelRestricted }), `
driver: {podSecurityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}, securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}
executor: {podSecurityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}, securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}`, nil},

		{"any host by default", def, "sparkUIOptions: {}\nsparkplug: {uiIngress: {urlFormat: 'spark.evil.example'}}", nil},
		{"a host in an allowed domain", with(func(p *Policy) { p.IngressHostSuffixes = []string{"spark.example.com"} }),
			"sparkUIOptions: {}\nsparkplug: {uiIngress: {urlFormat: '{{$appName}}.spark.example.com'}}", nil},
		{"a host in another domain", with(func(p *Policy) { p.IngressHostSuffixes = []string{"spark.example.com"} }),
			"sparkUIOptions: {}\nsparkplug: {uiIngress: {urlFormat: 'login.example.com'}}",
			[]string{"spark.sparkplug.uiIngress.urlFormat: host login.example.com is not in a domain the plugin allows (spark.example.com)", "allowed-ingress-host-suffixes"}},
		{"a suffix that is no domain boundary", with(func(p *Policy) { p.IngressHostSuffixes = []string{"example.com"} }),
			"driverIngressOptions: [{servicePort: 8080, servicePortName: web, ingressURLFormat: 'evilexample.com'}]",
			[]string{"spark.driverIngressOptions[0].ingressURLFormat: host evilexample.com is not in a domain"}},
		{"no host at all", with(func(p *Policy) { p.IngressHostSuffixes = []string{"example.com"} }),
			"driverIngressOptions: [{servicePort: 8080, servicePortName: web, ingressURLFormat: '/{{$appName}}'}]",
			[]string{"spark.driverIngressOptions[0].ingressURLFormat: an Ingress without a host routes every host"}},
		{"a TLS host in another domain", with(func(p *Policy) { p.IngressHostSuffixes = []string{"example.com"} }),
			"sparkUIOptions: {ingressTLS: [{hosts: [bank.example.org], secretName: s}]}\nsparkplug: {uiIngress: {urlFormat: 'ui.example.com'}}",
			[]string{"spark.sparkUIOptions.ingressTLS[0].hosts: host bank.example.org"}},

		{"an ordinary annotation", def, "sparkUIOptions: {ingressAnnotations: {nginx.ingress.kubernetes.io/proxy-body-size: 8m}}\nsparkplug: {uiIngress: {urlFormat: 'ui.example.com'}}", nil},
		{"a configuration snippet", def, "sparkUIOptions: {ingressAnnotations: {nginx.ingress.kubernetes.io/configuration-snippet: 'more_set_headers x'}}\nsparkplug: {uiIngress: {urlFormat: 'ui.example.com'}}",
			[]string{"spark.sparkUIOptions.ingressAnnotations[nginx.ingress.kubernetes.io/configuration-snippet]: a snippet annotation", "allow-ingress-snippets"}},
		{"a server snippet on a driver ingress", def, "driverIngressOptions: [{servicePort: 8080, servicePortName: web, ingressURLFormat: 'x.example.com', ingressAnnotations: {nginx.ingress.kubernetes.io/server-snippet: 'location /'}}]",
			[]string{"spark.driverIngressOptions[0].ingressAnnotations[nginx.ingress.kubernetes.io/server-snippet]: a snippet annotation"}},
		{"snippets allowed", with(func(p *Policy) { p.AllowIngressSnippets = true }), "sparkUIOptions: {ingressAnnotations: {nginx.ingress.kubernetes.io/auth-snippet: x}}\nsparkplug: {uiIngress: {urlFormat: 'ui.example.com'}}", nil},
		{"an annotation with an allowed prefix", with(func(p *Policy) { p.IngressAnnotationPrefixes = []string{"nginx.ingress.kubernetes.io/proxy-"} }),
			"sparkUIOptions: {ingressAnnotations: {nginx.ingress.kubernetes.io/proxy-body-size: 8m}}\nsparkplug: {uiIngress: {urlFormat: 'ui.example.com/{{$appName}}'}}", nil},
		{"an annotation without one", with(func(p *Policy) { p.IngressAnnotationPrefixes = []string{"nginx.ingress.kubernetes.io/proxy-"} }),
			"sparkUIOptions: {ingressAnnotations: {nginx.ingress.kubernetes.io/auth-url: 'http://x'}}\nsparkplug: {uiIngress: {urlFormat: 'ui.example.com'}}",
			[]string{"spark.sparkUIOptions.ingressAnnotations[nginx.ingress.kubernetes.io/auth-url]: the annotation's key has none of the prefixes", "allowed-ingress-annotation-prefixes"}},

		{"a NodePort by default", def, "sparkUIOptions: {serviceType: NodePort}", nil},
		{"a NodePort not allowed", with(func(p *Policy) { p.ServiceTypes = []string{"ClusterIP"} }), "sparkUIOptions: {serviceType: NodePort}",
			[]string{"spark.sparkUIOptions.serviceType: a Service of type NodePort is not one the plugin allows (ClusterIP)", "allowed-service-types"}},
		{"a LoadBalancer for a driver port", with(func(p *Policy) { p.ServiceTypes = []string{"ClusterIP", "NodePort"} }),
			"driverIngressOptions: [{servicePort: 8080, servicePortName: web, serviceType: LoadBalancer}]",
			[]string{"spark.driverIngressOptions[0].serviceType: a Service of type LoadBalancer"}},
		{"ClusterIP allowed", with(func(p *Policy) { p.ServiceTypes = []string{"ClusterIP"} }), "sparkUIOptions: {}\ndriverIngressOptions: [{servicePort: 8080, servicePortName: web}]", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, objs := build(t, tc.body)
			err := Check(tc.policy, s, objs)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Check = %v, want a refusal", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q\nlacks %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "refused by the plugin's policy: ") {
				t.Errorf("message %q does not say it is the policy", err)
			}
		})
	}
}

// TestCheckOnceAndBounded: a value that reaches both pods is said once,
// and a body with many problems gets a bounded message.
func TestCheckOnceAndBounded(t *testing.T) {
	s, objs := build(t, "driver: {serviceAccount: spark-executor-plugin}")
	err := Check(Default(), s, objs)
	if err == nil || strings.Count(err.Error(), "spark.driver.serviceAccount") != 1 {
		t.Fatalf("Check = %v, want the driver's account said once (it is the executors' too)", err)
	}
	var b strings.Builder
	b.WriteString("sparkConf:\n")
	for i := range 50 {
		b.WriteString("  spark.kubernetes.executor.secrets.spark-executor-plugin-token-" + strings.Repeat("a", i+1) + ": /t\n")
	}
	s, objs = build(t, b.String())
	var pe *Error
	if err := Check(Default(), s, objs); !errors.As(err, &pe) || len(pe.Problems) != MaxProblems || pe.More != 30 || !strings.HasSuffix(err.Error(), "; and 30 more") {
		t.Fatalf("Check = %v, want %d problems and 30 more", err, MaxProblems)
	}
}

func TestValidate(t *testing.T) {
	if err := Default().Validate(); err != nil {
		t.Fatalf("Default: %v", err)
	}
	s, objs := build(t, "driver: {serviceAccount: spark-executor-plugin}")
	if err := Check(Policy{}, s, objs); err == nil {
		t.Fatal("the zero Policy lets a driver run as the plugin's default ServiceAccount")
	}
	ok := Policy{PluginServiceAccounts: []string{"p"}, ServiceAccounts: []string{"spark"}, PodSecurity: LevelRestricted,
		IngressHostSuffixes: []string{".example.com"}, IngressAnnotationPrefixes: []string{"nginx.ingress.kubernetes.io/proxy-"}, ServiceTypes: []string{"ClusterIP", "NodePort"},
		WorkloadPriorityClasses: []string{"batch", "low"}}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid policy: %v", err)
	}
	for _, tc := range []struct {
		name, setting, want string
		p                   Policy
	}{
		{"a bad plugin account", "plugin-service-account", "not a ServiceAccount name", Policy{PluginServiceAccounts: []string{"-x"}}},
		{"the plugin allowed", "allowed-service-accounts", "is the plugin's own", Policy{PluginServiceAccounts: []string{"p"}, ServiceAccounts: []string{"p"}}},
		{"a bad account", "allowed-service-accounts", "not a ServiceAccount name", Policy{PluginServiceAccounts: []string{"p"}, ServiceAccounts: []string{"A_B"}}},
		{"a bad level", "pod-security-level", "must be baseline, restricted", Policy{PluginServiceAccounts: []string{"p"}, PodSecurity: "privileged"}},
		{"a bad suffix", "allowed-ingress-host-suffixes", "not a domain", Policy{PluginServiceAccounts: []string{"p"}, IngressHostSuffixes: []string{"exa mple"}}},
		{"an empty prefix", "allowed-ingress-annotation-prefixes", "would allow every", Policy{PluginServiceAccounts: []string{"p"}, IngressAnnotationPrefixes: []string{""}}},
		{"ExternalName", "allowed-service-types", "not a type", Policy{PluginServiceAccounts: []string{"p"}, ServiceTypes: []string{"ClusterIP", "ExternalName"}}},
		{"no ClusterIP", "allowed-service-types", "must include ClusterIP", Policy{PluginServiceAccounts: []string{"p"}, ServiceTypes: []string{"NodePort"}}},
		{"a bad priority class", "allowed-workload-priority-classes", "not a WorkloadPriorityClass name", Policy{PluginServiceAccounts: []string{"p"}, WorkloadPriorityClasses: []string{"High"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			var se *setting.Error
			if !errors.As(err, &se) || se.Name != tc.setting || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want setting %s: ...%s...", err, tc.setting, tc.want)
			}
		})
	}
}
