package node

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"
)

// The node's fixed network: a bridge and pod subnet of its own, the address
// the kubelet, its API and CoreDNS bind, and the kubernetes Service's
// ClusterIP that pods reach the API server at (the first address of the
// control plane's --service-cluster-ip-range).
const (
	Bridge        = "cni0"
	BridgeAddress = "10.88.0.1"
	podSubnet     = "10.88.0.0/16"
	bridgeCIDR    = BridgeAddress + "/16"
	// APIServiceIP is the kubernetes Service's ClusterIP; its certificate
	// names it, and kubernetes.default.svc resolves to it.
	APIServiceIP = "10.96.0.1"
	// ClusterDomain is the DNS domain of Services and Pods.
	ClusterDomain = "cluster.local"
	// cniBinDir is where Debian's containernetworking-plugins installs.
	cniBinDir = "/usr/lib/cni"
	// apiChain is the nat chain that DNATs APIServiceIP:443 to the API
	// server on loopback.
	apiChain = "SPARKPLUG-APISERVER"
	// PauseImage is the sandbox image, built from hack/node/pause.
	PauseImage = "sparkplug.local/pause:v1"
)

// layout is where a node keeps its files: all under one temp dir, so that
// a crashed run's leftovers are one dir to find.
type layout struct{ dir string }

func (l layout) path(elem ...string) string {
	return filepath.Join(append([]string{l.dir}, elem...)...)
}

func (l layout) containerdSocket() string { return l.path("containerd", "containerd.sock") }
func (l layout) containerdConfig() string { return l.path("containerd", "config.toml") }
func (l layout) registryHosts() string    { return l.path("containerd", "certs.d") }
func (l layout) cniConfDir() string       { return l.path("cni", "net.d") }
func (l layout) kubeletRoot() string      { return l.path("kubelet") }
func (l layout) kubeletConfig() string    { return l.path("kubelet-config.yaml") }
func (l layout) kubeconfig() string       { return l.path("node.kubeconfig") }
func (l layout) corefile() string         { return l.path("Corefile") }
func (l layout) resolvConf() string       { return l.path("resolv.conf") }
func (l layout) hostState() string        { return l.path("host.json") }

// containerdTOML is containerd 1.6's config (real-node.md's, measured):
// state under the node's dir, the local pause image as sandbox image, the
// registry host dir (hosts.toml per registry, read at each pull), CNI
// config from the node's dir.
func containerdTOML(l layout) string {
	q := func(s string) string { return fmt.Sprintf("%q", s) }
	return `version = 2
root = ` + q(l.path("containerd", "root")) + `
state = ` + q(l.path("containerd", "state")) + `

[grpc]
  address = ` + q(l.containerdSocket()) + `

[plugins."io.containerd.internal.v1.opt"]
  path = ` + q(l.path("containerd", "opt")) + `

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ` + q(PauseImage) + `
  # Required: the machine's root has no CAP_SYS_RESOURCE, and without this
  # every sandbox fails ("can't get final child's PID from pipe: EOF").
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = ` + q(cniBinDir) + `
    conf_dir = ` + q(l.cniConfDir()) + `
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = ` + q(l.registryHosts()) + `
`
}

// hostsTOML makes containerd pull from a registry at host (host:port) over
// plain HTTP: the tests' registry on loopback has no certificate.
func hostsTOML(host string) string {
	return fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n",
		"http://"+host, "http://"+host)
}

// cniConfigJSON is the pod network: a bridge with the host as gateway, no
// masquerade (pods have no way out of the machine, and must not), and IPAM
// state under the node's dir.
func cniConfigJSON(l layout) ([]byte, error) {
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       "sparkplug",
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": Bridge, "isGateway": true, "ipMasq": false, "hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"dataDir": l.path("cni", "ipam"),
					"ranges":  []any{[]any{map[string]any{"subnet": podSubnet, "gateway": BridgeAddress}}},
					"routes":  []any{map[string]any{"dst": "0.0.0.0/0"}},
				},
			},
			map[string]any{"type": "portmap", "capabilities": map[string]any{"portMappings": true}},
			map[string]any{"type": "loopback"},
		},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("render CNI config: %w", err)
	}
	return b, nil
}

