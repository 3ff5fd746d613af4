//go:build e2e

package realnode

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/images"
	"github.com/sparkplug-io/sparkplug/e2e/node"
)

// envRun names the environment variable that runs this package's tests
// (make e2e-node sets it): they need root and change the host.
const envRun = "SPARKPLUG_E2E_NODE"

// namespace is where sparkplug is installed from the release.
const namespace = "realnode"

// stepImage is the image of container steps (./step).
const stepImage = "e2e.sparkplug.test/step:e2e"

var (
	env *framework.Env
	// rel is the release installed into namespace, whose image the local
	// registry serves at registry.
	rel      *images.Release
	registry string
	// helm is the pinned helm (hack/helm.sh).
	helm string
)

func TestMain(m *testing.M) {
	if os.Getenv(envRun) == "" {
		fmt.Fprintf(os.Stderr, "realnode: skipped: the real node needs root and changes the host: set %s=1 (make e2e-node)\n", envRun)
		os.Exit(0)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	before, err := hostSnapshot()
	if err != nil {
		fmt.Fprintf(os.Stderr, "realnode: the host before the node: %v\n", err)
		return 1
	}
	start := time.Now()
	dir, err := os.MkdirTemp("", "sparkplug-realnode-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	stopRegistry, err := setUp(ctx, dir)
	if stopRegistry != nil {
		defer stopRegistry()
	}
	if env != nil {
		signals := make(chan os.Signal, 1)
		signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(signals)
		go func() {
			sig := <-signals
			fmt.Fprintf(os.Stderr, "realnode: %v: stopping the environment\n", sig)
			_ = env.Stop()
			os.Exit(1)
		}()
	}
	code := 1
	if err != nil {
		fmt.Fprintf(os.Stderr, "realnode: set up: %v\n", err)
		if env != nil {
			env.DumpLogs(os.Stderr, 40)
		}
	} else {
		fmt.Fprintf(os.Stderr, "realnode: ready in %.1fs: %s; sparkplug %s in namespace %s\n",
			time.Since(start).Seconds(), env.Versions, rel.Pinned(), namespace)
		code = m.Run()
		if code != 0 {
			env.DumpLogs(os.Stderr, 40)
			fmt.Fprintf(os.Stderr, "realnode: failed tests: %s\n", strings.Join(env.FailedTests(), ", "))
		}
	}
	if env != nil {
		stop := time.Now()
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "realnode: stop the environment: %v\n", err)
			code = 1
		}
		fmt.Fprintf(os.Stderr, "realnode: environment stopped in %.1fs\n", time.Since(stop).Seconds())
		after, err := hostSnapshot()
		if err != nil {
			fmt.Fprintf(os.Stderr, "realnode: the host after the node: %v\n", err)
			return 1
		}
		if left := leftBehind(before, after); left != "" {
			fmt.Fprintf(os.Stderr, "realnode: FAIL: stopping the environment did not restore the host:\n%s\n", left)
			code = 1
		}
	}
	return code
}

// setUp builds the images, starts the environment with the real node,
// and installs the release, pushed to a local registry, into namespace.
func setUp(ctx context.Context, dir string) (stopRegistry func(), err error) {
	root, err := framework.RepoRoot()
	if err != nil {
		return nil, err
	}
	bin, err := framework.ToolsBin(root)
	if err != nil {
		return nil, err
	}
	step := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "realnode: "+format+"\n", args...) }
	step("building the argoexec, Spark stand-in and step images")
	// A tag has no "+": v3.7.18+unknown is tagged v3.7.18.
	version, _, _ := strings.Cut(argo.Version(ctx, bin), "+")
	argoexec, err := images.Argoexec(filepath.Join(bin, "argoexec"), images.ArgoexecRef(version), dir)
	if err != nil {
		return nil, err
	}
	standin, err := images.SparkStandIn(ctx, root, dir)
	if err != nil {
		return nil, err
	}
	stepTar, err := stepImageTarball(ctx, root, dir)
	if err != nil {
		return nil, err
	}
	if helm, err = buildHelm(ctx, root); err != nil {
		return nil, err
	}
	env, err = framework.Start(ctx, framework.Options{
		RealNode:      true,
		Progress:      os.Stderr,
		KeepDir:       os.Getenv("SPARKPLUG_E2E_KEEP") != "",
		NodeImages:    []string{argoexec.Path, standin.Path, stepTar},
		ExecutorImage: argoexec.Ref,
	})
	if err != nil {
		env = nil
		return nil, err
	}
	host, stop, err := images.StartRegistry(context.Background())
	if err != nil {
		return nil, err
	}
	registry = host
	if err := env.Node.TrustRegistry(host); err != nil {
		return stop, err
	}
	step("building the release (hack/release.sh) for %s/sparkplug", host)
	rel, err = images.BuildRelease(ctx, images.ReleaseOptions{
		RepoRoot: root, Repository: host + "/sparkplug", Helm: helm, Dir: dir,
	})
	if err != nil {
		return stop, err
	}
	if _, err := images.PushRelease(ctx, rel, host+"/sparkplug:"+rel.Version); err != nil {
		return stop, err
	}
	if _, err := images.PushAck(ctx, rel, rel.AckRepository+":"+rel.Version); err != nil {
		return stop, err
	}
	step("installing %s into namespace %s", filepath.Base(rel.Install), namespace)
	return stop, env.InstallRelease(ctx, namespace, rel.Install, rel.Chart)
}

// stepImageTarball builds ./step static and its image, stepImage.
func stepImageTarball(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "step")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "./e2e/realnode/step")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the step: %w\n%s", err, out)
	}
	tarball := filepath.Join(dir, "step.tar")
	return tarball, node.WriteBinaryImage(tarball, stepImage, bin)
}

// buildHelm builds (cached) the pinned helm, as make release uses.
func buildHelm(ctx context.Context, root string) (string, error) {
	script := filepath.Join(root, "hack", "helm.sh")
	if out, err := exec.CommandContext(ctx, "bash", script, "build").CombinedOutput(); err != nil {
		return "", fmt.Errorf("hack/helm.sh build: %w\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, "bash", script, "bindir").Output()
	if err != nil {
		return "", fmt.Errorf("hack/helm.sh bindir: %w", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "helm"), nil
}

// Given starts a test's fixture in namespace.
func Given(t *testing.T) *framework.Given {
	t.Helper()
	return env.Given(t).Namespace(namespace)
}
