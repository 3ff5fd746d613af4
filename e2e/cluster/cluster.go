package cluster

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// EnvToolsBin names the environment variable that Options.BinDir defaults to.
const EnvToolsBin = "SPARKPLUG_TOOLS_BIN"

const (
	// defaultStartTimeout bounds Start when its context has no deadline.
	defaultStartTimeout = 2 * time.Minute
	// portAttempts is how often a component is started on fresh ports when
	// it exits during startup (another process may have taken a port).
	portAttempts = 3
	// logTailLines is how much of a component's log errors quote.
	logTailLines = 30
)

// Options says which components to run. The zero value runs etcd and
// kube-apiserver only.
type Options struct {
	// BinDir holds the binaries built by hack/tools.sh. Default:
	// $SPARKPLUG_TOOLS_BIN. Start fails (it does not skip) when it is unset
	// or a binary is missing.
	BinDir string
	// ControllerManager runs kube-controller-manager: garbage collection by
	// ownerReference, ServiceAccount tokens, default ServiceAccounts.
	ControllerManager bool
	// Scheduler runs kube-scheduler (KWOK does not bind pods).
	Scheduler bool
	// KWOK runs KWOK and registers one fake node, FakeNodeName, annotated
	// kwok.x-k8s.io/node: fake.
	KWOK bool
	// KWOKStages are paths of KWOK Stage YAML files; given, they replace
	// KWOK's default pod stages.
	KWOKStages []string
	// LogDir receives one <component>.log per component. Default: the
	// state dir, which Stop removes.
	LogDir string
	// KeepDir keeps the state dir after Stop, for debugging.
	KeepDir bool
	// BeforeControllers, when set, runs once the API server answers and
	// before kube-controller-manager starts: CRDs installed here are known
	// to the garbage collector from its start, instead of after its next
	// discovery, up to 30 s later.
	BeforeControllers func(ctx context.Context, c *Cluster) error
}

// Cluster is a running control plane.
type Cluster struct {
	// Dir is the temp state dir.
	Dir string
	// Kubeconfig is the path of the admin kubeconfig (token auth,
	// insecure-skip-tls-verify, server https://127.0.0.1:<port>).
	Kubeconfig string
	// Config, Client and Dynamic authenticate as the admin (group
	// system:masters).
	Config  *rest.Config
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	// Version is the server's git version, e.g. v1.33.13.
	Version string

	opts   Options
	layout layout
	// procsMu guards procs once Start returned: RestartAPIServer replaces
	// one while tests check that every component is alive.
	procsMu sync.Mutex
	procs   []*process

	mapperOnce sync.Once
	mapper     *restmapper.DeferredDiscoveryRESTMapper

	stopOnce sync.Once
	stopErr  error
}

// withDefaults fills BinDir and checks that the binaries are there.
func (o Options) withDefaults() (Options, error) {
	if o.BinDir == "" {
		o.BinDir = os.Getenv(EnvToolsBin)
	}
	if o.BinDir == "" {
		return o, fmt.Errorf("no tools bin dir: set Options.BinDir or $%s (run: make tools)", EnvToolsBin)
	}
	bins := []string{binEtcd, binAPIServer}
	if o.ControllerManager {
		bins = append(bins, binControllerManager)
	}
	if o.Scheduler {
		bins = append(bins, binScheduler)
	}
	if o.KWOK {
		bins = append(bins, binKWOK)
	}
	for _, b := range bins {
		if _, err := os.Stat(filepath.Join(o.BinDir, b)); err != nil {
			return o, fmt.Errorf("missing %s in %s (run: make tools): %w", b, o.BinDir, err)
		}
	}
	for _, s := range o.KWOKStages {
		if _, err := os.Stat(s); err != nil {
			return o, fmt.Errorf("KWOK stage file: %w", err)
		}
	}
	return o, nil
}

