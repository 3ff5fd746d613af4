package framework

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkplug-io/sparkplug/e2e/cluster"
)

// Requeue intervals the e2e plugin runs with (the defaults, 5 s and 15 s,
// would only make the tests slower), how often it looks for drivers past
// their timeToLiveSeconds (15 s by default), and how long a result handed
// to one of several identical nodes may take to show in the TaskSet before
// it counts as lost (1 m by default; the agents here patch every second,
// argo.RequeueTime).
const (
	pluginRequeuePending = time.Second
	pluginRequeueRunning = 2 * time.Second
	PluginTTLInterval    = time.Second
	PluginHandoutGrace   = 15 * time.Second
)

// BuildPlugin builds ./cmd/sparkplug of repoRoot into dir.
func BuildPlugin(ctx context.Context, repoRoot, dir string) (string, error) {
	bin := filepath.Join(dir, "sparkplug")
	cmd := exec.CommandContext(ctx, "go", "build", "-ldflags", "-X main.version=e2e", "-o", bin, "./cmd/sparkplug")
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/sparkplug: %w\n%s", err, out)
	}
	return bin, nil
}

// Plugin is the sparkplug process that plays the plugin sidecar of every
// agent pod.
type Plugin struct {
	c       *cluster.Cluster
	bin     string
	args    []string
	env     []string
	addr    string
	logPath string

	mu         sync.Mutex
	proc       *cluster.Process
	restarting bool
}

// newPlugin prepares the plugin process: the sidecar's own args and env
// from the plugin ConfigMap, then the harness's token file, kubeconfig,
// requeue intervals and log settings.
func newPlugin(c *cluster.Cluster, bin string, sidecar PluginSidecar, tokenFile, kubeconfig string) (*Plugin, error) {
	addr, err := sidecar.listenAddr()
	if err != nil {
		return nil, err
	}
	args := append([]string{}, sidecar.Container.Command...)
	if len(args) > 0 {
		args = args[1:] // the image's binary is bin
	}
	args = append(args, sidecar.Container.Args...)
	args = append(args,
		"--token-file="+tokenFile,
		"--kubeconfig="+kubeconfig,
		"--requeue-pending="+pluginRequeuePending.String(),
		"--requeue-running="+pluginRequeueRunning.String(),
		"--ttl-interval="+PluginTTLInterval.String(),
		"--handout-grace="+PluginHandoutGrace.String(),
		"--log-format=text",
		"--log-level=debug",
	)
	var env []string
	for _, e := range sidecar.Container.Env {
		if e.ValueFrom == nil {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	return &Plugin{c: c, bin: bin, args: args, env: env, addr: addr,
		logPath: filepath.Join(c.LogDir(), "sparkplug.log")}, nil
}

// Start runs the plugin and waits until it answers /healthz.
func (p *Plugin) Start(ctx context.Context) error {
	if conn, err := net.DialTimeout("tcp", p.addr, time.Second); err == nil {
		conn.Close()
		return fmt.Errorf("%s is in use: another sparkplug runs on this machine (a kept demo? make demo-down)", p.addr)
	}
	proc, err := p.c.StartProcess("sparkplug", p.bin, p.args, p.env, p.logPath)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.proc = proc
	p.mu.Unlock()
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if exited, err := proc.Exited(); exited {
			return false, fmt.Errorf("sparkplug exited (%v); end of %s:\n%s", err, p.logPath, proc.LogTail(30))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+"/healthz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("wait for sparkplug: %w", err)
	}
	return nil
}

// Restart kills the plugin with SIGKILL (a crash, an OOM kill: nothing is
// flushed or cleaned up) and starts it again.
func (p *Plugin) Restart(ctx context.Context) error {
	p.mu.Lock()
	proc := p.proc
	p.restarting = true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.restarting = false
		p.mu.Unlock()
	}()
	if proc != nil {
		proc.Note("### e2e: kill -9 (RestartPlugin)")
		if err := proc.Kill(); err != nil {
			return err
		}
	}
	return p.Start(ctx)
}

// Stop stops the plugin (SIGTERM).
func (p *Plugin) Stop() error {
	p.mu.Lock()
	proc := p.proc
	p.mu.Unlock()
	if proc == nil {
		return nil
	}
	return proc.Stop()
}

// checkAlive returns an error if the plugin exited while nobody restarts it.
func (p *Plugin) checkAlive() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc == nil || p.restarting {
		return nil
	}
	if exited, err := p.proc.Exited(); exited {
		return fmt.Errorf("sparkplug exited (%v); end of %s:\n%s", err, p.logPath, p.proc.LogTail(30))
	}
	return nil
}

// LogPath is the plugin's log (all its runs).
func (p *Plugin) LogPath() string { return p.logPath }

// LogTail returns the last n lines of the plugin's log.
func (p *Plugin) LogTail(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.proc == nil {
		return ""
	}
	return p.proc.LogTail(n)
}
