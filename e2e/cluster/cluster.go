package cluster

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	// stopped is set once Stop begins: a refused connection is then
	// final (dial).
	stopped atomic.Bool
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

// Stop terminates every component in reverse start order (SIGTERM, SIGKILL
// after a few seconds) and removes the state dir unless Options.KeepDir.
// It is safe to call more than once; later calls return the first result.
func (c *Cluster) Stop() error {
	c.stopped.Store(true)
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
