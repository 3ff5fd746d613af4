//go:build e2e

package realnode

// Pods on the real node that show what only a kubelet does: cluster DNS
// and the API server's Service from a pod, a container's exit code and
// termination message, an OOM kill, a pull over plain HTTP from a
// registry on loopback. They share the package's environment; that
// stopping it leaves the host as it was is TestMain's check (host_test.go).

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	localregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/node"
)

const probeImage = "sparkplug.local/probe:e2e"

// TestPodsOnTheRealNode runs pods of the probe image (../node/probe) on
// the real node.
func TestPodsOnTheRealNode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	start := time.Now()
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
		reg := httptest.NewServer(localregistry.New(localregistry.Logger(log.New(io.Discard, "", 0))))
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
