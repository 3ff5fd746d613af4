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
	labelWorkflow         = "workflows.argoproj.io/workflow"
	componentAgent        = "agent"
	agentMainContainer    = "main"
	envPluginNames        = "ARGO_PLUGIN_NAMES"
	varRunArgo            = "/var/run/argo" // where argoexec reads <plugin>/token
	agentRestartBackoff   = time.Second
	agentRestartsAtMost   = 5
	defaultServiceAccount = "default"
)

// ErrNoAgent: no agent runs for the pod (not started yet, or gone).
var ErrNoAgent = errors.New("no agent runs")

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
	// Sidecar, when set, plays each agent pod's plugin sidecars too: one
	// process per pod and plugin, started with the pod and stopped with
	// SIGTERM when the pod goes, as kubelet would. Nil: the pods'
	// sidecars are not played, and agents call the addresses Argo wrote.
	Sidecar SidecarFunc
	// Ignore, when set, names agent pods a real kubelet runs (package
	// node's Runs): they are not played.
	Ignore func(*corev1.Pod) bool
}

// Agents plays kubelet for Argo agent pods: it runs `argoexec agent main`
// for each agent pod that KWOK marked Running, with the environment of the
// pod's main container and the token of the pod's ServiceAccount, and the
// pod's plugin sidecars (AgentOptions.Sidecar), and stops them when the pod
// goes away.
type Agents struct {
	c     *cluster.Cluster
	opts  AgentOptions
	mode  TokenMode
	run   string // the dir mounted over /run (mount namespace mode)
	unsh  []string
	queue workqueue.TypedRateLimitingInterface[string]
	pods  cache.Indexer

	mu      sync.Mutex
	agents  map[types.UID]*podRun
	stopped bool
	wg      sync.WaitGroup
	// hostTokens are the token files written to the host (TokenHostFile),
	// removed by Stop, and with them /var/run/argo if it was made here.
	hostTokens  []string
	madeRunArgo bool
	// crashes are the sidecar crashes of pods that are gone.
	crashes []string
}

// podRun is one played agent pod: its main container and its sidecars.
type podRun struct {
	pod      string // namespace/name
	workflow string
	cancel   context.CancelFunc
	done     chan struct{} // closed once every container stopped
	main     *container
	sidecars []*container
}

// Restart policies of the played containers. The agent's main is given
// up on after a few crashes; a sidecar too. Kubelet waits longer between
// restarts (10 s, doubling); here a crash waits a second.
var (
	mainPolicy    = restartPolicy{crashesAtMost: agentRestartsAtMost, backoff: agentRestartBackoff, grace: 3 * time.Second}
	sidecarPolicy = restartPolicy{crashesAtMost: agentRestartsAtMost, backoff: agentRestartBackoff, grace: sidecarGrace}
)

// sidecarGrace is an agent pod's terminationGracePeriodSeconds (Argo sets
// none: Kubernetes' default).
const sidecarGrace = 30 * time.Second

// RunAgents starts playing kubelet for agent pods in every namespace until
// ctx is done or Stop is called.
func RunAgents(ctx context.Context, c *cluster.Cluster, opts AgentOptions) (*Agents, error) {
	a := &Agents{
		c:      c,
		opts:   opts,
		run:    filepath.Join(opts.Dir, "run"),
		agents: map[types.UID]*podRun{},
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
		ignored := a.opts.Ignore != nil && a.opts.Ignore(pod)
		if !ignored && pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning {
			live[pod.UID] = true
			if err := a.ensure(ctx, pod); err != nil {
				return err
			}
		}
	}
	// Stop agents of this pod name whose pod is gone, deleting or replaced.
	a.mu.Lock()
	var stop []*podRun
	for uid, ag := range a.agents {
		if ag.pod == key && !live[uid] {
			stop = append(stop, ag)
			delete(a.agents, uid)
		}
	}
	a.mu.Unlock()
	for _, ag := range stop {
		a.opts.Log.Info("agent pod gone: stopping its containers", "pod", ag.pod)
		ag.stop()
		a.mu.Lock()
		a.crashes = append(a.crashes, ag.sidecarCrashes()...)
		a.mu.Unlock()
	}
	return nil
}

