package main

import (
	"github.com/spf13/pflag"

	"github.com/sparkplug-io/sparkplug/plugin/policy"
)

// policyFlags binds the policy's settings to p, for serve and for render
// (which checks steps as serve would).
func policyFlags(fs *pflag.FlagSet, p *policy.Policy) {
	fs.StringSliceVar(&p.PluginServiceAccounts, "plugin-service-account", []string{policy.DefaultPluginServiceAccount}, "the plugin's own ServiceAccounts, comma-separated: no Spark pod may run as one or reference its token Secret (<name>.service-account-token, <name>-token*); serve adds the account its Kubernetes token names")
	fs.StringSliceVar(&p.ServiceAccounts, "allowed-service-accounts", nil, "the only ServiceAccounts drivers and executors may run as, comma-separated (a pod that names none runs as default); empty: any but the plugin's")
	fs.StringVar(&p.PodSecurity, "pod-security-level", "", "the Pod Security Standards level every driver and executor pod must meet, as sparkplug builds it: baseline or restricted; empty: no check")
	fs.StringSliceVar(&p.IngressHostSuffixes, "allowed-ingress-host-suffixes", nil, "the domains the hosts of a step's Ingresses must be in, comma-separated (spark.example.com allows it and its subdomains); empty: any host")
	fs.StringSliceVar(&p.IngressAnnotationPrefixes, "allowed-ingress-annotation-prefixes", nil, "the prefixes a step's Ingress annotation keys must have, comma-separated; empty: any key")
	fs.BoolVar(&p.AllowIngressSnippets, "allow-ingress-snippets", false, "allow Ingress annotations whose name contains snippet (ingress-nginx's configuration-snippet, server-snippet, ...): raw configuration of an ingress controller shared by every namespace")
	fs.StringSliceVar(&p.WorkloadPriorityClasses, "allowed-workload-priority-classes", nil, "the only Kueue WorkloadPriorityClasses a queued step may name with its template's kueue.x-k8s.io/priority-class label, comma-separated; a step naming another fails; empty: any")
	fs.StringSliceVar(&p.ServiceTypes, "allowed-service-types", nil, "the types the Services of sparkUIOptions and driverIngressOptions may have, comma-separated, ClusterIP among them; empty: ClusterIP, NodePort and LoadBalancer")
}
