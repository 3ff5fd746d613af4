package framework

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/e2e/cluster"
	"github.com/sparkplug-io/sparkplug/e2e/node"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/e2e/stages"
)

// Start brings up the whole environment. On error, everything started is
// stopped again.
func Start(ctx context.Context, opts Options) (_ *Env, err error) {
	if opts, err = opts.withDefaults(); err != nil {
		return nil, err
	}
	ctx, cancelStart := context.WithTimeout(ctx, startTimeout)
	defer cancelStart()
	s := &starting{e: &Env{Namespace: opts.Namespace, opts: opts}, start: time.Now()}
	defer func() {
		if err != nil {
			_ = s.e.Stop()
		}
	}()
	for _, step := range []func(context.Context) error{
		s.dirs,
		s.argoBuild,
		s.buildPlugin,
		s.cluster,
		s.realNode,
		s.clients,
		s.kueue,
		s.install,
		s.workflowController,
		s.sparkplug,
		s.agentsAndSimulators,
	} {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	s.ready()
	return s.e, nil
}

// withDefaults fills in the defaults of Options and checks its mode.
func (opts Options) withDefaults() (Options, error) {
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.ExecutorImage == "" {
		opts.ExecutorImage = argo.ExecutorImage
	}
	switch opts.Mode {
	case "":
		opts.Mode = ModeSidecar
	case ModeSidecar, ModeController:
	default:
		return opts, fmt.Errorf("mode %q: want %s or %s", opts.Mode, ModeSidecar, ModeController)
	}
	return opts, nil
}

// starting is what Start's steps share while the environment comes up.
type starting struct {
	e     *Env
	start time.Time
	// pluginBuild receives the plugin's (and the acknowledger's) build.
	pluginBuild chan built
	// kueueBin is Kueue's bin dir (Options.Kueue), or "".
	kueueBin string
	// bgCtx lives until Env.Stop: agents, executors and driver logs.
	bgCtx context.Context
	// token is the plugin token the agents are given.
	token string
}

// built is the plugin binary and, in controller mode, the acknowledger.
type built struct {
	bin, ack string
	err      error
}

// step prints one step of Start with the time since it began.
func (s *starting) step(format string, args ...any) {
	fmt.Fprintf(s.e.opts.Progress, "[%5.1fs] %s\n", time.Since(s.start).Seconds(), fmt.Sprintf(format, args...))
}

// dirs finds the repository and the tools, and makes the state dir, the
// log dir and the harness log.
func (s *starting) dirs(ctx context.Context) error {
	e := s.e
	var err error
	if e.RepoRoot, err = RepoRoot(); err != nil {
		return err
	}
	if e.binDir, err = ToolsBin(e.RepoRoot); err != nil {
		return err
	}
	if e.dir, err = os.MkdirTemp("", "sparkplug-e2e-"); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	if e.opts.LogDir == "" {
		e.opts.LogDir = filepath.Join(e.dir, "logs")
	}
	if err := os.MkdirAll(e.opts.LogDir, 0o755); err != nil {
		return fmt.Errorf("create log dir: %w", err)
	}
	logFile, err := os.OpenFile(filepath.Join(e.opts.LogDir, "harness.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open harness log: %w", err)
	}
	e.log = slog.New(slog.NewTextHandler(logFile, nil))
	return nil
}

// argoBuild finds Argo's module, and builds Options.Argo if it names
// another version than the tools'.
func (s *starting) argoBuild(ctx context.Context) error {
	e := s.e
	var err error
	if e.moduleDir, err = argo.ModuleDir(ctx, e.RepoRoot); err != nil {
		return err
	}
	e.argoBinDir = e.binDir
	if e.opts.Argo == "" {
		return nil
	}
	s.step("building Argo %s (hack/argo.sh; cached)", e.opts.Argo)
	var moduleDir string
	if e.argoBinDir, moduleDir, err = otherArgo(ctx, e.RepoRoot, e.opts.Argo); err != nil {
		return err
	}
	// v3.6's minimal CRDs are refused by Kubernetes 1.33's API server
	// (a schema property without a type): its controller runs on the
	// go.mod's Argo CRDs (v3.7), a superset it reads.
	if !strings.HasPrefix(e.opts.Argo, "v3.6.") {
		e.moduleDir = moduleDir
	}
	return nil
}

// buildPlugin builds the plugin (and in controller mode the acknowledger)
// while the control plane starts; sparkplug waits for it.
func (s *starting) buildPlugin(ctx context.Context) error {
	e := s.e
	s.pluginBuild = make(chan built, 1)
	go func() {
		var b built
		if e.opts.PluginBinary != "" {
			b.bin = e.opts.PluginBinary
		} else if b.bin, b.err = BuildPlugin(ctx, e.RepoRoot, e.dir); b.err != nil {
			s.pluginBuild <- b
			return
		}
		if e.opts.Mode == ModeController {
			b.ack, b.err = BuildAck(ctx, e.RepoRoot, e.dir)
		}
		s.pluginBuild <- b
	}()
	return nil
}

// cluster starts etcd, the Kubernetes control plane and KWOK, with Argo's
// CRDs (and Kueue's) installed before the controllers.
func (s *starting) cluster(ctx context.Context) error {
	e := s.e
	var err error
	if e.opts.Kueue {
		if s.kueueBin, err = KueueBinDir(ctx, e.RepoRoot); err != nil {
			return err
		}
	}
	stageFiles, err := stages.Write(filepath.Join(e.dir, "stages"))
	if err != nil {
		return err
	}
	s.step("starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler, KWOK (logs: %s)", e.opts.LogDir)
	e.Cluster, err = cluster.Start(ctx, cluster.Options{
		BinDir:            e.binDir,
		ControllerManager: true,
		Scheduler:         true,
		KWOK:              true,
		KWOKStages:        stageFiles,
		LogDir:            e.opts.LogDir,
		KeepDir:           e.opts.KeepDir,
		// Argo's CRDs before the controllers, so that the garbage
		// collector knows Workflows (which own the drivers) from its start.
		BeforeControllers: func(ctx context.Context, c *cluster.Cluster) error {
			s.step("installing Argo's CRDs and the workflow-controller ConfigMap")
			if err := argo.Install(ctx, c, e.moduleDir); err != nil {
				return err
			}
			if s.kueueBin == "" {
				return nil
			}
			s.step("installing Kueue's CRDs (%s/crds)", s.kueueBin)
			return installKueueCRDs(ctx, c, s.kueueBin)
		},
	})
	if err != nil {
		return err
	}
	e.Kube = e.Cluster.Client
	return nil
}

// realNode starts the real node (Options.RealNode) and imports its images.
func (s *starting) realNode(ctx context.Context) error {
	e := s.e
	if !e.opts.RealNode {
		return nil
	}
	var err error
	s.step("starting the real node %s: containerd, CoreDNS, kubelet (logs: %s)", node.Name, e.opts.LogDir)
	if e.Node, err = e.startNode(ctx); err != nil {
		return err
	}
	for _, tarball := range e.opts.NodeImages {
		s.step("importing %s into the real node", filepath.Base(tarball))
		if err := e.Node.ImportImage(ctx, tarball); err != nil {
			return err
		}
	}
	return nil
}

// clients makes the Argo client and records the versions.
func (s *starting) clients(ctx context.Context) error {
	e := s.e
	var err error
	if e.Workflows, err = wfclient.NewForConfig(e.Cluster.Config); err != nil {
		return fmt.Errorf("argo client: %w", err)
	}
	e.Versions = Versions{
		Kubernetes: e.Cluster.Version,
		Argo:       argo.Version(ctx, e.argoBinDir),
		KWOK:       kwokVersion(ctx, e.binDir),
	}
	return nil
}

// kueue starts Kueue's controller manager (Options.Kueue).
func (s *starting) kueue(ctx context.Context) error {
	e := s.e
	if !e.opts.Kueue {
		return nil
	}
	var err error
	s.step("starting Kueue's controller manager and registering its webhooks (log: %s)", filepath.Join(e.opts.LogDir, "kueue.log"))
	kdir := filepath.Join(e.dir, "kueue")
	if err := os.MkdirAll(kdir, 0o755); err != nil {
		return err
	}
	if e.Kueue, err = startKueue(ctx, e.Cluster, s.kueueBin, e.RepoRoot, kdir); err != nil {
		return err
	}
	e.Versions.Kueue = e.Kueue.Version
	return nil
}

// install installs sparkplug from manifests/.
func (s *starting) install(ctx context.Context) error {
	e := s.e
	s.step("installing sparkplug (%s mode) into namespace %s: kubectl kustomize %s/", e.opts.Mode, e.Namespace, e.installDir())
	return e.installSparkplug(ctx)
}

// workflowController starts Argo's workflow-controller.
func (s *starting) workflowController(ctx context.Context) error {
	e := s.e
	var err error
	s.step("starting the workflow-controller")
	e.controller, err = argo.StartController(ctx, e.Cluster, e.argoBinDir, e.opts.ExecutorImage, e.opts.Defaults)
	return err
}

// sparkplug writes the plugin token, waits for the plugin's build and
// starts sparkplug: the sidecars' kubeconfig, or in controller mode
// sparkplug controller's replicas.
func (s *starting) sparkplug(ctx context.Context) error {
	e := s.e
	bgCtx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	s.bgCtx = bgCtx
	var err error
	if s.token, err = randomToken(); err != nil {
		return err
	}
	tokenFile := filepath.Join(e.dir, "plugin-token")
	if err := os.WriteFile(tokenFile, []byte(s.token), 0o440); err != nil {
		return fmt.Errorf("write plugin token: %w", err)
	}
	b := <-s.pluginBuild
	if b.err != nil {
		return b.err
	}
	e.Sidecars = &Sidecars{c: e.Cluster, kube: e.Kube, bin: b.bin, ack: b.ack, plugin: e.Install.Plugin, tokenFile: tokenFile,
		dir: e.dir, kubeconfigs: map[string]string{}, defaults: e.opts.Defaults}
	if e.opts.Mode == ModeController {
		if e.Install.Controller == nil {
			return fmt.Errorf("%s/ has no Deployment %s", e.installDir(), controllerDeploymentName)
		}
		e.Sidecars.controllerAccount = e.Install.Controller.ServiceAccount
		s.step("starting sparkplug controller: %d replicas as ServiceAccount %s", e.Install.Controller.Replicas, e.Install.Controller.ServiceAccount)
		e.SparkplugControllers, err = newSparkplugControllers(ctx, e.Cluster, controllerSpec{
			bin: b.bin, dep: *e.Install.Controller, name: e.Install.Controller.Name, namespace: e.Namespace,
			dir: e.dir, defaults: e.opts.Defaults, pprof: e.opts.ControllerPprof})
		return err
	}
	_, err = e.Sidecars.kubeconfig(ctx, e.Namespace, e.Cluster.Config.Host)
	return err
}

// agentsAndSimulators runs Argo's agents (the plugin sidecar beside each),
// the executors' simulator and the drivers' logs.
func (s *starting) agentsAndSimulators(ctx context.Context) error {
	e := s.e
	var err error
	if e.Agents, err = argo.RunAgents(s.bgCtx, e.Cluster, argo.AgentOptions{
		BinDir: e.argoBinDir, Dir: e.dir, Token: s.token, Log: e.log.With("component", "agents"),
		Mode: e.opts.AgentTokenMode, Sidecar: e.Sidecars.command, Ignore: e.ignoreAgent,
	}); err != nil {
		return err
	}
	e.Sidecars.agents = e.Agents
	if _, err := sim.RunExecutors(s.bgCtx, e.Kube, e.onRealNode, e.log.With("component", "executors")); err != nil {
		return err
	}
	e.DriverLogs = filepath.Join(e.dir, "driver-logs")
	return sim.RunLogs(s.bgCtx, e.Kube, e.Cluster.Dynamic, e.DriverLogs, e.onRealNode, e.log.With("component", "driver-logs"))
}

// ready prints what runs.
func (s *starting) ready() {
	e := s.e
	if e.SparkplugControllers != nil {
		s.step("ready: %s; sparkplug controller runs %d replicas as ServiceAccount %s, each agent pod's sidecar is the acknowledger; agents get the plugin token via %s",
			e.Versions, e.SparkplugControllers.Replicas(), e.SparkplugControllers.ServiceAccount(), e.Agents.Mode())
		return
	}
	s.step("ready: %s; sparkplug runs as each agent pod's sidecar, as ServiceAccount %s; agents get the plugin token via %s",
		e.Versions, e.Install.Plugin.ServiceAccount(), e.Agents.Mode())
}
