package framework

// Controller mode: `sparkplug controller` as its Deployment runs it, each
// replica a host process.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkplug-io/sparkplug/e2e/cluster"
)

// Modes of the environment (Options.Mode).
const (
	// ModeSidecar: sparkplug serve is each agent pod's plugin sidecar
	// (manifests/).
	ModeSidecar = "sidecar"
	// ModeController: each agent pod's plugin sidecar is the
	// acknowledger, and sparkplug controller, two replicas electing a
	// leader, runs every Spark step (manifests/modes/controller).
	ModeController = "controller"
)

const (
	// controllerStartTimeout bounds a replica's start until /healthz
	// answers, and the wait for a leader.
	controllerStartTimeout = 90 * time.Second
	// controllerStopGrace is the Deployment's terminationGracePeriodSeconds
	// default: a SIGTERMed replica releases its Lease within it.
	controllerStopGrace = 30 * time.Second
	// leaderMetric is 1 on the replica that leads (the monitor's gauge).
	leaderMetric = "sparkplug_monitor_leader"
)

// SparkplugControllers plays controller mode's Deployment
// sparkplug-controller: replica i is host process sparkplug-controller-<i>,
// with the container's args and env, a kubeconfig of the Deployment's
// ServiceAccount, its metrics and health on free loopback ports, and the
// suite's fast settings (those the sidecars get). A replica stopped or
// killed by a test stays down until Start.
type SparkplugControllers struct {
	c   *cluster.Cluster
	bin string
	dep ControllerDeployment
	// name is the replicas' process name before -<i>: the Deployment's,
	// or with a test's own namespace (Env.OwnControllers).
	name       string
	namespace  string
	kubeconfig string
	token      string
	defaults   bool
	// pprof serves each replica's profiles on a port of its own.
	pprof bool
	// extra are flags of a test's own (Env.OwnControllers), after the
	// harness's.
	extra []string

	mu       sync.Mutex
	replicas []*controllerReplica
}

type controllerReplica struct {
	p       *cluster.Process
	metrics string // http://host:port of /metrics
	health  string // http://host:port of /healthz
	pprof   string // host:port of /debug/pprof/, "" when off
	asked   bool   // the harness stopped or killed it
}

// controllerSpec says which replicas to run: the Deployment dep's, as its
// ServiceAccount of namespace, named name-<i>, their kubeconfig in dir,
// with extra flags after the harness's own.
type controllerSpec struct {
	bin             string
	dep             ControllerDeployment
	name, namespace string
	dir             string
	defaults, pprof bool
	extra           []string
}

// newSparkplugControllers writes the ServiceAccount's kubeconfig and
// starts every replica of spec.dep, then waits for one to lead.
func newSparkplugControllers(ctx context.Context, c *cluster.Cluster, spec controllerSpec) (*SparkplugControllers, error) {
	s := &SparkplugControllers{c: c, bin: spec.bin, dep: spec.dep, name: spec.name, namespace: spec.namespace,
		defaults: spec.defaults, pprof: spec.pprof, extra: spec.extra,
		kubeconfig: filepath.Join(spec.dir, "sparkplug-controller.kubeconfig"),
		replicas:   make([]*controllerReplica, spec.dep.Replicas)}
	cfg, err := c.ConfigForServiceAccount(ctx, spec.namespace, spec.dep.ServiceAccount)
	if err != nil {
		return nil, err
	}
	s.token = cfg.BearerToken
	if err := s.writeKubeconfig(c.Config.Host); err != nil {
		return nil, err
	}
	for i := range s.replicas {
		if err := s.Start(ctx, i); err != nil {
			s.stopAll()
			return nil, err
		}
	}
	if _, err := s.Leader(ctx); err != nil {
		s.stopAll()
		return nil, err
	}
	return s, nil
}

// writeKubeconfig points the replicas that start from now on at the API
// server at server.
func (s *SparkplugControllers) writeKubeconfig(server string) error {
	return s.c.WriteTokenKubeconfigFor(server, s.kubeconfig, "system:serviceaccount:"+s.namespace+":"+s.dep.ServiceAccount, s.token)
}

// SetFaultProxy sends the replicas to the API server through url (a
// fault-injecting proxy, Env.Faults), "" directly again: each replica in
// turn is stopped (SIGTERM: a leader hands over) and started again, as a
// rollout of a changed Deployment would.
func (s *SparkplugControllers) SetFaultProxy(ctx context.Context, url string) error {
	if url == "" {
		url = s.c.Config.Host
	}
	if err := s.writeKubeconfig(url); err != nil {
		return err
	}
	return s.rollout(ctx)
}

