package argo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/sparkplug-io/sparkplug/e2e/cluster"
)

// Argo's words for agent pods (workflow/common in the Argo module, which
// is not imported to keep its dependencies out of go.mod).
const (
	labelComponent        = "workflows.argoproj.io/component"
	componentAgent        = "agent"
	agentMainContainer    = "main"
	envPluginNames        = "ARGO_PLUGIN_NAMES"
	varRunArgo            = "/var/run/argo" // where argoexec reads <plugin>/token
	agentRestartBackoff   = time.Second
	agentRestartsAtMost   = 5
	defaultServiceAccount = "default"
)

// TokenMode is how agents find the plugin token at /var/run/argo.
type TokenMode string

const (
	// TokenMountNamespace: each agent runs in a private mount namespace
	// with the harness's run dir bind-mounted over /run.
	TokenMountNamespace TokenMode = "mount-namespace"
	// TokenHostFile: the token files are written to /var/run/argo on the
	// host (root only, when no mount namespace can be made).
	TokenHostFile TokenMode = "host-file"
)

// AgentOptions configures Agents.
type AgentOptions struct {
	// BinDir holds argoexec.
	BinDir string
	// Dir receives kubeconfigs and the run dir; it must exist.
	Dir string
	// Token is what every agent sends every plugin.
	Token string
	// Log receives the agents' lifecycle; each agent's own output goes to
	// <LogDir>/agent-<pod>.log.
	Log *slog.Logger
	// Mode forces how agents get the token; empty chooses: a mount
	// namespace if one can be made, else (root only) host files.
	Mode TokenMode
}

// Agents plays kubelet for Argo agent pods: it runs `argoexec agent main`
// for each agent pod that KWOK marked Running, with the environment of the
// pod's main container and the token of the pod's ServiceAccount, and stops
// it when the pod goes away.
type Agents struct {
	c     *cluster.Cluster
	opts  AgentOptions
	mode  TokenMode
	run   string // the dir mounted over /run (mount namespace mode)
	unsh  []string
	queue workqueue.TypedRateLimitingInterface[string]
	pods  cache.Indexer

	mu      sync.Mutex
	agents  map[types.UID]*agent
	stopped bool
	wg      sync.WaitGroup
	// hostTokens are the token files written to the host (TokenHostFile),
	// removed by Stop, and with them /var/run/argo if it was made here.
	hostTokens  []string
	madeRunArgo bool
}

type agent struct {
	pod      string // namespace/name
	cancel   context.CancelFunc
	done     chan struct{}
	mu       sync.Mutex
	proc     *cluster.Process
	restarts int
}

// RunAgents starts playing kubelet for agent pods in every namespace until
// ctx is done or Stop is called.
func RunAgents(ctx context.Context, c *cluster.Cluster, opts AgentOptions) (*Agents, error) {
	a := &Agents{
		c:      c,
		opts:   opts,
		run:    filepath.Join(opts.Dir, "run"),
		agents: map[types.UID]*agent{},
		queue:  workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
	}
	if err := os.MkdirAll(filepath.Join(a.run, "argo"), 0o755); err != nil {
		return nil, fmt.Errorf("create agent run dir: %w", err)
	}
	a.mode = opts.Mode
	if a.mode == "" {
		if err := a.chooseTokenMode(ctx); err != nil {
			return nil, err
		}
	} else if a.mode == TokenMountNamespace {
		a.unsh = []string{"unshare", "--mount", "--propagation", "private"}
		if os.Geteuid() != 0 {
			a.unsh = []string{"unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"}
		}
	}
	if a.mode == TokenHostFile {
		if _, err := os.Stat(varRunArgo); os.IsNotExist(err) {
			a.madeRunArgo = true
		}
	}
	opts.Log.Info("agents get the plugin token", "mode", string(a.mode))

	factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.Set{labelComponent: componentAgent}.String()
		}))
	informer := factory.Core().V1().Pods().Informer()
	a.pods = informer.GetIndexer()
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			a.queue.Add(key)
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}); err != nil {
		return nil, fmt.Errorf("watch agent pods: %w", err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return nil, errors.New("agent pod cache did not sync")
	}
	go func() {
		<-ctx.Done()
		a.queue.ShutDown()
	}()
	go a.work(ctx)
	return a, nil
}

// Mode says how agents get their token.
func (a *Agents) Mode() TokenMode { return a.mode }

