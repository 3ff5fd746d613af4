package framework

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/e2e/cluster"
	"github.com/sparkplug-io/sparkplug/e2e/node"
)

const (
	// DefaultNamespace is where workflows run and sparkplug is installed.
	DefaultNamespace = "e2e"
	// SparkServiceAccount is the account the examples' drivers run as
	// (driver.serviceAccount: spark); users create it, so does Start.
	SparkServiceAccount = "spark"
	// startTimeout bounds Start, the plugin build included.
	startTimeout = 5 * time.Minute
)

// Options configures Start.
type Options struct {
	// Namespace is where workflows run and sparkplug is installed.
	// Default: DefaultNamespace.
	Namespace string
	// LogDir receives every process's log. Default: a dir in the state
	// dir, removed by Stop unless KeepDir.
	LogDir string
	// KeepDir keeps the state dirs (logs, kubeconfigs) after Stop.
	KeepDir bool
	// Progress receives one line per step of Start and Stop. Default: none.
	Progress io.Writer
	// PluginBinary is a sparkplug binary to run instead of building
	// ./cmd/sparkplug of the repository.
	PluginBinary string
	// AgentTokenMode forces how agents read the plugin token (see
	// argo.TokenMode); empty chooses.
	AgentTokenMode argo.TokenMode
	// Defaults runs Argo's workflow-controller and sparkplug with their own
	// defaults (requeue times, agent patch rate, sparkplug's info log)
	// instead of the suite's fast ones: what the scale benchmark measures.
	Defaults bool
	// Argo is another Argo Workflows version to run than the tools' (one
	// hack/argo.sh pins, e.g. v4.0.2): its workflow-controller and argoexec,
	// built by hack/argo.sh, and its CRDs and agent Role. Empty: the tools'.
	Argo string
	// RealNode runs a real node (package node: containerd, CoreDNS, a
	// kubelet) beside KWOK's, once the control plane is up; Env.Node. Needs
	// root and hack/node.sh build.
	RealNode bool
	// NodeImages are image tarballs imported into the real node once it
	// runs, before the workflow-controller starts.
	NodeImages []string
	// ExecutorImage is the workflow-controller's --executor-image (the
	// image of agent pods and of container steps' init and wait
	// containers): with RealNode, an argoexec image among NodeImages, so
	// that the kubelet runs the agent pods of workflows on the real node.
	// Default: argo.ExecutorImage, which only played agents "run".
	ExecutorImage string
	// Mode is how sparkplug runs: ModeSidecar (default: manifests/, serve
	// as each agent pod's plugin sidecar) or ModeController
	// (manifests/modes/controller: the acknowledger as the sidecar, and
	// sparkplug controller's replicas, Env.SparkplugControllers).
	Mode string
	// IgnoreAgent, when set, names agent pods the harness leaves unplayed
	// (no argoexec, no sidecar; KWOK still marks them Running), beside
	// those of the real node. Controller mode needs no agent to run a
	// Spark step: the scale benchmark leaves them unplayed where N agent
	// processes would not fit the machine.
	IgnoreAgent func(*corev1.Pod) bool
	// ControllerPprof has each sparkplug controller replica serve Go's
	// profiles on a loopback port of its own
	// (SparkplugControllers.PprofAddr).
	ControllerPprof bool
	// Kueue runs Kueue's controller manager (hack/kueue.sh's build, or
	// $SPARKPLUG_KUEUE_BIN) as a host process: its CRDs installed with
	// Argo's, its webhooks registered; Env.Kueue.
	Kueue bool
}

// Versions are the versions of what runs.
type Versions struct {
	Kubernetes, Argo, KWOK string
	// Kueue is empty unless Options.Kueue.
	Kueue string
}

func (v Versions) String() string {
	s := fmt.Sprintf("Kubernetes %s (kube-apiserver, kube-controller-manager, kube-scheduler), KWOK %s, Argo Workflows %s (workflow-controller, argoexec)",
		v.Kubernetes, v.KWOK, v.Argo)
	if v.Kueue != "" {
		s += ", Kueue " + v.Kueue
	}
	return s
}