// rollout stops (SIGTERM: a leader hands over) and starts each replica in
// turn, as a rollout of a changed Deployment would, then waits for a
// leader.
func (s *SparkplugControllers) rollout(ctx context.Context) error {
	for i := range s.replicas {
		if err := s.Stop(i); err != nil {
			return err
		}
		if err := s.Start(ctx, i); err != nil {
			return err
		}
	}
	_, err := s.Leader(ctx)
	return err
}

// Replicas is how many replicas the Deployment has.
func (s *SparkplugControllers) Replicas() int { return len(s.replicas) }

// ServiceAccount is the account the replicas run as.
func (s *SparkplugControllers) ServiceAccount() string { return s.dep.ServiceAccount }

// args are replica i's flags: the container's, with $(VAR) of its env
// expanded as kubelet does, then the harness's own.
func (s *SparkplugControllers) args(env map[string]string, metrics, health, pprof string) []string {
	var args []string
	for _, a := range append(append([]string{}, s.dep.Container.Command...), s.dep.Container.Args...) {
		for k, v := range env {
			a = strings.ReplaceAll(a, "$("+k+")", v)
		}
		args = append(args, a)
	}
	if len(s.dep.Container.Command) > 0 {
		args = args[1:] // the image's binary is bin
	}
	args = append(args,
		"--kubeconfig="+s.kubeconfig,
		"--metrics-addr="+metrics,
		"--health-addr="+health,
		// The Deployment's default is $POD_NAMESPACE; said here too so
		// that the Lease's place does not hang on the env alone.
		"--leader-election-namespace="+s.namespace,
		"--log-format=text",
	)
	if pprof != "" {
		args = append(args, "--pprof-addr="+pprof)
	}
	if !s.defaults {
		args = append(args,
			"--resync="+pluginResync.String(),
			"--ttl-interval="+PluginTTLInterval.String(),
			"--ttl-leftover-interval="+PluginTTLLeftoverInterval.String(),
			"--log-level=debug",
		)
	}
	return append(args, s.extra...)
}

// Start starts replica i unless it runs, and waits until it answers
// /healthz.
func (s *SparkplugControllers) Start(ctx context.Context, i int) error {
	s.mu.Lock()
	if r := s.replicas[i]; r != nil {
		if done, _ := r.p.Exited(); !done {
			s.mu.Unlock()
			return nil
		}
	}
	s.mu.Unlock()
	ports, err := freeLoopbackPorts(3)
	if err != nil {
		return err
	}
	metrics, health := "127.0.0.1:"+strconv.Itoa(ports[0]), "127.0.0.1:"+strconv.Itoa(ports[1])
	var pprof string
	if s.pprof {
		pprof = "127.0.0.1:" + strconv.Itoa(ports[2])
	}
	name := fmt.Sprintf("%s-%d", s.name, i)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", s.dep.Name, i), Namespace: s.namespace}, Spec: corev1.PodSpec{ServiceAccountName: s.dep.ServiceAccount}}
	env, err := containerEnv(pod, s.dep.Container)
	if err != nil {
		return fmt.Errorf("Deployment %s: %w", s.dep.Name, err)
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	p, err := s.c.StartProcess(name, s.bin, s.args(vars, metrics, health, pprof), env, "")
	if err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	r := &controllerReplica{p: p, metrics: "http://" + metrics + "/metrics", health: "http://" + health + "/healthz", pprof: pprof}
	s.mu.Lock()
	s.replicas[i] = r
	s.mu.Unlock()
	err = wait.PollUntilContextTimeout(ctx, sidecarHealthPollInterval, controllerStartTimeout, true, func(ctx context.Context) (bool, error) {
		if done, err := p.Exited(); done {
			return false, fmt.Errorf("%s exited: %v; end of its log:\n%s", name, err, p.LogTail(30))
		}
		return httpOK(ctx, r.health), nil
	})
	if err != nil {
		return fmt.Errorf("wait for %s to answer /healthz: %w", name, err)
	}
	return nil
}

// Kill kills replica i with SIGKILL (a crash, an OOM kill, a lost node:
// its Lease stays held until it runs out).
func (s *SparkplugControllers) Kill(i int) error {
	r := s.asked(i)
	if r == nil {
		return nil
	}
	r.p.Note("e2e: kill -9")
	return r.p.Kill()
}

// Stop stops replica i with SIGTERM (a rollout, a drained node: it
// releases its Lease) and waits until it exited.
func (s *SparkplugControllers) Stop(i int) error {
	r := s.asked(i)
	if r == nil {
		return nil
	}
	r.p.Note("e2e: SIGTERM")
	return r.p.StopWithin(controllerStopGrace)
}

// asked marks replica i's coming exit as the harness's; nil: it never ran.
func (s *SparkplugControllers) asked(i int) *controllerReplica {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.replicas[i]
	if r != nil {
		r.asked = true
	}
	return r
}

// Pid is replica i's process id, 0 when it does not run.
func (s *SparkplugControllers) Pid(i int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.replicas[i]
	if r == nil {
		return 0
	}
	if done, _ := r.p.Exited(); done {
		return 0
	}
	return r.p.Pid()
}

// MetricsURL is replica i's /metrics URL, "" when it never ran.
func (s *SparkplugControllers) MetricsURL(i int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.replicas[i]; r != nil {
		return r.metrics
	}
	return ""
}

// PprofAddr is where replica i serves Go's profiles (host:port), "" when
// off (Options.ControllerPprof) or it never ran.
func (s *SparkplugControllers) PprofAddr(i int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.replicas[i]; r != nil {
		return r.pprof
	}
	return ""
}

// Rollout stops (SIGTERM) and starts each replica in turn, as a rollout
// of the Deployment would, and waits for a leader: fresh processes, so
// that their peak RSS and counters start from nothing.
func (s *SparkplugControllers) Rollout(ctx context.Context) error { return s.rollout(ctx) }

// MemoryLimit is the Deployment container's memory limit in bytes, 0
// for none.
func (s *SparkplugControllers) MemoryLimit() int64 {
	return s.dep.Container.Resources.Limits.Memory().Value()
}

// Running lists the replicas that run.
func (s *SparkplugControllers) Running() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for i, r := range s.replicas {
		if r == nil {
			continue
		}
		if done, _ := r.p.Exited(); !done {
			out = append(out, i)
		}
	}
	return out
}

