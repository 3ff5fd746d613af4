package node

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestContainerdConfigHasTheRequiredSettings(t *testing.T) {
	got := containerdTOML(layout{dir: "/tmp/sparkplug-node-1"})
	for _, want := range []string{
		`restrict_oom_score_adj = true`,
		`sandbox_image = "sparkplug.local/pause:v1"`,
		`address = "/tmp/sparkplug-node-1/containerd/containerd.sock"`,
		`config_path = "/tmp/sparkplug-node-1/containerd/certs.d"`,
		`conf_dir = "/tmp/sparkplug-node-1/cni/net.d"`,
		`SystemdCgroup = false`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("containerd config lacks %s:\n%s", want, got)
		}
	}
}

func TestHostsTOMLPullsOverPlainHTTP(t *testing.T) {
	want := "server = \"http://127.0.0.1:5000\"\n\n[host.\"http://127.0.0.1:5000\"]\n  capabilities = [\"pull\", \"resolve\"]\n"
	if got := hostsTOML("127.0.0.1:5000"); got != want {
		t.Errorf("hostsTOML = %q, want %q", got, want)
	}
}

func TestKubeletConfig(t *testing.T) {
	b, err := kubeletYAML(layout{dir: "/n"})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"clusterDNS":               []any{"10.88.0.1"},
		"clusterDomain":            "cluster.local",
		"containerRuntimeEndpoint": "unix:///n/containerd/containerd.sock",
		"registerWithTaints":       []any{map[string]any{"key": "sparkplug.io/real-node", "value": "true", "effect": "NoSchedule"}},
		"address":                  "10.88.0.1",
		"failCgroupV1":             false,
		"podLogsDir":               "/n/pod-logs",
	} {
		if !reflect.DeepEqual(got[key], want) {
			t.Errorf("%s = %#v, want %#v", key, got[key], want)
		}
	}
}

func TestCNIConfigKeepsPodsOnTheMachine(t *testing.T) {
	b, err := cniConfigJSON(layout{dir: "/n"})
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Plugins []map[string]any `json:"plugins"`
	}
	if err := json.Unmarshal(b, &conf); err != nil {
		t.Fatal(err)
	}
	bridge := conf.Plugins[0]
	if bridge["bridge"] != "cni0" || bridge["ipMasq"] != false || bridge["isGateway"] != true {
		t.Errorf("bridge plugin %v: want cni0, no masquerade, gateway", bridge)
	}
}

func TestCorefileServesOnlyTheClusterDomain(t *testing.T) {
	got := corefile(layout{dir: "/n"})
	for _, want := range []string{"bind 10.88.0.1", "kubernetes cluster.local", "kubeconfig /n/node.kubeconfig"} {
		if !strings.Contains(got, want) {
			t.Errorf("Corefile lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "forward") || strings.Contains(got, ".:53") {
		t.Errorf("Corefile serves or forwards more than the cluster domain:\n%s", got)
	}
}

func TestIptablesCleanupPlan(t *testing.T) {
	// iptables -t filter -S after the kubelet and the node ran, with
	// someone else's chain and rule that must stay.
	out := `-P INPUT ACCEPT
-P FORWARD ACCEPT
-P OUTPUT ACCEPT
-N KUBE-FIREWALL
-N KUBE-KUBELET-CANARY
-N OTHER
-A INPUT -j KUBE-FIREWALL
-A INPUT -s 10.0.0.0/8 -j OTHER
-A OUTPUT -j KUBE-FIREWALL
-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment "block incoming localnet connections" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP
`
	chains, rules, err := parseRules(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"KUBE-FIREWALL", "KUBE-KUBELET-CANARY", "OTHER"}; !reflect.DeepEqual(chains, want) {
		t.Fatalf("chains %v, want %v", chains, want)
	}
	if !slices.Contains(rules[3], "block incoming localnet connections") {
		t.Errorf("quoted comment not one argument: %q", rules[3])
	}
	remove := map[string]bool{}
	for _, c := range chains {
		if chainOwned(c) {
			remove[c] = true
		}
	}
	want := [][]string{
		{"-D", "INPUT", "-j", "KUBE-FIREWALL"},
		{"-D", "OUTPUT", "-j", "KUBE-FIREWALL"},
		{"-F", "KUBE-FIREWALL"},
		{"-F", "KUBE-KUBELET-CANARY"},
		{"-X", "KUBE-FIREWALL"},
		{"-X", "KUBE-KUBELET-CANARY"},
	}
	if got := cleanupPlan(chains, rules, remove); !reflect.DeepEqual(got, want) {
		t.Errorf("plan\n%v\nwant\n%v", got, want)
	}
}

func TestSplitQuotedRefusesAnOpenQuote(t *testing.T) {
	if _, err := splitQuoted(`-A X -m comment --comment "open`); err == nil {
		t.Error("no error for an unterminated quote")
	}
}

func TestMountPointsIn(t *testing.T) {
	mountinfo := `22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
300 22 254:0 /tmp/sparkplug-node-1/kubelet /tmp/sparkplug-node-1/kubelet rw,relatime shared:2 - ext4 /dev/vda rw
301 300 0:50 / /tmp/sparkplug-node-1/kubelet/pods/x/volumes/kube\040api rw - tmpfs tmpfs rw
302 22 0:51 / /tmp/sparkplug-node-10/other rw - tmpfs tmpfs rw
`
	got := mountPointsIn(mountinfo, under("/tmp/sparkplug-node-1"))
	want := []string{"/tmp/sparkplug-node-1/kubelet", "/tmp/sparkplug-node-1/kubelet/pods/x/volumes/kube api"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mount points %q, want %q", got, want)
	}
}