// Env is a running e2e environment.
type Env struct {
	Cluster   *cluster.Cluster
	Kube      kubernetes.Interface
	Workflows wfclient.Interface
	// Namespace is where workflows run.
	Namespace string
	Versions  Versions
	// Install is what was installed from manifests/.
	Install *Install
	// Sidecars plays sparkplug as the plugin sidecar of every agent pod
	// (in controller mode: the acknowledger).
	Sidecars *Sidecars
	// SparkplugControllers are sparkplug controller's replicas in
	// controller mode; nil in sidecar mode.
	SparkplugControllers *SparkplugControllers
	// Agents plays kubelet for agent pods.
	Agents *argo.Agents
	// RepoRoot is the repository the plugin was built from.
	RepoRoot string
	// DriverLogs is where the Spark simulator writes each driver's log,
	// which KWOK serves as the pod's log (sim.RunLogs).
	DriverLogs string
	// Node is the real node (Options.RealNode), or nil. Pods run there
	// with node.OnNode (its toleration and node selector); their images
	// come from Node.ImportImage or a registry Node.TrustRegistry names.
	Node *node.Node
	// Kueue is Kueue's controller manager (Options.Kueue), or nil.
	Kueue *Kueue

	opts      Options
	dir       string
	binDir    string
	moduleDir string
	// argoBinDir holds workflow-controller and argoexec: binDir, or
	// Options.Argo's build (which also has its argo CLI).
	argoBinDir string
	// ownMu guards own, the tests' own sparkplug controllers by namespace
	// (OwnControllers).
	ownMu sync.Mutex
	own   map[string]*SparkplugControllers
	// controllerMu guards controller, which RestartController replaces,
	// and controllerArgs, the flags RestartControllerWith gave it.
	controllerMu   sync.Mutex
	controller     *cluster.Process
	controllerArgs []string
	cancel         context.CancelFunc
	log            *slog.Logger
	// helm is the pinned helm, built on first use (Helm).
	helmOnce sync.Once
	helm     string
	helmErr  error
	// failedMu guards failedTests, the tests with a fixture that failed.
	failedMu    sync.Mutex
	failedTests []string
}

// failed records that test name failed (once).
func (e *Env) failed(name string) {
	e.failedMu.Lock()
	defer e.failedMu.Unlock()
	if !slices.Contains(e.failedTests, name) {
		e.failedTests = append(e.failedTests, name)
	}
}

// FailedTests are the tests that used a fixture (Given) and failed, in
// the order they ended.
func (e *Env) FailedTests() []string {
	e.failedMu.Lock()
	defer e.failedMu.Unlock()
	return slices.Clone(e.failedTests)
}

// Mode is how sparkplug runs: ModeSidecar or ModeController.
func (e *Env) Mode() string { return e.opts.Mode }

// SparkplugServiceAccount is the ServiceAccount (in Namespace) that does
// sparkplug's Kubernetes work: the plugin's in sidecar mode, the
// controller Deployment's in controller mode (the acknowledger has none).
// A test that grants sparkplug more (a Secret's get) binds this one.
func (e *Env) SparkplugServiceAccount() string {
	if e.SparkplugControllers != nil {
		return e.SparkplugControllers.ServiceAccount()
	}
	return e.Install.Plugin.ServiceAccount()
}

// installDir is the kustomization the mode installs.
func (e *Env) installDir() string {
	if e.opts.Mode == ModeController {
		return ControllerInstallDir
	}
	return SidecarInstallDir
}

// installSparkplug installs manifests/ (or the mode's overlay) into the namespace, the spark
// ServiceAccount the examples' drivers use, and Argo's agent Role for the
// workflows' default ServiceAccount.
func (e *Env) installSparkplug(ctx context.Context) error {
	if err := argo.EnsureNamespace(ctx, e.Cluster, e.Namespace); err != nil {
		return err
	}
	var inst *Install
	var err error
	if e.opts.Kueue {
		// What a user with Kueue installs: the mode's kustomization with
		// the Kueue component's RBAC.
		inst, err = RenderKueueInstall(ctx, e.RepoRoot, e.binDir, e.installDir(), e.Namespace, e.dir)
	} else {
		inst, err = RenderInstallFrom(ctx, e.RepoRoot, e.binDir, e.installDir(), e.Namespace)
	}
	if err != nil {
		return err
	}
	if err := e.Cluster.Apply(ctx, inst.YAML); err != nil {
		return fmt.Errorf("apply %s/: %w", e.installDir(), err)
	}
	e.Install = inst
	if err := e.Cluster.EnsureServiceAccount(ctx, e.Namespace, SparkServiceAccount); err != nil {
		return err
	}
	return argo.InstallAgentRBAC(ctx, e.Cluster, e.moduleDir, e.Namespace, "default")
}

// RestartPlugin kills the plugin sidecar of a workflow's agent pod with
// SIGKILL; it starts again as kubelet restarts a failed container.
func (e *Env) RestartPlugin(ctx context.Context, namespace, workflow string) error {
	return e.Sidecars.Restart(ctx, namespace, workflow)
}

// LogDir is where every process logs.
func (e *Env) LogDir() string { return e.opts.LogDir }

