package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// hostSysctls are the sysctls the node's parts change: the kubelet's
// (kernel.panic, kernel.panic_on_oops, vm.overcommit_memory) and the CNI
// bridge plugin's (ip_forward, for isGateway). route_localnet is set on
// cni0 only, and goes with it.
var hostSysctls = []string{"kernel.panic", "kernel.panic_on_oops", "vm.overcommit_memory", "net.ipv4.ip_forward"}

// hostDirs are host dirs the node's parts create at paths they do not let
// us choose: the kubelet's container log links, containerd's network
// namespaces, shim sockets and runc state, libcni's result cache. Those that
// did not exist before are removed at teardown.
var hostDirs = []string{"/var/log/containers", "/run/netns", "/run/containerd", "/var/lib/cni", "/var/lib/kubelet"}

// iptablesTables are the tables whose chains are recorded and cleaned,
// for iptables and ip6tables alike.
var (
	iptablesCommands = []string{"iptables", "ip6tables"}
	iptablesTables   = []string{"filter", "nat", "mangle"}
)

// hostState is what the host was like before the node changed it. It is
// saved in the node's dir before any change, so that the next run can undo
// the changes of a run that crashed.
type hostState struct {
	// Owner is the pid of the process that started the node.
	Owner int `json:"owner"`
	// Sysctls are the values before.
	Sysctls map[string]string `json:"sysctls"`
	// Chains are the chains that existed before, by "command/table".
	Chains map[string][]string `json:"chains"`
	// NewDirs are the hostDirs that did not exist before.
	NewDirs []string `json:"newDirs"`
	// NftTables are the nftables tables that existed before ("ip nat"),
	// where iptables is iptables-nft: the tables iptables creates on first
	// use are deleted again when they are empty.
	NftTables []string `json:"nftTables"`
}

// recordHost reads the state to restore later.
func recordHost(ctx context.Context) (hostState, error) {
	s := hostState{Owner: os.Getpid(), Sysctls: map[string]string{}, Chains: map[string][]string{}}
	// Before iptables runs: listing a table creates it.
	tables, err := nftTables(ctx)
	if err != nil {
		return s, err
	}
	s.NftTables = tables
	for _, name := range hostSysctls {
		v, err := readSysctl(name)
		if err != nil {
			return s, err
		}
		s.Sysctls[name] = v
	}
	for _, cmd := range iptablesCommands {
		for _, table := range iptablesTables {
			chains, _, err := listRules(ctx, cmd, table)
			if err != nil {
				return s, err
			}
			s.Chains[cmd+"/"+table] = chains
		}
	}
	for _, d := range hostDirs {
		if _, err := os.Lstat(d); errors.Is(err, fs.ErrNotExist) {
			s.NewDirs = append(s.NewDirs, d)
		}
	}
	return s, nil
}

func (s hostState) save(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode host state: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("save host state: %w", err)
	}
	return nil
}

func loadHostState(path string) (hostState, error) {
	var s hostState
	b, err := os.ReadFile(path)
	if err != nil {
		return s, fmt.Errorf("read host state: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("decode host state %s: %w", path, err)
	}
	return s, nil
}

func sysctlPath(name string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(name, ".", "/"))
}

func readSysctl(name string) (string, error) {
	b, err := os.ReadFile(sysctlPath(name))
	if err != nil {
		return "", fmt.Errorf("read sysctl %s: %w", name, err)
	}
	return strings.TrimSpace(string(b)), nil
}

func writeSysctl(name, value string) error {
	if err := os.WriteFile(sysctlPath(name), []byte(value+"\n"), 0o644); err != nil {
		return fmt.Errorf("set sysctl %s=%s: %w", name, value, err)
	}
	return nil
}

// run runs a host command and returns its output; an error quotes it.
func run(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return string(out), nil
}

func listRules(ctx context.Context, cmd, table string) ([]string, []rule, error) {
	out, err := run(ctx, cmd, "-w", "-t", table, "-S")
	if err != nil {
		return nil, nil, err
	}
	return parseRules(out)
}

