package framework

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/e2e/cluster"
)

// How often the e2e plugin reconciles every node without an event (2 s
// by default), looks for drivers past their timeToLiveSeconds (15 s by
// default) and for leftovers of ended workflows (1 m by default): the
// defaults would only make the tests slower.
const (
	pluginResync               = time.Second
	PluginTTLInterval          = time.Second
	PluginTTLLeftoverInterval  = 2 * time.Second
	sidecarReadyTimeout        = 30 * time.Second
	sidecarHealthPollInterval  = 50 * time.Millisecond
	serviceAccountTokenTimeout = 30 * time.Second
)

// ErrNoSidecar: the workflow has no live agent pod, so no plugin sidecar.
var ErrNoSidecar = errors.New("no plugin sidecar runs for the workflow")

// BuildPlugin builds ./cmd/sparkplug of repoRoot into dir.
func BuildPlugin(ctx context.Context, repoRoot, dir string) (string, error) {
	return buildCommand(ctx, repoRoot, dir, "sparkplug")
}

// BuildAck builds ./cmd/sparkplug-ack, the acknowledger, of repoRoot into
// dir.
func BuildAck(ctx context.Context, repoRoot, dir string) (string, error) {
	return buildCommand(ctx, repoRoot, dir, "sparkplug-ack")
}

func buildCommand(ctx context.Context, repoRoot, dir, name string) (string, error) {
	bin := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags", "-X main.version=e2e", "-o", bin, "./cmd/"+name)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/%s: %w\n%s", name, err, out)
	}
	return bin, nil
}

// ackImage is the acknowledger's image (plugin-ack.yaml), without tag: a
// plugin container of that image runs the ack binary.
const ackImage = "ghcr.io/sparkplug-io/sparkplug-ack"

// isAck reports whether a plugin container is the acknowledger.
func isAck(c corev1.Container) bool {
	image, _, _ := strings.Cut(c.Image, "@")
	if i := strings.LastIndexByte(image, ':'); i > strings.LastIndexByte(image, '/') {
		image = image[:i]
	}
	return image == ackImage
}

// Sidecars plays sparkplug as Argo deploys it: the plugin sidecar of each
// agent pod, one process per pod, started with the pod's container args
// and env (those of the generated plugin ConfigMap), the token of the
// plugin's ServiceAccount in the pod's namespace, and stopped with SIGTERM
// when Argo deletes the pod. argo.Agents starts and stops them; this says
// what to run.
type Sidecars struct {
	c      *cluster.Cluster
	kube   kubernetes.Interface
	agents *argo.Agents
	bin    string
	// ack is the acknowledger's binary (controller mode), which plays
	// plugin containers of its image; "" when not built.
	ack string
	// controllerAccount is controller mode's ServiceAccount, which a
	// previous release's sidecar runs as there (RunPrevious).
	controllerAccount string
	plugin            PluginSidecar
	tokenFile         string
	dir               string
	// defaults runs sparkplug with its own defaults, not the suite's fast
	// requeues (Options.Defaults).
	defaults bool

	mu          sync.Mutex
	kubeconfigs map[string]string // by namespace and API server
	// faults is the API server address of the pods labelled FaultsLabel
	// (a fault-injecting proxy); empty: none.
	faults string
	// previous are the workflows (namespace/name) whose sidecars, started
	// from now on, run another sparkplug binary: a previous release, with
	// only the flags every release has.
	previous map[string]string
}

// RunPrevious makes the sidecars of workflow namespace/name that start
// from now on run binary bin, a previous sparkplug release, with only the
// flags every release understands; "" goes back to the suite's binary.
func (s *Sidecars) RunPrevious(namespace, name, bin string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.previous == nil {
		s.previous = map[string]string{}
	}
	if bin == "" {
		delete(s.previous, namespace+"/"+name)
		return
	}
	s.previous[namespace+"/"+name] = bin
}

// FaultsLabel on a workflow's spec.podMetadata (Argo copies it onto the
// agent pod) sends that workflow's sidecar to the API server through the
// fault-injecting proxy (Env.Faults).
const FaultsLabel = "e2e.sparkplug.io/faults"

// ServeArgsAnnotation on a workflow's spec.podMetadata (Argo copies it onto
// the agent pod) adds its space-separated words to that workflow's
// sidecar's serve flags, after the suite's own: a test's setting of a
// plugin-wide flag for one workflow.
const ServeArgsAnnotation = "e2e.sparkplug.io/serve-args"

// Binary is the sparkplug binary the sidecars run, for tests that run its
// other commands (logs, monitor) as a person or a Deployment would.
func (s *Sidecars) Binary() string { return s.bin }

// SetFaultProxy sends the sidecars of agent pods labelled FaultsLabel,
// started from now on, to the API server through url; "" stops that.
func (s *Sidecars) SetFaultProxy(url string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = url
}

