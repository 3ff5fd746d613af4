package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

func (c *Cluster) startEtcd(ctx context.Context) error {
	return c.startComponent(ctx, binEtcd, 2,
		func(p []int) []string {
			c.layout.etcdClientPort, c.layout.etcdPeerPort = p[0], p[1]
			return etcdArgs(c.layout)
		},
		nil,
		func(ctx context.Context) error {
			return httpHealthy(ctx, c.layout.etcdURL()+"/health", "", `"health":"true"`)
		})
}

func (c *Cluster) startAPIServer(ctx context.Context, token string) error {
	err := c.startComponent(ctx, binAPIServer, 1,
		func(p []int) []string {
			c.layout.apiServerPort = p[0]
			return apiServerArgs(c.layout)
		},
		nil,
		func(ctx context.Context) error {
			return httpHealthy(ctx, c.layout.apiServerURL()+"/readyz", token, "")
		})
	if err != nil {
		return err
	}

	kubeconfig, err := renderKubeconfig(c.layout.apiServerURL(), "admin", token)
	if err != nil {
		return err
	}
	c.Kubeconfig = c.layout.path(fileAdminKubeconfig)
	if err := os.WriteFile(c.Kubeconfig, kubeconfig, 0o600); err != nil {
		return fmt.Errorf("write admin kubeconfig: %w", err)
	}
	c.Config = c.configForToken(c.layout.apiServerURL(), token)
	client, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	c.Client = client
	if c.Dynamic, err = dynamic.NewForConfig(c.Config); err != nil {
		return fmt.Errorf("create dynamic client: %w", err)
	}
	v, err := client.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("get server version: %w", err)
	}
	c.Version = v.GitVersion
	return nil
}

func (c *Cluster) startControllerManager(ctx context.Context) error {
	err := c.startComponent(ctx, binControllerManager, 1,
		func(p []int) []string {
			c.layout.controllerManagerPort = p[0]
			return controllerManagerArgs(c.layout)
		},
		nil,
		func(ctx context.Context) error {
			url := fmt.Sprintf("https://%s:%d/healthz", loopback, c.layout.controllerManagerPort)
			return httpHealthy(ctx, url, "", "")
		})
	if err != nil {
		return err
	}
	// Usable once the ServiceAccount controller has run.
	return c.waitFor(ctx, c.procs[len(c.procs)-1], "the default ServiceAccount", func(ctx context.Context) error {
		_, err := c.Client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

func (c *Cluster) startScheduler(ctx context.Context) error {
	return c.startComponent(ctx, binScheduler, 1,
		func(p []int) []string {
			c.layout.schedulerPort = p[0]
			return schedulerArgs(c.layout)
		},
		nil,
		func(ctx context.Context) error {
			url := fmt.Sprintf("https://%s:%d/healthz", loopback, c.layout.schedulerPort)
			return httpHealthy(ctx, url, "", "")
		})
}

func (c *Cluster) startKWOK(ctx context.Context) error {
	if err := c.Apply(ctx, kwokLogsCRD); err != nil {
		return fmt.Errorf("install KWOK's Logs CRD: %w", err)
	}
	err := c.startComponent(ctx, binKWOK, 1,
		func(p []int) []string {
			c.layout.kwokPort = p[0]
			return kwokArgs(c.layout, c.opts.KWOKStages)
		},
		kwokEnv(c.layout),
		func(ctx context.Context) error {
			url := fmt.Sprintf("https://%s:%d/healthz", loopback, c.layout.kwokPort)
			return httpHealthy(ctx, url, "", "")
		})
	if err != nil {
		return err
	}
	if _, err := c.Client.CoreV1().Nodes().Create(ctx, fakeNode(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create fake node: %w", err)
	}
	return c.waitFor(ctx, c.procs[len(c.procs)-1], "the fake node to be Ready", func(ctx context.Context) error {
		node, err := c.Client.CoreV1().Nodes().Get(ctx, FakeNodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return errors.New("node not Ready")
	})
}

// fakeNode is the node KWOK manages, shaped like KWOK's own example node.
func fakeNode() *corev1.Node {
	capacity := corev1.ResourceList{
		// As large as a cluster's node pool: tests run side by side (one
		// launches 40 drivers and 40 executors), and none may wait on
		// another's pods for room; the scale benchmark runs 1,000 drivers
		// while the pods of its run before are still going.
		corev1.ResourceCPU:    resource.MustParse("5000"),
		corev1.ResourceMemory: resource.MustParse("20Ti"),
		corev1.ResourcePods:   resource.MustParse("5000"),
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: FakeNodeName,
			Annotations: map[string]string{
				KWOKNodeAnnotation:             "fake",
				"node.alpha.kubernetes.io/ttl": "0",
			},
			Labels: map[string]string{
				"kubernetes.io/arch":            "amd64",
				"kubernetes.io/hostname":        FakeNodeName,
				"kubernetes.io/os":              "linux",
				"kubernetes.io/role":            "agent",
				"node-role.kubernetes.io/agent": "",
				"type":                          "kwok",
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
}

// startComponent starts a component on nports fresh loopback ports and
// waits until healthy reports nil. If the process exits during startup it
// is tried again on other ports, up to portAttempts times.
func (c *Cluster) startComponent(ctx context.Context, name string, nports int, args func(ports []int) []string, env []string, healthy func(context.Context) error) error {
	var lastErr error
	for attempt := 1; attempt <= portAttempts; attempt++ {
		ports, err := freePorts(nports)
		if err != nil {
			return err
		}
		p, err := startProcess(name, filepath.Join(c.opts.BinDir, name), args(ports), env,
			filepath.Join(c.opts.LogDir, name+".log"))
		if err != nil {
			return err
		}
		c.procs = append(c.procs, p)
		if err := c.recordPID(p); err != nil {
			return err
		}
		lastErr = c.waitFor(ctx, p, name+" to be healthy", healthy)
		if lastErr == nil {
			return nil
		}
		if exited, _ := p.exited(); !exited || !strings.Contains(p.logTail(50), "address already in use") {
			return lastErr // not a port taken by someone else: retrying will not help
		}
	}
	return lastErr
}

func (c *Cluster) recordPID(p *process) error {
	f, err := os.OpenFile(c.layout.path(filePIDs), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("record pid: %w", err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "%s %d\n", p.name, p.cmd.Process.Pid); err != nil {
		return fmt.Errorf("record pid: %w", err)
	}
	return nil
}
