package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// Process is a process a test starts next to the control plane (the Argo
// controller, the plugin, agents), with the same care as the components:
// its own process group, SIGKILL when the test binary dies, its pid in the
// cluster's pids file, its output in a log file. Cluster.Stop does not stop
// it: its starter does, before stopping the cluster.
type Process struct {
	p *process
}

// StartProcess starts bin with args and env (added to the environment of
// the test binary). Its output goes to logPath, or to <LogDir>/<name>.log
// when logPath is empty; the log is appended to, so a restarted process
// keeps its history.
func (c *Cluster) StartProcess(name, bin string, args, env []string, logPath string) (*Process, error) {
	if logPath == "" {
		logPath = filepath.Join(c.opts.LogDir, name+".log")
	}
	p, err := startProcess(name, bin, args, env, logPath)
	if err != nil {
		return nil, err
	}
	if err := c.recordPID(p); err != nil {
		_ = p.stop(stopGrace)
		return nil, err
	}
	return &Process{p: p}, nil
}

// LogDir is where the components write their logs.
func (c *Cluster) LogDir() string { return c.opts.LogDir }

// Name is the name the process was started with.
func (p *Process) Name() string { return p.p.name }

// Pid is the process id (also its process group id).
func (p *Process) Pid() int { return p.p.cmd.Process.Pid }

// LogPath is the file that receives the process's output.
func (p *Process) LogPath() string { return p.p.logPath }

// LogTail returns the last n lines of the process's log.
func (p *Process) LogTail(n int) string { return p.p.logTail(n) }

// Note appends a line of the test's own to the process's log.
func (p *Process) Note(format string, args ...any) { p.p.note(format, args...) }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.p.done }

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, error) { return p.p.exited() }

// Stop sends SIGTERM to the process group, then SIGKILL after a few
// seconds. Stopping a process that has exited is not an error.
func (p *Process) Stop() error { return p.p.stop(stopGrace) }

// StopWithin sends SIGTERM to the process group, then SIGKILL once grace
// has passed, as kubelet does with a pod's terminationGracePeriodSeconds.
func (p *Process) StopWithin(grace time.Duration) error { return p.p.stop(grace) }

// Kill sends SIGKILL to the process group at once, as a crash or an OOM
// kill would, and waits for the process to exit.
func (p *Process) Kill() error {
	if done, _ := p.p.exited(); done {
		return nil
	}
	pgid := p.Pid()
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill %s (pid %d): %w", p.p.name, pgid, err)
	}
	select {
	case <-p.p.done:
		return nil
	case <-time.After(stopGrace):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.p.name, pgid)
	}
}

// WriteTokenKubeconfig writes to path a kubeconfig that reaches the API
// server with a bearer token, e.g. a ServiceAccount's long-lived token
// read from its Secret, as a pod that mounts it would use it.
func (c *Cluster) WriteTokenKubeconfig(path, user, token string) error {
	return c.WriteTokenKubeconfigFor(c.Config.Host, path, user, token)
}

// WriteTokenKubeconfigFor is WriteTokenKubeconfig for another address of
// the API server (a proxy in front of it).
func (c *Cluster) WriteTokenKubeconfigFor(server, path, user, token string) error {
	b, err := renderKubeconfig(server, user, token)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write kubeconfig of %s: %w", user, err)
	}
	return nil
}

// RestartAPIServer stops the kube-apiserver (SIGTERM, then SIGKILL) and
// starts it again on the same port, as a control-plane upgrade or crash
// would: meanwhile clients see refused connections and their watches end.
// The scheduler and the controller-manager are restarted after it, as a
// control-plane node's restart restarts them too; KWOK (the nodes'
// kubelets) and everything the tests run keep running.
//
// Why those two: client-go's reflectors wait 0.8 s after a refused
// connection, doubling to 30 s (plus up to as much again of jitter), and
// forget the delay only after 2 minutes without another. A soak that
// restarts the API server every minute or so would leave a long-running
// scheduler waiting up to a minute to see each new pod, and its later
// iterations slower for a reason of the scheduler's, not the code's under
// test.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	c.procsMu.Lock()
	defer c.procsMu.Unlock()
	err := c.restartInPlace(ctx, binAPIServer, apiServerArgs(c.layout), nil,
		c.layout.apiServerURL()+"/readyz", c.Config.BearerToken)
	if err != nil {
		return err
	}
	for _, r := range []struct {
		name string
		args []string
		port int
	}{
		{binScheduler, schedulerArgs(c.layout), c.layout.schedulerPort},
		{binControllerManager, controllerManagerArgs(c.layout), c.layout.controllerManagerPort},
	} {
		if !slices.ContainsFunc(c.procs, func(p *process) bool { return p.name == r.name }) {
			continue // this cluster runs without it
		}
		url := fmt.Sprintf("https://%s:%d/healthz", loopback, r.port)
		if err := c.restartInPlace(ctx, r.name, r.args, nil, url, ""); err != nil {
			return err
		}
	}
	return nil
}

// restartInPlace stops the running component name and starts it again with
// args on the same ports and log, waiting until url answers healthy. The
// caller holds procsMu.
func (c *Cluster) restartInPlace(ctx context.Context, name string, args, env []string, url, token string) error {
	i := slices.IndexFunc(c.procs, func(p *process) bool { return p.name == name })
	if i < 0 {
		return fmt.Errorf("no %s runs", name)
	}
	old := c.procs[i]
	if err := old.stop(stopGrace); err != nil {
		return err
	}
	p, err := startProcess(name, filepath.Join(c.opts.BinDir, name), args, env, old.logPath)
	if err != nil {
		return err
	}
	c.procs[i] = p
	if err := c.recordPID(p); err != nil {
		return err
	}
	return c.waitFor(ctx, p, name+" to be healthy again", func(ctx context.Context) error {
		return httpHealthy(ctx, url, token, "")
	})
}

// CAFile is the API server's certificate bundle (its self-signed serving
// certificate and the CA that signed it), which verifies it at 127.0.0.1,
// 10.96.0.1 and kubernetes.default.svc; the controller-manager publishes
// it to pods as kube-root-ca.crt.
func (c *Cluster) CAFile() string { return filepath.Join(c.layout.path(dirCerts), fileServingCert) }