// kubeletYAML is the KubeletConfiguration of real-node.md plus cluster DNS
// and the taint that keeps other pods off, with every path the kubelet lets
// us choose under the node's dir.
func kubeletYAML(l layout) ([]byte, error) {
	conf := map[string]any{
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind":       "KubeletConfiguration",
		// The kubelet API (logs, exec) on the bridge address only.
		"address":            BridgeAddress,
		"readOnlyPort":       0,
		"healthzBindAddress": "127.0.0.1",
		"healthzPort":        10248,
		// The test API server has no kubelet client certificate.
		"authentication":           map[string]any{"anonymous": map[string]any{"enabled": true}, "webhook": map[string]any{"enabled": false}},
		"authorization":            map[string]any{"mode": "AlwaysAllow"},
		"containerRuntimeEndpoint": "unix://" + l.containerdSocket(),
		"cgroupDriver":             "cgroupfs",
		"failSwapOn":               false,
		"failCgroupV1":             false,
		"serializeImagePulls":      false,
		"evictionHard": map[string]string{
			"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%", "nodefs.inodesFree": "1%",
		},
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		"registerWithTaints":          []map[string]string{{"key": TaintKey, "value": "true", "effect": "NoSchedule"}},
		"clusterDNS":                  []string{BridgeAddress},
		"clusterDomain":               ClusterDomain,
		// Pods get no search domain or nameserver of the host's.
		"resolvConf":      l.resolvConf(),
		"podLogsDir":      l.path("pod-logs"),
		"volumePluginDir": l.path("volume-plugins"),
	}
	b, err := yaml.Marshal(conf)
	if err != nil {
		return nil, fmt.Errorf("render kubelet config: %w", err)
	}
	return b, nil
}

// kubeletArgs are the kubelet's flags: what the config file cannot say.
func kubeletArgs(l layout) []string {
	return []string{
		"--config=" + l.kubeletConfig(),
		"--kubeconfig=" + l.kubeconfig(),
		"--hostname-override=" + Name,
		"--node-ip=" + BridgeAddress,
		"--node-labels=" + LabelKey + "=true",
		"--root-dir=" + l.kubeletRoot(),
		"--v=1",
	}
}

// corefile serves cluster.local (and reverse lookups of it) from the API
// server, on the bridge address only. No other zone is served and nothing
// is forwarded: pods have no way out of the machine.
func corefile(l layout) string {
	return `cluster.local:53 in-addr.arpa:53 ip6.arpa:53 {
    bind ` + BridgeAddress + `
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig ` + l.kubeconfig() + `
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
    cache 5
}
`
}

// chainOwned says whether an iptables chain is one the node's parts make:
// ours, the kubelet's (KUBE-FIREWALL, KUBE-KUBELET-CANARY,
// KUBE-IPTABLES-HINT) and the CNI plugins' (CNI-*).
func chainOwned(chain string) bool {
	for _, p := range []string{"SPARKPLUG-", "KUBE-", "CNI-"} {
		if strings.HasPrefix(chain, p) {
			return true
		}
	}
	return false
}

// rule is one line of `iptables -S`, split into arguments.
type rule []string

// parseRules splits the output of `iptables -t T -S` into the chains it
// declares (-N) and its rules (-A), with quoted arguments
// (--comment "...") unquoted.
func parseRules(out string) (chains []string, rules []rule, err error) {
	for _, line := range strings.Split(out, "\n") {
		args, err := splitQuoted(line)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case len(args) == 2 && args[0] == "-N":
			chains = append(chains, args[1])
		case len(args) >= 2 && args[0] == "-A":
			rules = append(rules, args)
		}
	}
	return chains, rules, nil
}

// splitQuoted splits an iptables -S line at spaces, honouring double
// quotes and backslash escapes inside them.
func splitQuoted(line string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quoted && c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
		case c == '"':
			quoted = !quoted
			inArg = true
		case c == ' ' && !quoted:
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unterminated quote in iptables rule %q", line)
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}

// target is the chain a rule jumps to (-j or -g), or "".
func (r rule) target() string {
	for i := 0; i+1 < len(r); i++ {
		if r[i] == "-j" || r[i] == "-g" {
			return r[i+1]
		}
	}
	return ""
}

// cleanupPlan is what to run to delete the chains in remove from one
// table: first every rule that jumps to one of them or lives in one (from
// chains not removed: rules inside a removed chain go with its flush),
// then flush and delete each chain. Each entry is the arguments after
// `iptables -t TABLE`.
func cleanupPlan(chains []string, rules []rule, remove map[string]bool) [][]string {
	var plan [][]string
	for _, r := range rules {
		if !remove[r[1]] && remove[r.target()] {
			plan = append(plan, append([]string{"-D"}, r[1:]...))
		}
	}
	for _, c := range chains {
		if remove[c] {
			plan = append(plan, []string{"-F", c})
		}
	}
	for _, c := range chains {
		if remove[c] {
			plan = append(plan, []string{"-X", c})
		}
	}
	return plan
}