// setUpNetwork creates the bridge with its address (so that the kubelet
// and CoreDNS can bind it before the first pod), lets cni0 route to
// loopback, and DNATs the kubernetes Service's address to the API server,
// which listens on loopback only: pods reach it as in a cluster.
func setUpNetwork(ctx context.Context, apiServer string) error {
	for _, args := range [][]string{
		{"link", "add", Bridge, "type", "bridge"},
		{"addr", "add", bridgeCIDR, "dev", Bridge},
		{"link", "set", Bridge, "up"},
	} {
		if _, err := run(ctx, "ip", args...); err != nil {
			return err
		}
	}
	if err := writeSysctl("net.ipv4.conf."+Bridge+".route_localnet", "1"); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"-N", apiChain},
		{"-A", apiChain, "-d", APIServiceIP + "/32", "-p", "tcp", "--dport", "443", "-j", "DNAT", "--to-destination", apiServer},
		{"-A", "PREROUTING", "-i", Bridge, "-j", apiChain},
	} {
		if _, err := run(ctx, "iptables", append([]string{"-w", "-t", "nat"}, args...)...); err != nil {
			return err
		}
	}
	return nil
}

// restoreHost undoes, in real-node.md's order, what the node's parts did
// to the host, once they are stopped: it ends what is left of them (shims
// and containers, which outlive containerd), unmounts everything under the
// node's dir, deletes the iptables chains, restores the sysctls, deletes
// the bridge and the dirs the parts created, and removes the node's dir
// unless keep. It goes on past errors and returns them all.
func restoreHost(ctx context.Context, dir string, s hostState, keep bool) error {
	var errs []error
	errs = append(errs, killLeftovers(dir))
	errs = append(errs, unmountWhere(under(dir)), unmountWhere(cniNetns))
	errs = append(errs, deleteChains(ctx, s), deleteNewTables(ctx, s))
	var names []string
	for name := range s.Sysctls {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		errs = append(errs, writeSysctl(name, s.Sysctls[name]))
	}
	if _, err := os.Stat("/sys/class/net/" + Bridge); err == nil {
		_, err := run(ctx, "ip", "link", "del", Bridge)
		errs = append(errs, err)
	}
	for _, d := range s.NewDirs {
		errs = append(errs, os.RemoveAll(d))
	}
	removeCgroups()
	if !keep {
		errs = append(errs, os.RemoveAll(dir))
	}
	return errors.Join(errs...)
}

// nftTables lists the nftables tables ("ip nat"), none without nft.
func nftTables(ctx context.Context) ([]string, error) {
	if _, err := exec.LookPath("nft"); err != nil {
		return nil, nil
	}
	out, err := run(ctx, "nft", "list", "tables")
	if err != nil {
		return nil, err
	}
	var tables []string
	for _, line := range strings.Split(out, "\n") {
		if t, ok := strings.CutPrefix(strings.TrimSpace(line), "table "); ok {
			tables = append(tables, t)
		}
	}
	return tables, nil
}

