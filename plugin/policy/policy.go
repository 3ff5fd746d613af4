package policy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/setting"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// DefaultPluginServiceAccount is the plugin's ServiceAccount as
// manifests/rbac.yaml and the chart make it: Argo runs an executor
// plugin's sidecar with the token of <plugin name>-executor-plugin, and
// plugin.yaml names the plugin spark.
const DefaultPluginServiceAccount = "spark-executor-plugin"

// The Pod Security Standards levels Policy.PodSecurity takes.
const (
	LevelBaseline   = "baseline"
	LevelRestricted = "restricted"
)

// Policy is what the objects of a run may be. The zero value of each
// option allows what Spark allows.
type Policy struct {
	// PluginServiceAccounts are the plugin's own ServiceAccounts (setting
	// plugin-service-account; the sidecar adds the one its token names):
	// no Spark pod runs as one, nor references its token Secret. Always
	// on; empty is DefaultPluginServiceAccount.
	PluginServiceAccounts []string
	// ServiceAccounts (setting allowed-service-accounts) are the only
	// accounts the driver and the executors may run as; a pod that names
	// none runs as "default". Empty: any but the plugin's.
	ServiceAccounts []string
	// PodSecurity (setting pod-security-level) is the Pod Security
	// Standards level every Spark pod must meet: LevelBaseline,
	// LevelRestricted, or empty for no check.
	PodSecurity string
	// IngressHostSuffixes (setting allowed-ingress-host-suffixes) are the
	// domains an Ingress's hosts must be in: "spark.example.com" allows it
	// and its subdomains. Empty: any host, and Ingresses without one.
	IngressHostSuffixes []string
	// IngressAnnotationPrefixes (setting
	// allowed-ingress-annotation-prefixes) are the prefixes a body's
	// Ingress annotation keys must have. Empty: any key.
	IngressAnnotationPrefixes []string
	// AllowIngressSnippets (setting allow-ingress-snippets) lets a body
	// give Ingress annotations whose name contains "snippet"
	// (ingress-nginx's configuration-snippet, server-snippet, ...): raw
	// configuration of a controller shared by every namespace, refused by
	// default.
	AllowIngressSnippets bool
	// ServiceTypes (setting allowed-service-types) are the types the
	// Services of sparkUIOptions and driverIngressOptions may have; it
	// includes ClusterIP, the type of Spark's own driver Service. Empty:
	// every type a body may give (ClusterIP, NodePort, LoadBalancer).
	ServiceTypes []string
	// WorkloadPriorityClasses (setting allowed-workload-priority-classes)
	// are the only Kueue WorkloadPriorityClasses a queued step may name
	// (CheckPriorityClass). Empty: any.
	WorkloadPriorityClasses []string
}

// Default is the policy of a plugin given no setting: the always-on rules
// for DefaultPluginServiceAccount, nothing else.
func Default() Policy {
	return Policy{PluginServiceAccounts: []string{DefaultPluginServiceAccount}}
}

// serviceTypes are the Service types a body can give (spec's
// supportedUIServiceTypes), which allowed-service-types chooses from.
var serviceTypes = []string{string(corev1.ServiceTypeClusterIP), string(corev1.ServiceTypeNodePort), string(corev1.ServiceTypeLoadBalancer)}

