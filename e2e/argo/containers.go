package argo

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"time"

	"github.com/sparkplug-io/sparkplug/e2e/cluster"
)

// Command is the local process that plays one container of a pod.
type Command struct {
	Bin  string
	Args []string
	Env  []string
}

// restartPolicy is how kubelet's part treats a container that exits.
type restartPolicy struct {
	// crashesAtMost is how many exits nobody asked for are restarted.
	crashesAtMost int
	// backoff is the wait before a crashed container starts again; one
	// killed on request (Kill) starts again at once.
	backoff time.Duration
	// grace is the time between SIGTERM and SIGKILL when the pod goes.
	grace time.Duration
}

// container is one played container of an agent pod: the agent's main, or
// a plugin sidecar. Argo's agent pods have restartPolicy OnFailure: a
// container that fails starts again, one that exits 0 is done.
type container struct {
	name string // the pod's container name
	log  string // the process's log (all its runs)
	addr string // a sidecar's listen address; empty for main
	cmd  Command

	mu      sync.Mutex
	proc    *cluster.Process
	starts  int
	asked   bool    // the coming exit was asked for (kill)
	crashes []error // exits nobody asked for
	ready   chan struct{}
}

func newContainer(name, log, addr string, cmd Command) *container {
	return &container{name: name, log: log, addr: addr, cmd: cmd, ready: make(chan struct{})}
}

// supervise runs the container until ctx is done (the pod goes: SIGTERM,
// then SIGKILL after the grace) or it exits for good.
func (c *container) supervise(ctx context.Context, pod string, p restartPolicy, start func(name, bin string, args, env []string, logPath string) (*cluster.Process, error), logf func(msg string, kv ...any)) {
	name := c.name + "-" + pod
	for {
		path, err := exec.LookPath(c.cmd.Bin)
		if err != nil {
			logf("cannot run container", "pod", pod, "container", c.name, "error", err.Error())
			return
		}
		proc, err := start(name, path, c.cmd.Args, c.cmd.Env, c.log)
		if err != nil {
			logf("cannot run container", "pod", pod, "container", c.name, "error", err.Error())
			return
		}
		c.mu.Lock()
		c.proc = proc
		c.starts++
		if c.starts == 1 {
			close(c.ready)
		}
		c.mu.Unlock()
		logf("container started", "pod", pod, "container", c.name, "pid", proc.Pid(), "log", c.log)
		select {
		case <-ctx.Done():
			_ = proc.StopWithin(p.grace)
			return
		case <-proc.Done():
		}
		_, exitErr := proc.Exited()
		var ee *exec.ExitError
		if !errors.As(exitErr, &ee) || ee.Success() {
			logf("container finished", "pod", pod, "container", c.name)
			return
		}
		c.mu.Lock()
		asked := c.asked
		c.asked = false
		if !asked {
			c.crashes = append(c.crashes, exitErr)
		}
		crashes := len(c.crashes)
		c.mu.Unlock()
		wait := time.Duration(0)
		if !asked {
			if crashes > p.crashesAtMost {
				logf("container keeps failing; not restarting", "pod", pod, "container", c.name, "error", exitErr.Error())
				return
			}
			logf("container failed; restarting", "pod", pod, "container", c.name, "error", exitErr.Error(), "crash", crashes)
			wait = p.backoff
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// kill sends SIGKILL to the running process, as a crash or an OOM kill
// would; the container starts again at once.
func (c *container) kill() error {
	c.mu.Lock()
	proc := c.proc
	if proc != nil {
		c.asked = true
	}
	c.mu.Unlock()
	if proc == nil {
		return fmt.Errorf("%w: container %s", ErrNotStarted, c.name)
	}
	proc.Note("### e2e: kill -9")
	return proc.Kill()
}

// ErrNotStarted: a container asked to be killed has not started yet.
var ErrNotStarted = errors.New("the container has not started")

// process is the container's current process, nil before the first start.
func (c *container) process() *cluster.Process {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.proc
}

// crashed lists the exits nobody asked for.
func (c *container) crashed() []error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]error(nil), c.crashes...)
}
