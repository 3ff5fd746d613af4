package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The node's identity, and what a pod needs to land on it.
const (
	// Name is the node's name.
	Name = "real-node-0"
	// TaintKey is the key of the node's NoSchedule taint (value "true"):
	// only pods that tolerate it run there, so KWOK's node keeps every
	// other pod.
	TaintKey = "sparkplug.io/real-node"
	// LabelKey is the node's label (value "true"), for nodeSelector.
	LabelKey = "sparkplug.io/real-node"
	// EnvBinDir names the environment variable that may give Options.BinDir.
	EnvBinDir = "SPARKPLUG_NODE_BIN"
	// dirPrefix names the node's temp dirs, by which the next Start finds
	// those of a crashed run.
	dirPrefix = "sparkplug-node-"
	// namespace is containerd's namespace for the CRI's images and containers.
	namespace = "k8s.io"
)

// Toleration lets a pod run on the node.
func Toleration() corev1.Toleration {
	return corev1.Toleration{Key: TaintKey, Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}
}

// NodeSelector keeps a pod off KWOK's node.
func NodeSelector() map[string]string { return map[string]string{LabelKey: "true"} }

// Runs reports whether a pod runs on the real node, or is meant to: it is
// bound there or selects the node's label. The harness's stand-ins for a
// kubelet (agents, simulated executors and logs) leave such pods to the
// real kubelet.
func Runs(pod *corev1.Pod) bool {
	return pod.Spec.NodeName == Name || pod.Spec.NodeSelector[LabelKey] == "true"
}

// OnNode makes a pod spec run on the real node: the toleration and the
// node selector.
func OnNode(spec *corev1.PodSpec) {
	spec.Tolerations = append(spec.Tolerations, Toleration())
	if spec.NodeSelector == nil {
		spec.NodeSelector = map[string]string{}
	}
	for k, v := range NodeSelector() {
		spec.NodeSelector[k] = v
	}
}

// Options configures Start.
type Options struct {
	// BinDir holds kubelet, coredns and pause, as hack/node.sh builds
	// them. Default: $SPARKPLUG_NODE_BIN.
	BinDir string
	// Kubeconfig is the control plane's admin kubeconfig.
	Kubeconfig string
	// APIServer is the API server's host:port (on loopback), where the
	// kubernetes Service's address is forwarded.
	APIServer string
	// CAFile is the API server's CA bundle: the kubelet and CoreDNS verify
	// the server with it. Empty: as the admin kubeconfig says.
	CAFile string
	// LogDir receives containerd.log, coredns.log and kubelet.log.
	// Default: the node's dir.
	LogDir string
	// KeepDir keeps the node's dir (configs, kubelet and containerd state)
	// after Stop.
	KeepDir bool
	// Progress receives one line per step of Start and Stop.
	Progress io.Writer
}

// Node is a running real node: containerd, CoreDNS and a kubelet, on a
// bridge of their own.
type Node struct {
	// Name is the node's name.
	Name string

	opts   Options
	layout layout
	host   hostState
	client kubernetes.Interface
	start  time.Time

	containerd, coredns, kubelet *proc
}

// Start cleans up what a crashed earlier run left on the host, then brings
// the node up and returns once it is Ready. On error everything it changed
// is undone. It needs root.
func Start(ctx context.Context, opts Options) (_ *Node, err error) {
	if opts.BinDir == "" {
		opts.BinDir = os.Getenv(EnvBinDir)
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	n := &Node{Name: Name, opts: opts, start: time.Now()}
	if err := checkRequirements(opts); err != nil {
		return nil, err
	}
	if err := cleanStale(ctx, os.TempDir()); err != nil {
		return nil, err
	}
	if _, err := os.Stat("/sys/class/net/" + Bridge); err == nil {
		return nil, fmt.Errorf("%s exists, and no earlier run of the node left it: remove it (ip link del %s) if it is not in use", Bridge, Bridge)
	}
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("create the node's dir: %w", err)
	}
	n.layout = layout{dir: dir}
	if n.host, err = recordHost(ctx); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := n.host.save(n.layout.hostState()); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, n.Stop())
		}
	}()
	if n.opts.LogDir == "" {
		n.opts.LogDir = dir
	}
	if err := os.MkdirAll(n.opts.LogDir, 0o755); err != nil {
		return nil, fmt.Errorf("create log dir: %w", err)
	}

	n.step("setting up %s (%s), the iptables DNAT of %s:443 to %s", Bridge, bridgeCIDR, APIServiceIP, opts.APIServer)
	if err := setUpNetwork(ctx, opts.APIServer); err != nil {
		return nil, err
	}
	if err := n.writeConfigs(); err != nil {
		return nil, err
	}
	if n.client, err = clientFor(n.layout.kubeconfig()); err != nil {
		return nil, err
	}
	n.step("starting containerd")
	if err := n.startContainerd(ctx); err != nil {
		return nil, err
	}
	n.step("importing the pause image %s", PauseImage)
	pauseTar := n.layout.path("pause-image.tar")
	if err := WriteBinaryImage(pauseTar, PauseImage, filepath.Join(opts.BinDir, "pause")); err != nil {
		return nil, err
	}
	if err := n.ImportImage(ctx, pauseTar); err != nil {
		return nil, err
	}
	n.step("starting CoreDNS on %s:53", BridgeAddress)
	if err := n.startCoreDNS(ctx); err != nil {
		return nil, err
	}
	n.step("starting the kubelet")
	if err := n.startKubelet(ctx); err != nil {
		return nil, err
	}
	n.step("node %s Ready (logs: %s)", Name, n.opts.LogDir)
	return n, nil
}