// command is the process that plays container c of an agent pod, at addr.
func (s *Sidecars) command(ctx context.Context, pod *corev1.Pod, c corev1.Container, addr string) (argo.Command, error) {
	if c.Name != s.plugin.Container.Name {
		return argo.Command{}, fmt.Errorf("the install has no plugin %s", c.Name)
	}
	server := s.c.Config.Host
	s.mu.Lock()
	if pod.Labels[FaultsLabel] == "true" && s.faults != "" {
		server = s.faults
	}
	bin, previous := s.bin, s.previous[pod.Namespace+"/"+pod.Labels["workflows.argoproj.io/workflow"]]
	if previous != "" {
		bin = previous
	}
	s.mu.Unlock()
	ack := isAck(c)
	if ack && previous == "" {
		return s.ackCommand(pod, c, addr)
	}
	var kubeconfig string
	var err error
	if ack {
		// A previous release, which had no controller mode, in an agent
		// pod of controller mode's install (the upgrade test): serve,
		// with the controller's ServiceAccount, whose Role holds the
		// sidecar's (the install has no plugin ServiceAccount).
		kubeconfig, err = s.accountKubeconfig(ctx, pod.Namespace, s.controllerAccount, server)
	} else {
		kubeconfig, err = s.kubeconfig(ctx, pod.Namespace, server)
	}
	if err != nil {
		return argo.Command{}, err
	}
	args := append([]string{}, c.Command...)
	if len(args) > 0 {
		args = args[1:] // the image's binary is bin
	}
	if ack {
		args = append(args, "serve")
	}
	args = append(args, c.Args...)
	args = append(args,
		"--addr="+addr, // the pod's port, moved: every pod here shares one loopback
		"--token-file="+s.tokenFile,
		"--kubeconfig="+kubeconfig,
		"--log-format=text",
	)
	if !s.defaults && previous == "" {
		args = append(args,
			"--resync="+pluginResync.String(),
			"--ttl-interval="+PluginTTLInterval.String(),
			"--ttl-leftover-interval="+PluginTTLLeftoverInterval.String(),
			"--log-level=debug",
		)
	}
	args = append(args, strings.Fields(pod.Annotations[ServeArgsAnnotation])...)
	env, err := containerEnv(pod, c)
	if err != nil {
		return argo.Command{}, err
	}
	return argo.Command{Bin: bin, Args: args, Env: env}, nil
}

// ackCommand is the process that plays the acknowledger (controller
// mode's plugin container): the agent's token, no Kubernetes access.
func (s *Sidecars) ackCommand(pod *corev1.Pod, c corev1.Container, addr string) (argo.Command, error) {
	if s.ack == "" {
		return argo.Command{}, fmt.Errorf("plugin container %s runs the acknowledger (%s), which was not built", c.Name, c.Image)
	}
	args := append([]string{}, c.Args...)
	args = append(args,
		"--addr="+addr,
		"--token-file="+s.tokenFile,
		"--log-format=text",
	)
	if !s.defaults {
		args = append(args, "--log-level=debug")
	}
	env, err := containerEnv(pod, c)
	if err != nil {
		return argo.Command{}, err
	}
	return argo.Command{Bin: s.ack, Args: args, Env: env}, nil
}

// containerEnv is a container's environment as kubelet would set it, for
// the sources a plugin sidecar may use: values and the pod's own fields.
func containerEnv(pod *corev1.Pod, c corev1.Container) ([]string, error) {
	var env []string
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil {
			f := e.ValueFrom.FieldRef
			if f == nil {
				return nil, fmt.Errorf("env %s: only values and fieldRef are played here", e.Name)
			}
			switch f.FieldPath {
			case "metadata.name":
				v = pod.Name
			case "metadata.namespace":
				v = pod.Namespace
			case "metadata.uid":
				v = string(pod.UID)
			case "spec.serviceAccountName":
				v = pod.Spec.ServiceAccountName
			default:
				return nil, fmt.Errorf("env %s: fieldRef %s is not played here", e.Name, f.FieldPath)
			}
		}
		env = append(env, e.Name+"="+v)
	}
	return env, nil
}