// Kubeconfig is the admin kubeconfig.
func (e *Env) Kubeconfig() string { return e.Cluster.Kubeconfig }

// BinDir holds the tools (kubectl among them).
func (e *Env) BinDir() string { return e.binDir }

// RestartController stops the workflow-controller (SIGTERM) and starts it
// again, as an upgrade or a rescheduled controller pod would.
func (e *Env) RestartController(ctx context.Context) error {
	e.controllerMu.Lock()
	defer e.controllerMu.Unlock()
	if err := e.controller.Stop(); err != nil {
		return err
	}
	p, err := argo.StartController(ctx, e.Cluster, e.argoBinDir, e.opts.ExecutorImage, e.opts.Defaults, e.controllerArgs...)
	if err != nil {
		return err
	}
	e.controller = p
	return nil
}

// RestartControllerWith restarts the workflow-controller as
// RestartController does, with args added to its flags from now on (none:
// its flags as the environment started it), e.g. the client limits the
// scale benchmark raises.
func (e *Env) RestartControllerWith(ctx context.Context, args ...string) error {
	e.controllerMu.Lock()
	e.controllerArgs = slices.Clone(args)
	e.controllerMu.Unlock()
	return e.RestartController(ctx)
}

// StopController stops the workflow-controller (SIGTERM) until
// StartController: nothing reads the TaskSets or updates the Workflows
// meanwhile. Only a test that runs alone (not t.Parallel) may.
func (e *Env) StopController() error {
	e.controllerMu.Lock()
	defer e.controllerMu.Unlock()
	if e.controller == nil {
		return errors.New("the workflow-controller is not running")
	}
	err := e.controller.Stop()
	e.controller = nil
	return err
}

// StartController starts the workflow-controller StopController stopped.
func (e *Env) StartController(ctx context.Context) error {
	e.controllerMu.Lock()
	defer e.controllerMu.Unlock()
	if e.controller != nil {
		return errors.New("the workflow-controller runs already")
	}
	p, err := argo.StartController(ctx, e.Cluster, e.argoBinDir, e.opts.ExecutorImage, e.opts.Defaults, e.controllerArgs...)
	if err != nil {
		return err
	}
	e.controller = p
	return nil
}

// ControllerLogTail returns the end of the workflow-controller's log.
func (e *Env) ControllerLogTail(n int) string {
	e.controllerMu.Lock()
	defer e.controllerMu.Unlock()
	if e.controller == nil {
		return ""
	}
	return e.controller.LogTail(n)
}

// CheckAlive returns an error naming any process of the environment that
// has exited: a component, the controller, the plugin.
func (e *Env) CheckAlive() error {
	errs := []error{e.Cluster.CheckAlive()}
	e.controllerMu.Lock()
	defer e.controllerMu.Unlock()
	if e.controller != nil {
		if exited, err := e.controller.Exited(); exited {
			errs = append(errs, fmt.Errorf("workflow-controller exited (%v); end of its log:\n%s", err, e.controller.LogTail(30)))
		}
	}
	if e.Sidecars != nil && e.Sidecars.agents != nil {
		errs = append(errs, e.Sidecars.checkAlive())
	}
	if e.SparkplugControllers != nil {
		errs = append(errs, e.SparkplugControllers.checkAlive())
	}
	for _, c := range e.ownControllers() {
		errs = append(errs, c.checkAlive())
	}
	if e.Node != nil {
		errs = append(errs, e.Node.CheckAlive())
	}
	if e.Kueue != nil {
		errs = append(errs, e.Kueue.checkAlive())
	}
	return errors.Join(errs...)
}

// DumpLogs writes the end of every log to w.
func (e *Env) DumpLogs(w io.Writer, lines int) {
	if e.Cluster != nil {
		e.Cluster.DumpLogs(w, lines)
	}
	if e.controller != nil {
		fmt.Fprintf(w, "===== workflow-controller: last %d lines of %s\n%s\n", lines, e.controller.LogPath(), e.controller.LogTail(lines))
	}
	if e.Sidecars != nil && e.Sidecars.agents != nil {
		fmt.Fprintf(w, "===== sparkplug sidecars: last %d lines of each\n%s\n", lines, e.Sidecars.LogTail("", lines))
	}
	if e.SparkplugControllers != nil {
		fmt.Fprintf(w, "===== sparkplug controller: last %d lines of each replica\n%s\n", lines, e.SparkplugControllers.LogTail(lines))
	}
	for _, c := range e.ownControllers() {
		fmt.Fprintf(w, "===== sparkplug controller of namespace %s: last %d lines of each replica\n%s\n", c.namespace, lines, c.LogTail(lines))
	}
	if e.Node != nil {
		e.Node.DumpLogs(w, lines)
	}
	if e.Kueue != nil {
		fmt.Fprintf(w, "===== kueue: last %d lines of %s\n%s\n", lines, e.Kueue.LogPath(), e.Kueue.LogTail(lines))
	}
}