// Validate rejects settings that cannot be applied, naming the setting
// (package setting).
func (p Policy) Validate() error {
	var errs []error
	names := func(name string, list []string) {
		for _, n := range list {
			if msgs := validation.IsDNS1123Subdomain(n); len(msgs) > 0 {
				errs = append(errs, setting.Errorf(name, "%q is not a ServiceAccount name: %s", spec.Truncate(n, maxShown), strings.Join(msgs, "; ")))
			}
		}
	}
	names("plugin-service-account", p.PluginServiceAccounts)
	names("allowed-service-accounts", p.ServiceAccounts)
	for _, n := range p.ServiceAccounts {
		if slices.Contains(p.PluginServiceAccounts, n) {
			errs = append(errs, setting.Errorf("allowed-service-accounts", "%s is the plugin's own ServiceAccount: no Spark pod may run with the plugin's rights; remove it", n))
		}
	}
	if l := p.PodSecurity; l != "" && l != LevelBaseline && l != LevelRestricted {
		errs = append(errs, setting.Errorf("pod-security-level", "must be %s, %s or empty (no check), got %q", LevelBaseline, LevelRestricted, spec.Truncate(l, maxShown)))
	}
	for _, s := range p.IngressHostSuffixes {
		if msgs := validation.IsDNS1123Subdomain(strings.TrimPrefix(s, ".")); len(msgs) > 0 {
			errs = append(errs, setting.Errorf("allowed-ingress-host-suffixes", "%q is not a domain such as spark.example.com: %s", spec.Truncate(s, maxShown), strings.Join(msgs, "; ")))
		}
	}
	for _, s := range p.IngressAnnotationPrefixes {
		if s == "" {
			errs = append(errs, setting.Errorf("allowed-ingress-annotation-prefixes", "an empty prefix would allow every annotation; leave the setting empty for that"))
		}
	}
	for _, t := range p.ServiceTypes {
		if !slices.Contains(serviceTypes, t) {
			errs = append(errs, setting.Errorf("allowed-service-types", "%q is not a type a spark body can give: want some of %s", spec.Truncate(t, maxShown), strings.Join(serviceTypes, ", ")))
		}
	}
	for _, n := range p.WorkloadPriorityClasses {
		if msgs := validation.IsDNS1123Subdomain(n); len(msgs) > 0 {
			errs = append(errs, setting.Errorf("allowed-workload-priority-classes", "%q is not a WorkloadPriorityClass name: %s", spec.Truncate(n, maxShown), strings.Join(msgs, "; ")))
		}
	}
	if len(p.ServiceTypes) > 0 && !slices.Contains(p.ServiceTypes, string(corev1.ServiceTypeClusterIP)) {
		errs = append(errs, setting.Errorf("allowed-service-types", "must include ClusterIP: Spark's driver Service is one"))
	}
	return errors.Join(errs...)
}

// Check returns an *Error listing what in objs the policy refuses, each
// problem naming the field of s it comes from and the rule; nil when
// nothing is refused. objs is what objects.Builder built from s.
func Check(p Policy, s *spec.SparkApplicationSpec, objs *objects.Set) error {
	if s == nil || objs == nil || objs.Driver == nil {
		return nil
	}
	if len(p.PluginServiceAccounts) == 0 {
		p.PluginServiceAccounts = Default().PluginServiceAccounts
	}
	c := &checker{p: p, s: s, objs: objs, seen: map[string]bool{}}
	c.serviceAccounts()
	c.tokenSecrets()
	c.podSecurity()
	c.exposure()
	if c.total == 0 {
		return nil
	}
	return &Error{Problems: c.problems, More: c.total - len(c.problems)}
}

// Bounds of a refusal's message, which becomes the node's message (as an
// invalid body's does, spec.InvalidError).
const (
	// MaxProblems is how many problems an Error lists.
	MaxProblems = 20
	// maxShown caps a value echoed in a message.
	maxShown = 64
)

// Problem is one thing the policy refuses.
type Problem struct {
	// Field is the body's field the object's value comes from, as a
	// field path: spark.driver.serviceAccount.
	Field string
	// Rule is the setting that refuses it, or the always-on rule's name
	// (plugin-service-account, plugin-token-secret).
	Rule string
	// Detail says what is refused and why.
	Detail string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s: %s (policy rule %s)", p.Field, p.Detail, p.Rule)
}

// Error is a run the policy refuses: the step cannot run as written.
type Error struct {
	// Problems are the first MaxProblems problems.
	Problems []Problem
	// More counts the problems not listed.
	More int
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("refused by the plugin's policy: ")
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "; and %d more", e.More)
	}
	return b.String()
}

// checker gathers the problems of one Check.
type checker struct {
	p    Policy
	s    *spec.SparkApplicationSpec
	objs *objects.Set
	// body locates values in s, built on first use.
	body *located
	// seen holds the problems said, so that a value that reaches two
	// objects (the driver's service account, also the executors'
	// fallback) is said once.
	seen     map[string]bool
	problems []Problem
	total    int
}

func (c *checker) refuse(field, rule, format string, args ...any) {
	p := Problem{Field: field, Rule: rule, Detail: fmt.Sprintf(format, args...)}
	if key := p.String(); !c.seen[key] {
		c.seen[key] = true
		c.total++
		if len(c.problems) < MaxProblems {
			c.problems = append(c.problems, p)
		}
	}
}

// shown is a value of the body as a message echoes it, cut short.
func shown(v string) string { return spec.Truncate(v, maxShown) }

// locate is the path of the first field of the body under one of the
// prefixes (tried in order) whose value, or map key, is v; fallback when
// none is.
func (c *checker) locate(v, fallback string, prefixes ...string) string {
	if c.body == nil {
		c.body = locate(c.s)
	}
	return c.body.find(v, fallback, prefixes...)
}