func (n *Node) step(format string, args ...any) {
	fmt.Fprintf(n.opts.Progress, "[node %5.1fs] %s\n", time.Since(n.start).Seconds(), fmt.Sprintf(format, args...))
}

// checkRequirements fails early, saying what to run, when a binary or
// root is missing.
func checkRequirements(opts Options) error {
	if os.Geteuid() != 0 {
		return errors.New("the real node needs root (containerd, runc, iptables, a bridge)")
	}
	if opts.BinDir == "" {
		return fmt.Errorf("no node bin dir: set Options.BinDir or $%s (run: bash hack/node.sh build)", EnvBinDir)
	}
	for _, b := range []string{"kubelet", "coredns", "pause"} {
		if _, err := os.Stat(filepath.Join(opts.BinDir, b)); err != nil {
			return fmt.Errorf("missing %s (run: bash hack/node.sh build): %w", b, err)
		}
	}
	for _, b := range []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr", "iptables", "ip6tables", "ip"} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("missing %s (run: bash hack/node.sh debs): %w", b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(cniBinDir, "bridge")); err != nil {
		return fmt.Errorf("missing the CNI plugins (run: bash hack/node.sh debs): %w", err)
	}
	if opts.Kubeconfig == "" || opts.APIServer == "" {
		return errors.New("the real node needs the admin kubeconfig and the API server's host:port")
	}
	return nil
}

// writeConfigs writes every config file into the node's dir.
func (n *Node) writeConfigs() error {
	l := n.layout
	cni, err := cniConfigJSON(l)
	if err != nil {
		return err
	}
	kubelet, err := kubeletYAML(l)
	if err != nil {
		return err
	}
	if err := n.writeKubeconfig(); err != nil {
		return err
	}
	files := map[string][]byte{
		l.containerdConfig(): []byte(containerdTOML(l)),
		filepath.Join(l.cniConfDir(), "10-sparkplug.conflist"): cni,
		l.kubeletConfig(): kubelet,
		l.corefile():      []byte(corefile(l)),
		// Pods' DNS: only what the kubelet adds (cluster DNS, search).
		l.resolvConf(): nil,
	}
	for path, b := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	return os.MkdirAll(l.registryHosts(), 0o755)
}

// writeKubeconfig writes the admin kubeconfig for the kubelet and CoreDNS,
// verifying the API server with Options.CAFile when given.
func (n *Node) writeKubeconfig() error {
	cfg, err := clientcmd.LoadFromFile(n.opts.Kubeconfig)
	if err != nil {
		return fmt.Errorf("read kubeconfig %s: %w", n.opts.Kubeconfig, err)
	}
	if n.opts.CAFile != "" {
		for _, c := range cfg.Clusters {
			c.InsecureSkipTLSVerify = false
			c.CertificateAuthority = n.opts.CAFile
			c.CertificateAuthorityData = nil
		}
	}
	if err := clientcmd.WriteToFile(*cfg, n.layout.kubeconfig()); err != nil {
		return fmt.Errorf("write the node's kubeconfig: %w", err)
	}
	return nil
}

func clientFor(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	return c, nil
}

