package argo

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkplug-io/sparkplug/e2e/cluster"
)

const (
	binController = "workflow-controller"
	binArgoexec   = "argoexec"

	// controllerAddr is where the controller serves /healthz (and pprof):
	// ":6060" upstream, bound to loopback by hack/tools.sh.
	controllerAddr = "127.0.0.1:6060"
	// ExecutorImage is the image the controller writes into agent pods
	// that the harness plays: no image is pulled for them. A real node
	// runs another (StartController's executorImage).
	ExecutorImage = "quay.io/argoproj/argoexec:e2e"
	// RequeueTime is how soon the controller looks at a workflow again
	// (DEFAULT_REQUEUE_TIME; 10 s upstream). It is also the agents' patch
	// interval (ARGO_AGENT_PATCH_RATE), which the controller passes on.
	RequeueTime = time.Second
)

// ControllerEnv is the environment the controller runs with: executor
// plugins on, no leader election, and, unless defaults, fast requeues.
// With defaults the controller keeps Argo's own requeue time and agent
// patch rate (10 s each), as a cluster runs it: the scale benchmark
// measures those.
func ControllerEnv(defaults bool) []string {
	env := []string{
		"ARGO_EXECUTOR_PLUGINS=true",
		"LEADER_ELECTION_DISABLE=true",
	}
	if defaults {
		return env
	}
	return append(env,
		"DEFAULT_REQUEUE_TIME="+RequeueTime.String(),
		"ARGO_AGENT_PATCH_RATE="+RequeueTime.String(),
	)
}

// ControllerArgs are the controller's flags: the admin kubeconfig (the
// controller's own RBAC is not what is under test; the agent's is), the
// argo namespace, all namespaces managed, executorImage for agent pods and
// the init and wait containers of container steps.
func ControllerArgs(kubeconfig, executorImage string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--namespace=" + Namespace,
		"--configmap=" + ConfigMapName,
		"--executor-image=" + executorImage,
		"--executor-plugins",
		"--loglevel=info",
		"--log-format=text",
	}
}

// StartController runs the workflow-controller from binDir with
// ControllerEnv(defaults), executorImage (ExecutorImage unless a real
// node runs agent pods) and extra flags after ControllerArgs (e.g. its
// client limits, --qps and --burst), and waits until it serves /healthz.
// Only one can run per machine: it listens on 127.0.0.1:6060.
func StartController(ctx context.Context, c *cluster.Cluster, binDir, executorImage string, defaults bool, extra ...string) (*cluster.Process, error) {
	if conn, err := net.DialTimeout("tcp", controllerAddr, time.Second); err == nil {
		conn.Close()
		return nil, fmt.Errorf("%s is in use: another workflow-controller runs on this machine (a kept demo? make demo-down)", controllerAddr)
	}
	p, err := c.StartProcess(binController, filepath.Join(binDir, binController), append(ControllerArgs(c.Kubeconfig, executorImage), extra...), ControllerEnv(defaults), "")
	if err != nil {
		return nil, err
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if exited, err := p.Exited(); exited {
			return false, fmt.Errorf("workflow-controller exited (%v); end of %s:\n%s", err, p.LogPath(), p.LogTail(30))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+controllerAddr+"/healthz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		_ = p.Stop()
		return nil, fmt.Errorf("wait for workflow-controller: %w", err)
	}
	return p, nil
}

// Version reports the version of the Argo binaries in binDir.
func Version(ctx context.Context, binDir string) string {
	out, err := exec.CommandContext(ctx, filepath.Join(binDir, binController), "version").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return versionOf(out, binController)
}
