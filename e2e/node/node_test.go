//go:build e2e

package node_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/node"
)

// envRun names the environment variable that runs this package's tests
// (make e2e-node sets it): they need root and change the host, so `go test
// -tags e2e ./e2e/...` (make e2e) skips them.
const envRun = "SPARKPLUG_E2E_NODE"

const probeImage = "sparkplug.local/probe:e2e"

// TestRealNode starts the e2e environment with the real node, runs pods
// there that show what only a kubelet does, and checks that stopping the
// environment leaves the host as it was.
func TestRealNode(t *testing.T) {
	if os.Getenv(envRun) == "" {
		t.Skipf("the real node needs root and changes the host: set %s=1 (make e2e-node)", envRun)
	}
	before := hostSnapshot(t)
	ctx := context.Background()
	start := time.Now()
	env, err := framework.Start(ctx, framework.Options{RealNode: true, Progress: os.Stderr})
	if err != nil {
		t.Fatalf("start the environment: %v", err)
	}
	t.Logf("environment with the real node up in %.1fs", time.Since(start).Seconds())
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		if t.Failed() {
			env.DumpLogs(os.Stderr, 40)
		}
		start := time.Now()
		if err := env.Stop(); err != nil {
			t.Errorf("stop the environment: %v", err)
		}
		t.Logf("environment stopped in %.1fs", time.Since(start).Seconds())
	}
	t.Cleanup(stop)

	start = time.Now()
	probeTar := importProbe(ctx, t, env)
	t.Logf("probe image built and imported in %.1fs", time.Since(start).Seconds())
	const url = "https://kubernetes.default.svc/api"

	t.Run("a pod reaches the API server by its Service name, and its exit code and message are the kubelet's", func(t *testing.T) {
		pod := runPod(ctx, t, env.Kube, env.Namespace, "probe-api", probe("-get", url, "-exit", "3"))
		term := terminated(t, pod)
		if term.ExitCode != 3 {
			t.Errorf("exit code %d, want 3; message %q", term.ExitCode, term.Message)
		}
		for _, want := range []string{"GET " + url + ": 200 OK", "kubernetes.default.svc is " + node.APIServiceIP, `"kind":"APIVersions"`} {
			if !strings.Contains(term.Message, want) {
				t.Errorf("termination message %q lacks %q", term.Message, want)
			}
		}
		if term.Reason != "Error" {
			t.Errorf("reason %q, want Error", term.Reason)
		}
	})

	t.Run("a pod over its memory limit is OOMKilled", func(t *testing.T) {
		c := probe("-hog")
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")}
		pod := runPod(ctx, t, env.Kube, env.Namespace, "probe-oom", c)
		term := terminated(t, pod)
		if term.Reason != "OOMKilled" || term.ExitCode != 137 {
			t.Errorf("terminated with %s (exit code %d), want OOMKilled (137)", term.Reason, term.ExitCode)
		}
	})

	t.Run("a pod pulls its image over plain HTTP from a registry on loopback", func(t *testing.T) {
		reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
		defer reg.Close()
		host := strings.TrimPrefix(reg.URL, "http://")
		img, err := tarball.ImageFromPath(probeTar, nil)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := name.ParseReference(host + "/probe:pulled")
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ref, img); err != nil {
			t.Fatalf("push %s: %v", ref, err)
		}
		if err := env.Node.TrustRegistry(host); err != nil {
			t.Fatal(err)
		}
		c := probe("-get", url)
		c.Image, c.ImagePullPolicy = ref.String(), corev1.PullAlways
		pod := runPod(ctx, t, env.Kube, env.Namespace, "probe-pulled", c)
		if term := terminated(t, pod); term.ExitCode != 0 {
			t.Errorf("exit code %d: %s", term.ExitCode, term.Message)
		}
	})

	stop()
	after := hostSnapshot(t)
	if after.String() != before.String() {
		t.Errorf("the host differs after teardown:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if len(after.procs) > 0 {
		t.Errorf("still running after teardown: %v", after.procs)
	}
	if after.bridge {
		t.Errorf("%s still exists after teardown", node.Bridge)
	}
	if strings.Contains(after.iptables, "SPARKPLUG") {
		t.Errorf("a SPARKPLUG iptables chain is left:\n%s", after.iptables)
	}
}

// importProbe builds the probe command static, packages it as an image and
// imports it into the node; it returns the image tarball.
func importProbe(ctx context.Context, t *testing.T, env *framework.Env) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "probe")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./e2e/node/probe")
	cmd.Dir = env.RepoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the probe: %v\n%s", err, out)
	}
	tarball := filepath.Join(dir, "probe.tar")
	if err := node.WriteBinaryImage(tarball, probeImage, bin); err != nil {
		t.Fatal(err)
	}
	if err := env.Node.ImportImage(ctx, tarball); err != nil {
		t.Fatal(err)
	}
	return tarball
}

