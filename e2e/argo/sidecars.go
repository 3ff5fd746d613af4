package argo

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// envPluginAddresses is the agent's list of plugin URLs, one per sidecar
// container in the pod's order (workflow/common in the Argo module).
const envPluginAddresses = "ARGO_PLUGIN_ADDRESSES"

// SidecarFunc returns the process that plays one plugin sidecar container
// of an agent pod, listening at addr. In a cluster every sidecar has the
// pod's own loopback; here all pods share one, so each sidecar gets a port
// of its own and its agent is told so (ARGO_PLUGIN_ADDRESSES).
type SidecarFunc func(ctx context.Context, pod *corev1.Pod, c corev1.Container, addr string) (Command, error)

// Sidecar is a played plugin sidecar, as tests see it.
type Sidecar struct {
	// Pod is namespace/name of its agent pod; Workflow the workflow's name.
	Pod, Workflow string
	// Container is the container's name (the plugin's, spark-executor-plugin).
	Container string
	// Addr is where it listens.
	Addr string
	// Pid is its current process id, 0 before it started.
	Pid int
	// Starts counts its starts.
	Starts int
}

// sidecarContainers are the pod's plugin sidecars: every container but the
// agent's main, in the pod's order (which is the order of Argo's address
// list).
func sidecarContainers(pod *corev1.Pod) []corev1.Container {
	var out []corev1.Container
	for _, c := range pod.Spec.Containers {
		if c.Name != agentMainContainer {
			out = append(out, c)
		}
	}
	return out
}

// pluginAddresses rewrites the agent's ARGO_PLUGIN_ADDRESSES so that it
// calls each sidecar at the address it was given.
func pluginAddresses(env []string, addrs []string) ([]string, error) {
	out := append([]string(nil), env...)
	for i, e := range out {
		name, value, _ := strings.Cut(e, "=")
		if name != envPluginAddresses {
			continue
		}
		var was []string
		if err := json.Unmarshal([]byte(value), &was); err != nil {
			return nil, fmt.Errorf("%s=%q: %w", envPluginAddresses, value, err)
		}
		if len(was) != len(addrs) {
			return nil, fmt.Errorf("%s lists %d plugins, the pod has %d sidecars", envPluginAddresses, len(was), len(addrs))
		}
		urls := make([]string, len(addrs))
		for j, a := range addrs {
			_, port, _ := net.SplitHostPort(a)
			urls[j] = "http://localhost:" + port // as Argo writes it
		}
		b, err := json.Marshal(urls)
		if err != nil {
			return nil, err
		}
		out[i] = envPluginAddresses + "=" + string(b)
		return out, nil
	}
	if len(addrs) > 0 {
		return nil, fmt.Errorf("the agent's main container has no %s", envPluginAddresses)
	}
	return out, nil
}

// freeLoopbackAddr is a 127.0.0.1 address whose port is free now.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}