// Start brings up the components opts asks for, each one healthy before
// the next starts, and returns once the cluster is usable: the API server
// ready, the default ServiceAccount created (ControllerManager), the fake
// node Ready (KWOK). On error everything started is stopped again.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	opts, err = opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultStartTimeout)
		defer cancel()
	}
	removeStaleDirs(os.TempDir(), time.Now())
	dir, err := os.MkdirTemp("", stateDirPrefix)
	if err != nil {
		return nil, fmt.Errorf("create state dir: %w", err)
	}
	c := &Cluster{Dir: dir, opts: opts, layout: layout{dir: dir}}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	if c.opts.LogDir == "" {
		c.opts.LogDir = dir
	}
	if err := os.MkdirAll(c.opts.LogDir, 0o755); err != nil {
		return nil, fmt.Errorf("create log dir: %w", err)
	}
	for _, d := range []string{dirCerts, dirKWOKHome} {
		if err := os.MkdirAll(c.layout.path(d), 0o755); err != nil {
			return nil, fmt.Errorf("create state dir: %w", err)
		}
	}
	token, err := c.writeCredentials()
	if err != nil {
		return nil, err
	}

	if err := c.startEtcd(ctx); err != nil {
		return nil, err
	}
	if err := c.startAPIServer(ctx, token); err != nil {
		return nil, err
	}
	if opts.BeforeControllers != nil {
		if err := opts.BeforeControllers(ctx, c); err != nil {
			return nil, err
		}
	}
	if opts.ControllerManager {
		if err := c.startControllerManager(ctx); err != nil {
			return nil, err
		}
	}
	if opts.Scheduler {
		if err := c.startScheduler(ctx); err != nil {
			return nil, err
		}
	}
	if opts.KWOK {
		if err := c.startKWOK(ctx); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// writeCredentials writes the admin token file and the ServiceAccount
// signing key, and returns the admin token.
func (c *Cluster) writeCredentials() (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("generate admin token: %w", err)
	}
	token := hex.EncodeToString(raw)
	// token,user,uid,"group,..."
	line := token + `,admin,admin,"system:masters"` + "\n"
	if err := os.WriteFile(c.layout.path(fileTokens), []byte(line), 0o600); err != nil {
		return "", fmt.Errorf("write token file: %w", err)
	}

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", fmt.Errorf("generate service account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", fmt.Errorf("encode service account public key: %w", err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	if err := os.WriteFile(c.layout.path(fileSAKey), keyPEM, 0o600); err != nil {
		return "", fmt.Errorf("write service account key: %w", err)
	}
	if err := os.WriteFile(c.layout.path(fileSAPub), pubPEM, 0o644); err != nil {
		return "", fmt.Errorf("write service account public key: %w", err)
	}
	return token, nil
}

func (c *Cluster) startEtcd(ctx context.Context) error {
	return c.startComponent(ctx, binEtcd, 2,
		func(p []int) []string {
			c.layout.etcdClientPort, c.layout.etcdPeerPort = p[0], p[1]
			return etcdArgs(c.layout)
		},
		nil,
		func(ctx context.Context) error {
			return httpHealthy(ctx, c.layout.etcdURL()+"/health", "", `"health":"true"`)
		})
}

func (c *Cluster) startAPIServer(ctx context.Context, token string) error {
	err := c.startComponent(ctx, binAPIServer, 1,
		func(p []int) []string {
			c.layout.apiServerPort = p[0]
			return apiServerArgs(c.layout)
		},
		nil,
		func(ctx context.Context) error {
			return httpHealthy(ctx, c.layout.apiServerURL()+"/readyz", token, "")
		})
	if err != nil {
		return err
	}

	kubeconfig, err := renderKubeconfig(c.layout.apiServerURL(), "admin", token)
	if err != nil {
		return err
	}
	c.Kubeconfig = c.layout.path(fileAdminKubeconfig)
	if err := os.WriteFile(c.Kubeconfig, kubeconfig, 0o600); err != nil {
		return fmt.Errorf("write admin kubeconfig: %w", err)
	}
	c.Config = configForToken(c.layout.apiServerURL(), token)
	client, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	c.Client = client
	if c.Dynamic, err = dynamic.NewForConfig(c.Config); err != nil {
		return fmt.Errorf("create dynamic client: %w", err)
	}
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("get server version: %w", err)
	}
	c.Version = v.GitVersion
	return nil
}