// probe is a container of the imported probe image with args.
func probe(args ...string) corev1.Container {
	return corev1.Container{
		Name: "probe", Image: probeImage, ImagePullPolicy: corev1.PullNever, Args: args,
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")},
		},
	}
}

// runPod runs a pod of one container on the real node and returns it once
// it has ended.
func runPod(ctx context.Context, t *testing.T, kube kubernetes.Interface, ns, name string, c corev1.Container) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{c}},
	}
	node.OnNode(&pod.Spec)
	start := time.Now()
	if _, err := kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod %s: %v", name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		got, err := kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get pod %s: %v", name, err)
		}
		if got.Status.Phase == corev1.PodSucceeded || got.Status.Phase == corev1.PodFailed {
			t.Logf("pod %s %s on %s after %.1fs", name, got.Status.Phase, got.Spec.NodeName, time.Since(start).Seconds())
			if got.Spec.NodeName != node.Name {
				t.Errorf("pod %s ran on %q, want %s", name, got.Spec.NodeName, node.Name)
			}
			return got
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pod %s did not end: phase %s, status %+v", name, got.Status.Phase, got.Status)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func terminated(t *testing.T, pod *corev1.Pod) *corev1.ContainerStateTerminated {
	t.Helper()
	if len(pod.Status.ContainerStatuses) != 1 || pod.Status.ContainerStatuses[0].State.Terminated == nil {
		t.Fatalf("pod %s has no terminated container: %+v", pod.Name, pod.Status.ContainerStatuses)
	}
	return pod.Status.ContainerStatuses[0].State.Terminated
}

// counters are the packet and byte counts of iptables-save's chain lines.
var counters = regexp.MustCompile(` \[[0-9]+:[0-9]+\]$`)

// snapshot is the host state the node changes.
type snapshot struct {
	bridge   bool
	procs    []string // containerd, shims, kubelet, CoreDNS
	iptables string   // every table, v4 and v6, chains and rules
	sysctls  string
	mounts   []string // under the node's temp dirs
	paths    []string // of hostPaths, those that exist
}

// hostPaths are what the kubelet and containerd create at fixed paths:
// container log links, network namespaces, shim sockets and runc state,
// libcni's cache, the pods' cgroups.
var hostPaths = []string{
	"/var/log/containers", "/run/netns", "/run/containerd", "/var/lib/cni", "/var/lib/kubelet",
	"/sys/fs/cgroup/memory/kubepods", "/sys/fs/cgroup/cpu/kubepods", "/sys/fs/cgroup/pids/kubepods",
}

func (s snapshot) String() string {
	return fmt.Sprintf("bridge %s: %v\nprocesses: %v\nsysctls: %s\nmounts: %v\npaths: %v\niptables:\n%s",
		node.Bridge, s.bridge, s.procs, s.sysctls, s.mounts, s.paths, s.iptables)
}

func hostSnapshot(t *testing.T) snapshot {
	t.Helper()
	var s snapshot
	_, err := os.Stat("/sys/class/net/" + node.Bridge)
	s.bridge = err == nil
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// "pid (comm) state ...". A zombie is not running: this machine's
		// init reaps the processes it inherits (shims, and whatever a
		// killed test binary left) only now and then.
		open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || end < open || bytes.HasPrefix(bytes.TrimSpace(b[end+1:]), []byte("Z")) {
			continue
		}
		name := string(b[open+1 : end])
		if strings.HasPrefix(name, "containerd") || name == "kubelet" || name == "coredns" {
			s.procs = append(s.procs, filepath.Base(filepath.Dir(path))+" "+name)
		}
	}
	for _, cmd := range []string{"iptables-save", "ip6tables-save"} {
		out, err := exec.Command(cmd).Output()
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if !strings.HasPrefix(line, "#") { // the save's date
				s.iptables += counters.ReplaceAllString(line, "") + "\n"
			}
		}
	}
	for _, name := range []string{"kernel/panic", "kernel/panic_on_oops", "vm/overcommit_memory", "net/ipv4/ip_forward"} {
		b, err := os.ReadFile("/proc/sys/" + name)
		if err != nil {
			t.Fatal(err)
		}
		s.sysctls += name + "=" + strings.TrimSpace(string(b)) + " "
	}
	for _, p := range hostPaths {
		if _, err := os.Stat(p); err == nil {
			s.paths = append(s.paths, p)
		}
	}
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mountinfo), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.Contains(f[4], "sparkplug-node-") {
			s.mounts = append(s.mounts, f[4])
		}
	}
	return s
}