// ensure starts the containers of pod unless they run.
func (a *Agents) ensure(ctx context.Context, pod *corev1.Pod) error {
	a.mu.Lock()
	_, running := a.agents[pod.UID]
	stopped := a.stopped
	a.mu.Unlock()
	if running || stopped {
		return nil
	}
	key := pod.Namespace + "/" + pod.Name
	run := &podRun{pod: key, workflow: pod.Labels[labelWorkflow], done: make(chan struct{})}
	var addrs []string
	if a.opts.Sidecar != nil {
		for _, sc := range sidecarContainers(pod) {
			addr, err := freeLoopbackAddr()
			if err != nil {
				return err
			}
			cmd, err := a.opts.Sidecar(ctx, pod, sc, addr)
			if err != nil {
				return fmt.Errorf("sidecar %s of agent pod %s: %w", sc.Name, key, err)
			}
			log := filepath.Join(a.c.LogDir(), fmt.Sprintf("sidecar-%s-%s.log", pod.Name, sc.Name))
			run.sidecars = append(run.sidecars, newContainer(sc.Name, log, addr, cmd))
			addrs = append(addrs, addr)
		}
	}
	cmd, err := a.command(ctx, pod, addrs)
	if err != nil {
		return err
	}
	run.main = newContainer(agentMainContainer, filepath.Join(a.c.LogDir(), "agent-"+pod.Name+".log"), "", cmd)
	runCtx, cancel := context.WithCancel(ctx)
	run.cancel = cancel
	a.mu.Lock()
	if a.stopped {
		a.mu.Unlock()
		cancel()
		return nil
	}
	a.agents[pod.UID] = run
	a.wg.Add(1)
	a.mu.Unlock()
	logf := func(msg string, kv ...any) { a.opts.Log.Info(msg, kv...) }
	go func() {
		defer a.wg.Done()
		defer close(run.done)
		var wg sync.WaitGroup
		// Sidecars first: the agent's first calls should find them
		// listening (it retries refusals for about 15 s anyway).
		for _, sc := range run.sidecars {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sc.supervise(runCtx, pod.Name, sidecarPolicy, a.c.StartProcess, logf)
			}()
			select {
			case <-sc.ready:
			case <-runCtx.Done():
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			run.main.supervise(runCtx, pod.Name, mainPolicy, a.c.StartProcess, logf)
		}()
		wg.Wait()
	}()
	return nil
}

// command is the process that plays the pod's main container, calling
// the plugins at addrs when the sidecars are played here.
func (a *Agents) command(ctx context.Context, pod *corev1.Pod, addrs []string) (Command, error) {
	var main *corev1.Container
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == agentMainContainer {
			main = &pod.Spec.Containers[i]
		}
	}
	if main == nil {
		return Command{}, fmt.Errorf("agent pod %s/%s has no %s container", pod.Namespace, pod.Name, agentMainContainer)
	}
	var env []string
	var plugins []string
	for _, e := range main.Env {
		if e.ValueFrom != nil {
			return Command{}, fmt.Errorf("agent pod %s: env %s uses valueFrom, which this kubelet does not play", pod.Name, e.Name)
		}
		env = append(env, e.Name+"="+e.Value)
		if e.Name == envPluginNames {
			if err := json.Unmarshal([]byte(e.Value), &plugins); err != nil {
				return Command{}, fmt.Errorf("agent pod %s: %s=%q: %w", pod.Name, envPluginNames, e.Value, err)
			}
		}
	}
	if a.opts.Sidecar != nil {
		var err error
		if env, err = pluginAddresses(env, addrs); err != nil {
			return Command{}, fmt.Errorf("agent pod %s: %w", pod.Name, err)
		}
	}
	if err := a.writeTokens(plugins); err != nil {
		return Command{}, err
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = defaultServiceAccount
	}
	kubeconfig := filepath.Join(a.opts.Dir, fmt.Sprintf("agent-%s-%s.kubeconfig", pod.Namespace, pod.Name))
	if err := a.c.WriteServiceAccountKubeconfig(ctx, pod.Namespace, sa, kubeconfig); err != nil {
		return Command{}, err
	}
	argoexec, err := exec.LookPath(filepath.Join(a.opts.BinDir, binArgoexec))
	if err != nil {
		return Command{}, err
	}
	args := append(append([]string{}, main.Args...), "--kubeconfig="+kubeconfig, "--namespace="+pod.Namespace)
	if a.mode == TokenHostFile {
		return Command{Bin: argoexec, Args: args, Env: env}, nil
	}
	// unshare <flags> -- /bin/sh -c 'mount --bind "$0" /run && exec "$@"' <run dir> argoexec <args>
	wrapped := append(append([]string{}, a.unsh[1:]...), "--", "/bin/sh", "-c", `mount --bind "$0" /run && exec "$@"`, a.run, argoexec)
	return Command{Bin: a.unsh[0], Args: append(wrapped, args...), Env: env}, nil
}

// Stop stops every agent and waits for them.
func (a *Agents) Stop() {
	a.mu.Lock()
	a.stopped = true
	all := a.agents
	a.agents = map[types.UID]*podRun{}
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