// chooseTokenMode tries a private mount namespace (as root, else in a user
// namespace), and falls back to host files for root.
func (a *Agents) chooseTokenMode(ctx context.Context) error {
	const probe = ".sparkplug-probe"
	if err := os.WriteFile(filepath.Join(a.run, probe), nil, 0o644); err != nil {
		return fmt.Errorf("write probe: %w", err)
	}
	candidates := [][]string{{"unshare", "--mount", "--propagation", "private"}}
	if os.Geteuid() != 0 {
		candidates = [][]string{{"unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"}}
	}
	var tried []string
	for _, u := range candidates {
		args := append(append([]string{}, u[1:]...), "--", "/bin/sh", "-c", `mount --bind "$0" /run && test -f /run/`+probe, a.run)
		out, err := exec.CommandContext(ctx, u[0], args...).CombinedOutput()
		if err == nil {
			a.mode, a.unsh = TokenMountNamespace, u
			return nil
		}
		tried = append(tried, fmt.Sprintf("%v: %v: %s", u, err, out))
	}
	if os.Geteuid() == 0 {
		a.mode = TokenHostFile
		return nil
	}
	return fmt.Errorf("agents cannot read a plugin token from %s: no mount namespace (%v) and not root", varRunArgo, tried)
}

// writeTokens writes the token file of each plugin.
func (a *Agents) writeTokens(plugins []string) error {
	root := filepath.Join(a.run, "argo")
	if a.mode == TokenHostFile {
		root = varRunArgo
	}
	for _, name := range plugins {
		if name == "" || filepath.Base(name) != name {
			return fmt.Errorf("plugin name %q is not a file name", name)
		}
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create token dir: %w", err)
		}
		path := filepath.Join(dir, "token")
		if b, err := os.ReadFile(path); err == nil && string(b) == a.opts.Token {
			continue
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(a.opts.Token), 0o440); err != nil {
			return fmt.Errorf("write token of plugin %s: %w", name, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("write token of plugin %s: %w", name, err)
		}
		if a.mode == TokenHostFile {
			a.mu.Lock()
			a.hostTokens = append(a.hostTokens, path)
			a.mu.Unlock()
		}
	}
	return nil
}

func (a *Agents) work(ctx context.Context) {
	for {
		key, shutdown := a.queue.Get()
		if shutdown {
			return
		}
		if err := a.sync(ctx, key); err != nil && ctx.Err() == nil {
			a.opts.Log.Warn("agent pod sync failed, retrying", "pod", key, "error", err.Error())
			a.queue.AddRateLimited(key)
		} else {
			a.queue.Forget(key)
		}
		a.queue.Done(key)
	}
}

// sync starts the agent of a running pod and stops the agents of pods
// that are gone or going.
func (a *Agents) sync(ctx context.Context, key string) error {
	obj, exists, err := a.pods.GetByKey(key)
	if err != nil {
		return err
	}
	live := map[types.UID]bool{}
	if exists {
		pod := obj.(*corev1.Pod)
		if pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning {
			live[pod.UID] = true
			if err := a.ensure(ctx, pod); err != nil {
				return err
			}
		}
	}
	// Stop agents of this pod name whose pod is gone, deleting or replaced.
	a.mu.Lock()
	var stop []*agent
	for uid, ag := range a.agents {
		if ag.pod == key && !live[uid] {
			stop = append(stop, ag)
			delete(a.agents, uid)
		}
	}
	a.mu.Unlock()
	for _, ag := range stop {
		a.opts.Log.Info("agent pod gone: stopping its agent", "pod", ag.pod)
		ag.stop()
	}
	return nil
}

// ensure starts the agent of pod unless it runs.
func (a *Agents) ensure(ctx context.Context, pod *corev1.Pod) error {
	a.mu.Lock()
	_, running := a.agents[pod.UID]
	stopped := a.stopped
	a.mu.Unlock()
	if running || stopped {
		return nil
	}
	bin, args, env, err := a.command(ctx, pod)
	if err != nil {
		return err
	}
	agentCtx, cancel := context.WithCancel(ctx)
	ag := &agent{pod: pod.Namespace + "/" + pod.Name, cancel: cancel, done: make(chan struct{})}
	a.mu.Lock()
	if a.stopped {
		a.mu.Unlock()
		cancel()
		return nil
	}
	a.agents[pod.UID] = ag
	a.wg.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.wg.Done()
		a.supervise(agentCtx, ag, bin, args, env)
	}()
	return nil
}