// deleteNewTables deletes the iptables tables (nftables tables of iptables-
// nft) that did not exist before and hold no chain or rule of anyone now.
func deleteNewTables(ctx context.Context, s hostState) error {
	now, err := nftTables(ctx)
	if err != nil || len(now) == 0 {
		return err
	}
	var errs []error
	families := map[string]string{"iptables": "ip", "ip6tables": "ip6"}
	for _, cmd := range iptablesCommands {
		for _, table := range iptablesTables {
			t := families[cmd] + " " + table
			if slices.Contains(s.NftTables, t) || !slices.Contains(now, t) {
				continue
			}
			chains, rules, err := listRules(ctx, cmd, table)
			if err != nil || len(chains) > 0 || len(rules) > 0 {
				errs = append(errs, err)
				continue
			}
			_, err = run(ctx, "nft", "delete", "table", families[cmd], table)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// deleteChains deletes the chains of the node's parts that did not exist
// before, with the rules that jump to them.
func deleteChains(ctx context.Context, s hostState) error {
	var errs []error
	for _, cmd := range iptablesCommands {
		for _, table := range iptablesTables {
			chains, rules, err := listRules(ctx, cmd, table)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			before := s.Chains[cmd+"/"+table]
			remove := map[string]bool{}
			for _, c := range chains {
				if chainOwned(c) && !slices.Contains(before, c) {
					remove[c] = true
				}
			}
			for _, args := range cleanupPlan(chains, rules, remove) {
				if _, err := run(ctx, cmd, append([]string{"-w", "-t", table}, args...)...); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// kubepodsCgroups are the cgroup dirs the kubelet makes (cgroupfs driver,
// cgroup v1: one tree per controller), deepest first.
func kubepodsCgroups() []string {
	roots, _ := filepath.Glob("/sys/fs/cgroup/*/kubepods")
	var dirs []string
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
	}
	slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) })
	return dirs
}

// killLeftovers kills what outlives the kubelet and containerd: the shims
// (whose command line names the node's containerd socket) and the
// processes of the pods' cgroups; then waits for them to be gone.
func killLeftovers(dir string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := leftoverPids(dir)
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes of the node still run after SIGKILL: %v", pids)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func leftoverPids(dir string) []int {
	var pids []int
	self := os.Getpid()
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte(dir+"/")) {
			pids = append(pids, pid)
		}
	}
	for _, cg := range kubepodsCgroups() {
		b, err := os.ReadFile(filepath.Join(cg, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && !slices.Contains(pids, pid) {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// removeCgroups removes the kubelet's (empty by now) cgroups. Best effort:
// a cgroup that is not empty stays.
func removeCgroups() {
	for _, cg := range kubepodsCgroups() {
		_ = syscall.Rmdir(cg)
	}
}

// under matches dir and every path below it.
func under(dir string) func(string) bool {
	return func(p string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
}

// cniNetns matches the network namespaces containerd makes for sandboxes.
func cniNetns(p string) bool { return strings.HasPrefix(p, "/run/netns/cni-") }

// unmountWhere unmounts every mount whose mount point matches, deepest
// first, as often as mounts are stacked (the kubelet bind-mounts its root
// dir onto itself).
func unmountWhere(match func(string) bool) error {
	for range 10 {
		points, err := mountPoints(match)
		if err != nil || len(points) == 0 {
			return err
		}
		for _, p := range points {
			if err := syscall.Unmount(p, 0); err != nil {
				_ = syscall.Unmount(p, syscall.MNT_DETACH)
			}
		}
	}
	points, err := mountPoints(match)
	if err == nil && len(points) > 0 {
		err = fmt.Errorf("still mounted: %v", points)
	}
	return err
}

// mountPoints lists the mount points that match, deepest first.
func mountPoints(match func(string) bool) ([]string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mountinfo: %w", err)
	}
	points := mountPointsIn(string(b), match)
	slices.SortStableFunc(points, func(a, b string) int { return len(b) - len(a) })
	return points, nil
}

// mountPointsIn returns the mount points (the fifth field, octal-escaped)
// of mountinfo's lines that match.
func mountPointsIn(mountinfo string, match func(string) bool) []string {
	var points []string
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		if p := unescapeMountPoint(f[4]); match(p) {
			points = append(points, p)
		}
	}
	return points
}

// unescapeMountPoint undoes mountinfo's \NNN octal escapes (space, tab,
// newline, backslash).
func unescapeMountPoint(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// staleDirs are the dirs of earlier nodes whose owner process is gone.
func staleDirs(tmp string) []string {
	dirs, _ := filepath.Glob(filepath.Join(tmp, dirPrefix+"*"))
	var stale []string
	for _, d := range dirs {
		s, err := loadHostState(filepath.Join(d, "host.json"))
		if err == nil && s.Owner > 0 && processAlive(s.Owner) {
			continue
		}
		stale = append(stale, d)
	}
	return stale
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// cleanStale undoes the host changes of nodes whose test binary died
// before it could stop them.
func cleanStale(ctx context.Context, tmp string) error {
	var errs []error
	for _, d := range staleDirs(tmp) {
		s, err := loadHostState(filepath.Join(d, "host.json"))
		if err != nil {
			// Killed before it saved the state: it changed nothing yet
			// but maybe the dir. Undo what it may have.
			s = hostState{}
		}
		if err := restoreHost(ctx, d, s, false); err != nil {
			errs = append(errs, fmt.Errorf("clean up the node left in %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}