func (c *Cluster) startControllerManager(ctx context.Context) error {
	err := c.startComponent(ctx, binControllerManager, 1,
		func(p []int) []string {
			c.layout.controllerManagerPort = p[0]
			return controllerManagerArgs(c.layout)
		},
		nil,
		func(ctx context.Context) error {
			url := fmt.Sprintf("https://%s:%d/healthz", loopback, c.layout.controllerManagerPort)
			return httpHealthy(ctx, url, "", "")
		})
	if err != nil {
		return err
	}
	// Usable once the ServiceAccount controller has run.
	return c.waitFor(ctx, c.procs[len(c.procs)-1], "the default ServiceAccount", func(ctx context.Context) error {
		_, err := c.Client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

func (c *Cluster) startScheduler(ctx context.Context) error {
	return c.startComponent(ctx, binScheduler, 1,
		func(p []int) []string {
			c.layout.schedulerPort = p[0]
			return schedulerArgs(c.layout)
		},
		nil,
		func(ctx context.Context) error {
			url := fmt.Sprintf("https://%s:%d/healthz", loopback, c.layout.schedulerPort)
			return httpHealthy(ctx, url, "", "")
		})
}

func (c *Cluster) startKWOK(ctx context.Context) error {
	if err := c.Apply(ctx, kwokLogsCRD); err != nil {
		return fmt.Errorf("install KWOK's Logs CRD: %w", err)
	}
	err := c.startComponent(ctx, binKWOK, 1,
		func(p []int) []string {
			c.layout.kwokPort = p[0]
			return kwokArgs(c.layout, c.opts.KWOKStages)
		},
		kwokEnv(c.layout),
		func(ctx context.Context) error {
			url := fmt.Sprintf("https://%s:%d/healthz", loopback, c.layout.kwokPort)
			return httpHealthy(ctx, url, "", "")
		})
	if err != nil {
		return err
	}
	if _, err := c.Client.CoreV1().Nodes().Create(ctx, fakeNode(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create fake node: %w", err)
	}
	return c.waitFor(ctx, c.procs[len(c.procs)-1], "the fake node to be Ready", func(ctx context.Context) error {
		node, err := c.Client.CoreV1().Nodes().Get(ctx, FakeNodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return errors.New("node not Ready")
	})
}

// fakeNode is the node KWOK manages, shaped like KWOK's own example node.
func fakeNode() *corev1.Node {
	capacity := corev1.ResourceList{
		// As large as a cluster's node pool: tests run side by side (one
		// launches 40 drivers and 40 executors), and none may wait on
		// another's pods for room; the scale benchmark runs 1,000 drivers
		// while the pods of its run before are still going.
		corev1.ResourceCPU:    resource.MustParse("5000"),
		corev1.ResourceMemory: resource.MustParse("20Ti"),
		corev1.ResourcePods:   resource.MustParse("5000"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: FakeNodeName,
			Annotations: map[string]string{
				KWOKNodeAnnotation:             "fake",
				"node.alpha.kubernetes.io/ttl": "0",
			},
			Labels: map[string]string{
				"kubernetes.io/arch":            "amd64",
				"kubernetes.io/hostname":        FakeNodeName,
				"kubernetes.io/os":              "linux",
				"kubernetes.io/role":            "agent",
				"node-role.kubernetes.io/agent": "",
				"type":                          "kwok",
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

// startComponent starts a component on nports fresh loopback ports and
// waits until healthy reports nil. If the process exits during startup it
// is tried again on other ports, up to portAttempts times.
func (c *Cluster) startComponent(ctx context.Context, name string, nports int, args func(ports []int) []string, env []string, healthy func(context.Context) error) error {
	var lastErr error
	for attempt := 1; attempt <= portAttempts; attempt++ {
		ports, err := freePorts(nports)
		if err != nil {
			return err
		}
		p, err := startProcess(name, filepath.Join(c.opts.BinDir, name), args(ports), env,
			filepath.Join(c.opts.LogDir, name+".log"))
		if err != nil {
			return err
		}
		c.procs = append(c.procs, p)
		if err := c.recordPID(p); err != nil {
			return err
		}
		lastErr = c.waitFor(ctx, p, name+" to be healthy", healthy)
		if lastErr == nil {
			return nil
		}
		if exited, _ := p.exited(); !exited || !strings.Contains(p.logTail(50), "address already in use") {
			return lastErr // not a port taken by someone else: retrying will not help
		}
	}
	return lastErr
}

func (c *Cluster) recordPID(p *process) error {
	f, err := os.OpenFile(c.layout.path(filePIDs), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("record pid: %w", err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "%s %d\n", p.name, p.cmd.Process.Pid); err != nil {
		return fmt.Errorf("record pid: %w", err)
	}
	return nil
}

// waitFor polls check until it returns nil, p exits, or ctx ends. Errors
// quote the end of p's log.
func (c *Cluster) waitFor(ctx context.Context, p *process, what string, check func(context.Context) error) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	start := time.Now()
	var lastErr error
	for {
		if exited, exitErr := p.exited(); exited {
			return fmt.Errorf("%s exited while waiting for %s (%w); end of %s:\n%s",
				p.name, what, exitErr, p.logPath, p.logTail(logTailLines))
		}
		checkCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		lastErr = check(checkCtx)
		cancel()
		if lastErr == nil {
			p.note("### waited %v for %s", time.Since(start).Round(time.Millisecond), what)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out waiting for %s (last error: %v): %w; end of %s:\n%s",
				what, lastErr, ctx.Err(), p.logPath, p.logTail(logTailLines))
		case <-tick.C:
		}
	}
}

// insecureHTTP talks to the components' self-signed endpoints on loopback.
var insecureHTTP = &http.Client{
	Timeout:   2 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // self-signed, loopback only
}

// httpHealthy succeeds if GET url answers 200 and the body contains want.
func httpHealthy(ctx context.Context, url, token, want string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("health request: %w", err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := insecureHTTP.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	return nil
}

// freePorts returns n distinct loopback ports that were free a moment ago.
// Listeners are held until all are picked, so the ports differ.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(loopback, "0"))
		if err != nil {
			return nil, fmt.Errorf("pick a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Stop terminates every component in reverse start order (SIGTERM, SIGKILL
// after a few seconds) and removes the state dir unless Options.KeepDir.
// It is safe to call more than once; later calls return the first result.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		var errs []error
		for i := len(c.procs) - 1; i >= 0; i-- {
			errs = append(errs, c.procs[i].stop(stopGrace))
		}
		if c.opts.KeepDir {
			_ = os.WriteFile(c.layout.path(fileKept), nil, 0o644)
		} else if err := os.RemoveAll(c.Dir); err != nil {
			errs = append(errs, fmt.Errorf("remove state dir: %w", err))
		}
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}

// removeStaleDirs removes the state dirs of clusters whose test binary was
// killed before it could call Stop (a -timeout panic, SIGKILL): Pdeathsig
// ended their processes, but the dirs (over 100 MB, mostly etcd's WAL)
// stay. A dir is stale when it has a pids file older than a minute, none of
// its pids is alive, and it was not kept on purpose (Options.KeepDir).
// Best effort: errors leave a dir in place.
func removeStaleDirs(tmp string, now time.Time) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, stateDirPrefix+"*"))
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, fileKept)); err == nil {
			continue
		}
		pidsPath := filepath.Join(dir, filePIDs)
		info, err := os.Stat(pidsPath)
		if err != nil || now.Sub(info.ModTime()) < time.Minute {
			continue
		}
		b, err := os.ReadFile(pidsPath)
		if err != nil || anyAlive(b) {
			continue
		}
		_ = os.RemoveAll(dir)
	}
}

// anyAlive reports whether any pid of a pids file ("<name> <pid>" lines)
// still exists; a reused pid counts as alive, which only keeps a dir.
func anyAlive(pids []byte) bool {
	for _, line := range strings.Split(strings.TrimSpace(string(pids)), "\n") {
		var name string
		var pid int
		if _, err := fmt.Sscanf(line, "%s %d", &name, &pid); err != nil || pid <= 0 {
			return true // unreadable: assume alive
		}
		if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			return true
		}
	}
	return false
}

// DumpLogs writes the state and the last lines of every component's log
// to w; tests call it when they failed, before Stop.
func (c *Cluster) DumpLogs(w io.Writer, lines int) {
	for _, p := range c.procs {
		state := "running"
		if exited, err := p.exited(); exited {
			state = err.Error()
		}
		fmt.Fprintf(w, "===== %s (pid %d, %s): last %d lines of %s\n%s\n",
			p.name, p.cmd.Process.Pid, state, lines, p.logPath, p.logTail(lines))
	}
}

// CheckAlive returns an error naming any component that has exited.
func (c *Cluster) CheckAlive() error {
	c.procsMu.Lock()
	defer c.procsMu.Unlock()
	var errs []error
	for _, p := range c.procs {
		if exited, err := p.exited(); exited {
			errs = append(errs, fmt.Errorf("%s exited: %w", p.name, err))
		}
	}
	return errors.Join(errs...)
}

// EnsureServiceAccount creates the ServiceAccount namespace/name if it does
// not exist; useful when no controller-manager creates default ones.
func (c *Cluster) EnsureServiceAccount(ctx context.Context, namespace, name string) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	_, err := c.Client.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service account %s/%s: %w", namespace, name, err)
	}
	return nil
}