// Stop stops everything in reverse order and removes the state dir unless
// Options.KeepDir.
func (e *Env) Stop() error {
	var errs []error
	if e.Agents != nil {
		e.Agents.Stop()
	}
	if e.SparkplugControllers != nil {
		e.SparkplugControllers.stopAll()
	}
	for _, c := range e.ownControllers() {
		c.stopAll()
	}
	if e.cancel != nil {
		e.cancel()
	}
	if e.controller != nil {
		errs = append(errs, e.controller.Stop())
	}
	// The node deletes its pods through the API server: before the
	// control plane stops.
	if e.Node != nil {
		errs = append(errs, e.Node.Stop())
	}
	if e.Kueue != nil {
		errs = append(errs, e.Kueue.stop())
	}
	if e.Cluster != nil {
		errs = append(errs, e.Cluster.Stop())
	}
	if e.dir != "" && !e.opts.KeepDir {
		if err := os.RemoveAll(e.dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// onRealNode reports whether the real node's kubelet runs pod, which the
// harness then does not play.
func (e *Env) onRealNode(pod *corev1.Pod) bool { return e.Node != nil && node.Runs(pod) }

// ignoreAgent reports whether the harness leaves an agent pod unplayed:
// the real node runs it, or Options.IgnoreAgent says so.
func (e *Env) ignoreAgent(pod *corev1.Pod) bool {
	return e.onRealNode(pod) || (e.opts.IgnoreAgent != nil && e.opts.IgnoreAgent(pod))
}

// startNode starts the real node against the control plane, with the
// binaries hack/node.sh built ($SPARKPLUG_NODE_BIN, else its bindir).
func (e *Env) startNode(ctx context.Context) (*node.Node, error) {
	binDir := os.Getenv(node.EnvBinDir)
	if binDir == "" {
		out, err := exec.CommandContext(ctx, "bash", filepath.Join(e.RepoRoot, "hack", "node.sh"), "bindir").Output()
		if err != nil {
			return nil, fmt.Errorf("hack/node.sh bindir: %w", err)
		}
		binDir = strings.TrimSpace(string(out))
	}
	u, err := url.Parse(e.Cluster.Config.Host)
	if err != nil {
		return nil, fmt.Errorf("API server address %q: %w", e.Cluster.Config.Host, err)
	}
	return node.Start(ctx, node.Options{
		BinDir:     binDir,
		Kubeconfig: e.Cluster.Kubeconfig,
		APIServer:  u.Host,
		CAFile:     e.Cluster.CAFile(),
		LogDir:     e.opts.LogDir,
		KeepDir:    e.opts.KeepDir,
		Progress:   e.opts.Progress,
	})
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate plugin token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func kwokVersion(ctx context.Context, binDir string) string {
	out, err := exec.CommandContext(ctx, filepath.Join(binDir, "kwok"), "--version").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	// "kwok version v0.7.0 go1.26.8 (linux/amd64)"
	fields := strings.Fields(string(out))
	if len(fields) >= 3 {
		return fields[2]
	}
	return strings.TrimSpace(string(out))
}

// otherArgo builds an Argo version hack/argo.sh pins and returns the dir
// of its binaries and of its module.
func otherArgo(ctx context.Context, repoRoot, version string) (binDir, moduleDir string, err error) {
	script := filepath.Join(repoRoot, "hack", "argo.sh")
	if out, err := exec.CommandContext(ctx, "bash", script, "build", version).CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("hack/argo.sh build %s: %w\n%s", version, err, out)
	}
	bin, err := exec.CommandContext(ctx, "bash", script, "bindir", version).Output()
	if err != nil {
		return "", "", fmt.Errorf("hack/argo.sh bindir %s: %w", version, err)
	}
	mod, err := exec.CommandContext(ctx, "bash", script, "moddir", version).Output()
	if err != nil {
		return "", "", fmt.Errorf("hack/argo.sh moddir %s: %w", version, err)
	}
	return strings.TrimSpace(string(bin)), strings.TrimSpace(string(mod)), nil
}

// ArgoCLI is the argo CLI of another Argo version (Options.Argo) the
// environment runs, "" for the default one, whose CLI hack/servers.sh
// builds: `argo retry` formulates the retry itself, so the CLI's version
// must be the controller's.
func (e *Env) ArgoCLI() string {
	if e.opts.Argo == "" {
		return ""
	}
	return filepath.Join(e.argoBinDir, "argo")
}