// kubeconfig is a kubeconfig for server with the token Argo mounts into
// the sidecar: the long-lived token Secret of the plugin's ServiceAccount
// in namespace, found as the controller finds it.
func (s *Sidecars) kubeconfig(ctx context.Context, namespace, server string) (string, error) {
	key := namespace + " " + server
	s.mu.Lock()
	path, ok := s.kubeconfigs[key]
	s.mu.Unlock()
	if ok {
		return path, nil
	}
	saName := s.plugin.ServiceAccount()
	var token string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, serviceAccountTokenTimeout, true, func(ctx context.Context) (bool, error) {
		sa, err := s.kube.CoreV1().ServiceAccounts(namespace).Get(ctx, saName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		secretName := saName + ".service-account-token" // Argo's secrets.TokenNameForServiceAccount
		if len(sa.Secrets) > 0 {
			secretName = sa.Secrets[0].Name
		} else if v, ok := sa.Annotations[serviceAccountTokenAnno]; ok {
			secretName = v
		}
		secret, err := s.kube.CoreV1().Secrets(namespace).Get(ctx, secretName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		token = string(secret.Data["token"])
		return token != "", nil
	})
	if err != nil {
		return "", fmt.Errorf("wait for the token Secret of ServiceAccount %s/%s (manifests/): %w", namespace, saName, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	path = filepath.Join(s.dir, fmt.Sprintf("plugin-%s-%d.kubeconfig", namespace, len(s.kubeconfigs)))
	if err := s.c.WriteTokenKubeconfigFor(server, path, "system:serviceaccount:"+namespace+":"+saName, token); err != nil {
		return "", err
	}
	s.kubeconfigs[key] = path
	return path, nil
}

// accountKubeconfig is a kubeconfig for server with a token of
// ServiceAccount namespace/name from the TokenRequest API.
func (s *Sidecars) accountKubeconfig(ctx context.Context, namespace, name, server string) (string, error) {
	if name == "" {
		return "", errors.New("no ServiceAccount to run a previous release's sidecar as")
	}
	cfg, err := s.c.ConfigForServiceAccount(ctx, namespace, name)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	path := filepath.Join(s.dir, fmt.Sprintf("%s-%s-%d.kubeconfig", name, namespace, len(s.kubeconfigs)))
	if err := s.c.WriteTokenKubeconfigFor(server, path, "system:serviceaccount:"+namespace+":"+name, cfg.BearerToken); err != nil {
		return "", err
	}
	s.kubeconfigs[path] = path
	return path, nil
}

// Of lists the live sidecars of a workflow's agent pods.
func (s *Sidecars) Of(namespace, workflow string) []argo.Sidecar {
	return s.agents.Sidecars(namespace, workflow)
}

// Restart kills the sidecars of a workflow's agent pod with SIGKILL (a
// crash, an OOM kill: nothing is flushed or cleaned up), as kubelet sees
// it, and waits until they answer again. ErrNoSidecar: the workflow has
// no agent pod now.
func (s *Sidecars) Restart(ctx context.Context, namespace, workflow string) error {
	running := s.Of(namespace, workflow)
	if len(running) == 0 {
		return fmt.Errorf("%w %s/%s", ErrNoSidecar, namespace, workflow)
	}
	for _, sc := range running {
		podNS, podName, _ := cutPodKey(sc.Pod)
		if err := s.agents.KillSidecar(podNS, podName, sc.Container); err != nil {
			return err
		}
	}
	for _, sc := range running {
		if err := s.waitHealthy(ctx, sc); err != nil {
			return err
		}
	}
	return nil
}

// waitHealthy waits until a killed sidecar has started again and answers
// /healthz.
func (s *Sidecars) waitHealthy(ctx context.Context, was argo.Sidecar) error {
	err := wait.PollUntilContextTimeout(ctx, sidecarHealthPollInterval, sidecarReadyTimeout, true, func(ctx context.Context) (bool, error) {
		var now *argo.Sidecar
		for _, sc := range s.agents.Sidecars(namespaceOf(was.Pod), was.Workflow) {
			if sc.Pod == was.Pod && sc.Container == was.Container {
				now = &sc
			}
		}
		if now == nil {
			return false, fmt.Errorf("%w: agent pod %s went", ErrNoSidecar, was.Pod)
		}
		if now.Starts <= was.Starts {
			return false, nil
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+now.Addr+"/healthz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("wait for the sidecar of %s to answer again: %w", was.Pod, err)
	}
	return nil
}

// checkAlive returns an error naming every sidecar exit nobody asked for.
func (s *Sidecars) checkAlive() error {
	if crashes := s.agents.Crashes(); len(crashes) > 0 {
		return fmt.Errorf("sparkplug sidecars crashed: %v", crashes)
	}
	return nil
}

// LogTail returns the last n lines of each log of a workflow's sidecars.
func (s *Sidecars) LogTail(workflow string, n int) string {
	var out string
	for _, p := range s.agents.SidecarLogs(workflow) {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		out += "===== " + p + "\n" + grepTail(string(b), "", n) + "\n"
	}
	return out
}

func cutPodKey(key string) (namespace, name string, ok bool) {
	return strings.Cut(key, "/")
}

func namespaceOf(podKey string) string {
	ns, _, _ := cutPodKey(podKey)
	return ns
}

// Token is the bearer token the agents send the sidecars, for a test or
// benchmark that calls a sidecar as its agent does.
func (s *Sidecars) Token() (string, error) {
	b, err := os.ReadFile(s.tokenFile)
	return strings.TrimSpace(string(b)), err
}