// poll calls check every interval until it succeeds, p exits, or ctx ends.
func poll(ctx context.Context, p *proc, what string, check func(context.Context) error) error {
	var last error
	for {
		if last = check(ctx); last == nil {
			return nil
		}
		if p != nil {
			if err := p.exited(); err != nil {
				return fmt.Errorf("waiting for %s: %w; end of its log:\n%s", what, err, p.logTail(30))
			}
		}
		select {
		case <-ctx.Done():
			msg := ""
			if p != nil {
				msg = "; end of " + p.name + "'s log:\n" + p.logTail(30)
			}
			return fmt.Errorf("waiting for %s: %w (last: %v)%s", what, ctx.Err(), last, msg)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (n *Node) ctr(ctx context.Context, args ...string) (string, error) {
	return run(ctx, "ctr", append([]string{"--address", n.layout.containerdSocket(), "--namespace", namespace}, args...)...)
}

func (n *Node) startContainerd(ctx context.Context) error {
	p, err := startProc("containerd", "containerd", []string{"--config", n.layout.containerdConfig()}, n.opts.LogDir)
	if err != nil {
		return err
	}
	n.containerd = p
	return poll(ctx, p, "containerd", func(ctx context.Context) error {
		_, err := n.ctr(ctx, "version")
		return err
	})
}

// ImportImage imports an image tarball (docker save or OCI archive, as
// WriteBinaryImage and go-containerregistry write them) into the node's
// containerd, where pods find it by its reference (imagePullPolicy Never or
// IfNotPresent).
func (n *Node) ImportImage(ctx context.Context, tarball string) error {
	_, err := n.ctr(ctx, "images", "import", tarball)
	return err
}

// TrustRegistry makes containerd pull from the registry at host (a
// host:port on loopback) over plain HTTP. containerd reads the registry
// host dir at each pull: call it any time before the first pull.
func (n *Node) TrustRegistry(host string) error {
	dir := filepath.Join(n.layout.registryHosts(), host)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("registry host dir of %s: %w", host, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hosts.toml"), []byte(hostsTOML(host)), 0o644); err != nil {
		return fmt.Errorf("registry host config of %s: %w", host, err)
	}
	return nil
}

func (n *Node) startCoreDNS(ctx context.Context) error {
	p, err := startProc("coredns", filepath.Join(n.opts.BinDir, "coredns"), []string{"-conf", n.layout.corefile()}, n.opts.LogDir)
	if err != nil {
		return err
	}
	n.coredns = p
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(BridgeAddress, "53"))
	}}
	name := "kubernetes.default.svc." + ClusterDomain
	return poll(ctx, p, "CoreDNS to resolve "+name, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		addrs, err := r.LookupHost(ctx, name)
		if err != nil {
			return err
		}
		if len(addrs) != 1 || addrs[0] != APIServiceIP {
			return fmt.Errorf("%s is %v, want %s", name, addrs, APIServiceIP)
		}
		return nil
	})
}

func (n *Node) startKubelet(ctx context.Context) error {
	p, err := startProc("kubelet", filepath.Join(n.opts.BinDir, "kubelet"), kubeletArgs(n.layout), n.opts.LogDir)
	if err != nil {
		return err
	}
	n.kubelet = p
	return poll(ctx, p, "node "+Name+" to be Ready", func(ctx context.Context) error {
		node, err := n.client.CoreV1().Nodes().Get(ctx, Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				if c.Status == corev1.ConditionTrue {
					return nil
				}
				return fmt.Errorf("Ready is %s: %s", c.Status, c.Message)
			}
		}
		return errors.New("no Ready condition yet")
	})
}

// CheckAlive returns an error naming any of the node's daemons that has
// exited.
func (n *Node) CheckAlive() error {
	var errs []error
	for _, p := range []*proc{n.containerd, n.coredns, n.kubelet} {
		if p != nil {
			errs = append(errs, p.exited())
		}
	}
	return errors.Join(errs...)
}

// DumpLogs writes the end of each daemon's log to w.
func (n *Node) DumpLogs(w io.Writer, lines int) {
	for _, p := range []*proc{n.containerd, n.coredns, n.kubelet} {
		if p != nil {
			fmt.Fprintf(w, "===== %s (real node): last %d lines of %s\n%s\n", p.name, lines, p.logPath, p.logTail(lines))
		}
	}
}

// LogDir is where the node's daemons log.
func (n *Node) LogDir() string { return n.opts.LogDir }

// stopTimeout bounds the deletion of the node's pods at Stop.
const stopTimeout = time.Minute
