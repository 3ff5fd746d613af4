package policy

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// role is the driver or the executors: the body's part that shapes its
// pods, and the pod the builder made for it.
type role struct {
	// field is spark.driver or spark.executor.
	field string
	// pod is the driver pod, or the executor pod template.
	pod *corev1.Pod
	// conf holds the prefixes of the Spark conf keys through which Spark
	// adds to this role's pods what the template lacks.
	secrets, secretKeyRefs, volumes string
}

func (c *checker) roles() []role {
	out := []role{{field: "spark.driver", pod: c.objs.Driver,
		secrets: spark.ConfDriverSecretsPrefix, secretKeyRefs: spark.ConfDriverSecretKeyRefPrefix, volumes: confDriverVolumesPrefix}}
	if c.objs.ExecutorTemplate != nil {
		out = append(out, role{field: "spark.executor", pod: c.objs.ExecutorTemplate,
			secrets: spark.ConfExecutorSecretsPrefix, secretKeyRefs: spark.ConfExecutorSecretKeyRefPrefix, volumes: confExecutorVolumesPrefix})
	}
	return out
}

// Spark's volume conf (Config.scala KUBERNETES_{DRIVER,EXECUTOR}_VOLUMES_PREFIX):
// <prefix><type>.<name>.mount.path, .options.path, ...
const (
	confDriverVolumesPrefix   = "spark.kubernetes.driver.volumes."
	confExecutorVolumesPrefix = "spark.kubernetes.executor.volumes."
	// confKerberosTokenSecret is a Secret Spark mounts into the driver
	// (KerberosConfDriverFeatureStep).
	confKerberosTokenSecret = "spark.kubernetes.kerberos.tokenSecret.name"
)

// serviceAccounts: no pod runs as the plugin (always), each runs as an
// allowed account (allowed-service-accounts). An executor runs as its
// template's account, else spark.kubernetes.authenticate.executor.
// serviceAccountName, else the driver's (Spark's
// ExecutorKubernetesCredentialsFeatureStep and the conf's fallback): all
// of them are checked, since which one wins depends on Spark's version.
func (c *checker) serviceAccounts() {
	conf := c.objs.Conf
	for _, r := range c.roles() {
		names := []string{r.pod.Spec.ServiceAccountName, r.pod.Spec.DeprecatedServiceAccount}
		prefixes := []string{r.field}
		if r.field == "spark.executor" {
			names = append(names, conf[spark.ConfExecutorServiceAccount], conf[spark.ConfDriverServiceAccount])
			prefixes = append(prefixes, "spark.driver")
		}
		named := false
		for _, n := range names {
			if n == "" {
				continue
			}
			named = true
			at := c.locate(n, r.field+".serviceAccount", prefixes...)
			if slices.Contains(c.p.PluginServiceAccounts, n) {
				c.refuse(at, "plugin-service-account", "ServiceAccount %s is the plugin's own: a Spark pod never runs with the plugin's rights; give it a ServiceAccount of its own", shown(n))
			} else if len(c.p.ServiceAccounts) > 0 && !slices.Contains(c.p.ServiceAccounts, n) {
				c.refuse(at, "allowed-service-accounts", "ServiceAccount %s is not one the plugin allows (%s)", shown(n), allowedList(c.p.ServiceAccounts))
			}
		}
		if !named && len(c.p.ServiceAccounts) > 0 && !slices.Contains(c.p.ServiceAccounts, "default") {
			c.refuse(r.field+".serviceAccount", "allowed-service-accounts", "not set, so the pods run as ServiceAccount default, which is not one the plugin allows (%s); set one of them", allowedList(c.p.ServiceAccounts))
		}
	}
}

// tokenSecrets: no pod references a Secret named as the plugin's token
// (always). The check goes by name: the plugin may not read Secrets, so it
// cannot see a Secret's type or annotations. The names are those Argo and
// Kubernetes give such tokens: <sa>.service-account-token (what the
// manifests make and Argo looks for) and <sa>-token-<suffix> (what
// Kubernetes made before 1.24). A projected serviceAccountToken volume is
// no borrow: the kubelet issues it for the pod's own ServiceAccount,
// whatever its audience, and that account is checked above.
func (c *checker) tokenSecrets() {
	conf := c.objs.Conf
	check := func(name, at string) {
		if sa := c.tokenOf(name); sa != "" {
			c.refuse(at, "plugin-token-secret", "Secret %s is named as the token of the plugin's ServiceAccount %s: a Spark pod never gets the plugin's credentials", shown(name), sa)
		}
	}
	for _, r := range c.roles() {
		for _, ref := range secretRefs(&r.pod.Spec) {
			check(ref, c.locate(ref, r.field, r.field, "spark.volumes", "spark.sparkConf"))
		}
		for _, k := range slices.Sorted(maps.Keys(conf)) {
			var name string
			switch {
			case strings.HasPrefix(k, r.secrets):
				name = strings.TrimPrefix(k, r.secrets)
			case strings.HasPrefix(k, r.secretKeyRefs):
				name, _, _ = strings.Cut(conf[k], ":")
			case k == confKerberosTokenSecret && r.field == "spark.driver":
				name = conf[k]
			default:
				continue
			}
			check(name, c.confField(k, name, r.field))
		}
	}
}

// confField is the body's field a conf entry comes from: sparkConf when
// the body sets the key there, else the role's field that holds name.
func (c *checker) confField(key, name, roleField string) string {
	if _, ok := c.s.SparkConf[key]; ok {
		return "spark.sparkConf[" + key + "]"
	}
	return c.locate(name, roleField, roleField)
}

// tokenOf is the plugin's ServiceAccount whose token a Secret of this name
// would be, "" for none.
func (c *checker) tokenOf(secret string) string {
	for _, sa := range c.p.PluginServiceAccounts {
		if secret == sa+".service-account-token" || strings.HasPrefix(secret, sa+"-token") {
			return sa
		}
	}
	return ""
}

// secretRefs are the Secrets a pod spec references for its containers:
// secret and projected volumes, env and envFrom of every container.
func secretRefs(ps *corev1.PodSpec) []string {
	var out []string
	for _, v := range ps.Volumes {
		if v.Secret != nil {
			out = append(out, v.Secret.SecretName)
		}
		if v.Projected != nil {
			for _, src := range v.Projected.Sources {
				if src.Secret != nil {
					out = append(out, src.Secret.Name)
				}
			}
		}
	}
	containers := slices.Concat(ps.InitContainers, ps.Containers)
	for _, e := range ps.EphemeralContainers {
		containers = append(containers, corev1.Container(e.EphemeralContainerCommon))
	}
	for _, ctr := range containers {
		for _, e := range ctr.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				out = append(out, e.ValueFrom.SecretKeyRef.Name)
			}
		}
		for _, e := range ctr.EnvFrom {
			if e.SecretRef != nil {
				out = append(out, e.SecretRef.Name)
			}
		}
	}
	return out
}

// allowedList shows an allow list in a message, cut short.
func allowedList(list []string) string {
	if len(list) > 5 {
		return strings.Join(list[:5], ", ") + ", ..."
	}
	return strings.Join(list, ", ")
}