// command is the process that plays the pod's main container.
func (a *Agents) command(ctx context.Context, pod *corev1.Pod) (string, []string, []string, error) {
	var main *corev1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == agentMainContainer {
			main = &pod.Spec.Containers[i]
		}
	}
	if main == nil {
		return "", nil, nil, fmt.Errorf("agent pod %s/%s has no %s container", pod.Namespace, pod.Name, agentMainContainer)
	}
	var env []string
	var plugins []string
	for _, e := range main.Env {
		if e.ValueFrom != nil {
			return "", nil, nil, fmt.Errorf("agent pod %s: env %s uses valueFrom, which this kubelet does not play", pod.Name, e.Name)
		}
		env = append(env, e.Name+"="+e.Value)
		if e.Name == envPluginNames {
			if err := json.Unmarshal([]byte(e.Value), &plugins); err != nil {
				return "", nil, nil, fmt.Errorf("agent pod %s: %s=%q: %w", pod.Name, envPluginNames, e.Value, err)
			}
		}
	}
	if err := a.writeTokens(plugins); err != nil {
		return "", nil, nil, err
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = defaultServiceAccount
	}
	kubeconfig := filepath.Join(a.opts.Dir, fmt.Sprintf("agent-%s-%s.kubeconfig", pod.Namespace, pod.Name))
	if err := a.c.WriteServiceAccountKubeconfig(ctx, pod.Namespace, sa, kubeconfig); err != nil {
		return "", nil, nil, err
	}
	argoexec := filepath.Join(a.opts.BinDir, binArgoexec)
	args := append(append([]string{}, main.Args...), "--kubeconfig="+kubeconfig, "--namespace="+pod.Namespace)
	if a.mode == TokenHostFile {
		return argoexec, args, env, nil
	}
	// unshare <flags> -- /bin/sh -c 'mount --bind "$0" /run && exec "$@"' <run dir> argoexec <args>
	wrapped := append(append([]string{}, a.unsh[1:]...), "--", "/bin/sh", "-c", `mount --bind "$0" /run && exec "$@"`, a.run, argoexec)
	return a.unsh[0], append(wrapped, args...), env, nil
}

// supervise runs an agent and restarts it when it fails, as kubelet does
// for a pod with restartPolicy OnFailure, until ctx is done.
func (a *Agents) supervise(ctx context.Context, ag *agent, bin string, args, env []string) {
	defer close(ag.done)
	name := "agent-" + filepath.Base(ag.pod)
	logPath := filepath.Join(a.c.LogDir(), name+".log")
	for {
		path, err := exec.LookPath(bin)
		if err != nil {
			a.opts.Log.Error("cannot run agent", "pod", ag.pod, "error", err.Error())
			return
		}
		p, err := a.c.StartProcess(name, path, args, env, logPath)
		if err != nil {
			a.opts.Log.Error("cannot run agent", "pod", ag.pod, "error", err.Error())
			return
		}
		ag.mu.Lock()
		ag.proc = p
		ag.mu.Unlock()
		a.opts.Log.Info("agent started", "pod", ag.pod, "pid", p.Pid(), "log", logPath)
		select {
		case <-ctx.Done():
			_ = p.Stop()
			return
		case <-p.Done():
		}
		_, exitErr := p.Exited()
		var ee *exec.ExitError
		if !errors.As(exitErr, &ee) || ee.Success() {
			a.opts.Log.Info("agent finished", "pod", ag.pod)
			return
		}
		ag.restarts++
		if ag.restarts > agentRestartsAtMost {
			a.opts.Log.Error("agent keeps failing; not restarting", "pod", ag.pod, "error", exitErr.Error())
			return
		}
		a.opts.Log.Warn("agent failed; restarting", "pod", ag.pod, "error", exitErr.Error(), "restart", ag.restarts)
		select {
		case <-ctx.Done():
			return
		case <-time.After(agentRestartBackoff):
		}
	}
}

func (ag *agent) stop() {
	ag.cancel()
	<-ag.done
}

// KillAgent kills the running agent of the workflow's agent pod with
// SIGKILL, as if its container crashed; kubelet's part restarts it.
func (a *Agents) KillAgent(namespace, pod string) error {
	a.mu.Lock()
	var target *agent
	for _, ag := range a.agents {
		if ag.pod == namespace+"/"+pod {
			target = ag
		}
	}
	a.mu.Unlock()
	if target == nil {
		return fmt.Errorf("no agent runs for pod %s/%s", namespace, pod)
	}
	target.mu.Lock()
	p := target.proc
	target.mu.Unlock()
	if p == nil {
		return fmt.Errorf("agent of %s/%s has not started", namespace, pod)
	}
	return p.Kill()
}

// Logs returns the log files of every agent started so far.
func (a *Agents) Logs() []string {
	paths, _ := filepath.Glob(filepath.Join(a.c.LogDir(), "agent-*.log"))
	return paths
}

// Stop stops every agent and waits for them.
func (a *Agents) Stop() {
	a.mu.Lock()
	a.stopped = true
	all := a.agents
	a.agents = map[types.UID]*agent{}
	a.mu.Unlock()
	for _, ag := range all {
		ag.cancel()
	}
	a.queue.ShutDown()
	a.wg.Wait()
	for _, p := range a.hostTokens {
		_ = os.Remove(p)
		_ = os.Remove(filepath.Dir(p))
	}
	if a.madeRunArgo {
		_ = os.Remove(varRunArgo) // only if empty
	}
}
