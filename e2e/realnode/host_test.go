//go:build e2e

package realnode

// The host as the real node finds and leaves it: TestMain compares the
// two, so that stopping the environment is proven to undo what the node
// changed (a bridge, iptables chains, sysctls, mounts, processes, paths).

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/sparkplug-io/sparkplug/e2e/node"
)

// counters are the packet and byte counts of iptables-save's chain lines.
var counters = regexp.MustCompile(` \[[0-9]+:[0-9]+\]$`)

// snapshot is the host state the node changes.
type snapshot struct {
	bridge   bool
	procs    []string // containerd, shims, kubelet, CoreDNS
	iptables string   // every table, v4 and v6, chains and rules
	sysctls  string
	mounts   []string // under the node's temp dirs
	paths    []string // of hostPaths, those that exist
}

// hostPaths are what the kubelet and containerd create at fixed paths:
// container log links, network namespaces, shim sockets and runc state,
// libcni's cache, the pods' cgroups.
var hostPaths = []string{
	"/var/log/containers", "/run/netns", "/run/containerd", "/var/lib/cni", "/var/lib/kubelet",
	"/sys/fs/cgroup/memory/kubepods", "/sys/fs/cgroup/cpu/kubepods", "/sys/fs/cgroup/pids/kubepods",
}

func (s snapshot) String() string {
	return fmt.Sprintf("bridge %s: %v\nprocesses: %v\nsysctls: %s\nmounts: %v\npaths: %v\niptables:\n%s",
		node.Bridge, s.bridge, s.procs, s.sysctls, s.mounts, s.paths, s.iptables)
}

func hostSnapshot() (snapshot, error) {
	var s snapshot
	_, err := os.Stat("/sys/class/net/" + node.Bridge)
	s.bridge = err == nil
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// "pid (comm) state ...". A zombie is not running: this machine's
		// init reaps the processes it inherits (shims, and whatever a
		// killed test binary left) only now and then.
		open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || end < open || bytes.HasPrefix(bytes.TrimSpace(b[end+1:]), []byte("Z")) {
			continue
		}
		name := string(b[open+1 : end])
		if strings.HasPrefix(name, "containerd") || name == "kubelet" || name == "coredns" {
			s.procs = append(s.procs, filepath.Base(filepath.Dir(path))+" "+name)
		}
	}
	for _, cmd := range []string{"iptables-save", "ip6tables-save"} {
		out, err := exec.Command(cmd).Output()
		if err != nil {
			return s, fmt.Errorf("%s: %w", cmd, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if !strings.HasPrefix(line, "#") { // the save's date
				s.iptables += counters.ReplaceAllString(line, "") + "\n"
			}
		}
	}
	for _, name := range []string{"kernel/panic", "kernel/panic_on_oops", "vm/overcommit_memory", "net/ipv4/ip_forward"} {
		b, err := os.ReadFile("/proc/sys/" + name)
		if err != nil {
			return s, err
		}
		s.sysctls += name + "=" + strings.TrimSpace(string(b)) + " "
	}
	for _, p := range hostPaths {
		if _, err := os.Stat(p); err == nil {
			s.paths = append(s.paths, p)
		}
	}
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(mountinfo), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.Contains(f[4], "sparkplug-node-") {
			s.mounts = append(s.mounts, f[4])
		}
	}
	return s, nil
}

// leftBehind says what the host holds after the environment stopped that
// it did not before it started; "" when nothing.
func leftBehind(before, after snapshot) string {
	var out []string
	if after.String() != before.String() {
		out = append(out, fmt.Sprintf("the host differs after teardown:\nbefore:\n%s\nafter:\n%s", before, after))
	}
	if len(after.procs) > 0 {
		out = append(out, fmt.Sprintf("still running after teardown: %v", after.procs))
	}
	if after.bridge {
		out = append(out, fmt.Sprintf("%s still exists after teardown", node.Bridge))
	}
	if strings.Contains(after.iptables, "SPARKPLUG") {
		out = append(out, fmt.Sprintf("a SPARKPLUG iptables chain is left:\n%s", after.iptables))
	}
	return strings.Join(out, "\n")
}