// Leading lists the running replicas that say they lead now.
func (s *SparkplugControllers) Leading(ctx context.Context) []int {
	var out []int
	for _, i := range s.Running() {
		s.mu.Lock()
		r := s.replicas[i]
		s.mu.Unlock()
		if v, ok := scrapeGauge(ctx, r.metrics, leaderMetric); ok && v == 1 {
			out = append(out, i)
		}
	}
	return out
}

// Leader waits until exactly one running replica leads and returns it.
func (s *SparkplugControllers) Leader(ctx context.Context) (int, error) {
	leader := -1
	var last []int
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, controllerStartTimeout, true, func(ctx context.Context) (bool, error) {
		last = s.Leading(ctx)
		if len(last) == 1 {
			leader = last[0]
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return -1, fmt.Errorf("wait for one sparkplug controller to lead (leading now: %v, running: %v): %w", last, s.Running(), err)
	}
	return leader, nil
}

// checkAlive names every replica exit the harness did not ask for.
func (s *SparkplugControllers) checkAlive() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, r := range s.replicas {
		if r == nil || r.asked {
			continue
		}
		if done, err := r.p.Exited(); done {
			errs = append(errs, fmt.Errorf("%s exited (%v); end of its log:\n%s", r.p.Name(), err, r.p.LogTail(30)))
		}
	}
	return errors.Join(errs...)
}

// LogTail returns the last n lines of every replica's log.
func (s *SparkplugControllers) LogTail(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out string
	for _, r := range s.replicas {
		if r != nil {
			out += "===== " + r.p.LogPath() + "\n" + r.p.LogTail(n) + "\n"
		}
	}
	return out
}

// LogPaths are the replicas' log files.
func (s *SparkplugControllers) LogPaths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.replicas {
		if r != nil {
			out = append(out, r.p.LogPath())
		}
	}
	return out
}

// stopAll stops every replica (Env.Stop).
func (s *SparkplugControllers) stopAll() {
	for i := range s.replicas {
		_ = s.Stop(i)
	}
}

// httpOK reports whether GET url answers 200.
func httpOK(ctx context.Context, url string) bool {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// scrapeGauge reads an unlabelled sample of a Prometheus text exposition.
func scrapeGauge(ctx context.Context, url, name string) (float64, bool) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == name {
			v, err := strconv.ParseFloat(f[1], 64)
			return v, err == nil
		}
	}
	return 0, false
}

// freeLoopbackPorts picks n free TCP ports on 127.0.0.1.
func freeLoopbackPorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pick a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
