package operator

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/sparkplug-io/sparkplug/e2e/cluster"
)

const (
	// Module is the operator's Go module, pinned in hack/operator.
	Module = "github.com/kubeflow/spark-operator/v2"
	// Binary is the operator's binary in the bin dir of hack/operator.sh.
	Binary = "spark-operator"
	// startTimeout bounds the wait for a started controller to be ready.
	startTimeout = time.Minute
	// templateDir is where the operator writes the driver and executor
	// pod templates of each submission, /tmp/spark/<submission id>/ (a
	// path it hard-codes, in its pod's own /tmp upstream). It removes
	// them only for applications that bring templates of their own, so on
	// this machine a run leaves two files per application there.
	templateDir = "/tmp/spark"
)

// submissionDir matches the dirs in templateDir: submission ids are UUIDs.
var submissionDir = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Build builds the operator and its fake Spark home with hack/operator.sh
// (cached; cold about 3 minutes) and returns the dir of the binary and the
// Spark home.
func Build(ctx context.Context, repoRoot string) (binDir, sparkHome string, err error) {
	script := filepath.Join(repoRoot, "hack", "operator.sh")
	if out, err := exec.CommandContext(ctx, "bash", script, "build").CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("hack/operator.sh build: %w\n%s", err, out)
	}
	for _, p := range []struct {
		sub string
		dir *string
	}{{"bindir", &binDir}, {"sparkhome", &sparkHome}} {
		out, err := exec.CommandContext(ctx, "bash", script, p.sub).Output()
		if err != nil {
			return "", "", fmt.Errorf("hack/operator.sh %s: %w", p.sub, err)
		}
		*p.dir = strings.TrimSpace(string(out))
	}
	return binDir, sparkHome, nil
}

// Args are the flags of `spark-operator controller start`: the binary's
// defaults, which are also the Helm chart's (10 controller threads, client
// QPS 20 and burst 30, a web UI Service per application, driver pod
// creation grace 10 s), except:
//   - the workqueue's rate limiter is the chart's (a token bucket of 50/s
//     and 500, max delay 6h) rather than the binary's (10/s and 100): every
//     Helm install runs the chart's, and with the binary's the operator
//     would handle no more than 10 application and pod events a second
//     past the first 100, a handicap no user has;
//   - it manages namespace only;
//   - no leader election (one replica; the chart elects a leader, which
//     only delays the start);
//   - its probes listen on healthAddr, a loopback address, instead of every
//     interface's :8081; metrics and pprof stay off (the chart enables
//     metrics, which adds a listener and histograms, not API requests).
func Args(namespace, healthAddr string) []string {
	return []string{
		"controller", "start",
		"--namespaces=" + namespace,
		"--workqueue-ratelimiter-bucket-qps=50",
		"--workqueue-ratelimiter-bucket-size=500",
		"--workqueue-ratelimiter-max-delay=6h",
		"--leader-election=false",
		"--health-probe-bind-address=" + healthAddr,
		"--metrics-bind-address=0",
		"--pprof-bind-address=0",
	}
}

// Env is the operator's environment: the admin kubeconfig (its own RBAC
// is not what is measured), the Spark home whose bin/spark-submit it runs,
// and the API server's address as a pod sees it, from which the operator
// makes spark-submit's --master (it refuses to submit without).
func Env(c *cluster.Cluster, sparkHome string) ([]string, error) {
	u, err := url.Parse(c.Config.Host)
	if err != nil {
		return nil, fmt.Errorf("API server address %q: %w", c.Config.Host, err)
	}
	return []string{
		"KUBECONFIG=" + c.Kubeconfig,
		"SPARK_HOME=" + sparkHome,
		"KUBERNETES_SERVICE_HOST=" + u.Hostname(),
		"KUBERNETES_SERVICE_PORT=" + u.Port(),
	}, nil
}

// Start installs the operator's CRDs (and warms the API server up for
// SparkApplications: warmUp) and runs its controller from binDir,
// managing SparkApplications in namespace, with sparkHome as SPARK_HOME
// (see Build). extraArgs come after Args, so a flag given again there
// wins (e.g. --controller-threads=50, or the binary's own workqueue limits
// --workqueue-ratelimiter-bucket-qps=10 --workqueue-ratelimiter-bucket-size=100);
// --namespaces given again adds namespaces. Start returns once the controller
// serves /readyz and its SparkApplication workers have started; its log is
// <LogDir>/spark-operator.log. The caller stops it before the cluster.
func Start(ctx context.Context, c *cluster.Cluster, binDir, sparkHome, namespace string, extraArgs ...string) (*cluster.Process, error) {
	if _, err := os.Stat(filepath.Join(sparkHome, "bin", "spark-submit")); err != nil {
		return nil, fmt.Errorf("the operator's spark-submit (hack/operator.sh build): %w", err)
	}
	if err := InstallCRDs(ctx, c); err != nil {
		return nil, err
	}
	if err := removeTemplateFiles(templateDir); err != nil {
		return nil, err
	}
	warm, err := warmUp(ctx, c, namespace)
	if err != nil {
		return nil, err
	}
	healthAddr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	env, err := Env(c, sparkHome)
	if err != nil {
		return nil, err
	}
	args := append(Args(namespace, healthAddr), extraArgs...)
	p, err := c.StartProcess(Binary, filepath.Join(binDir, Binary), args, env, "")
	if err != nil {
		return nil, err
	}
	p.Note("### e2e: a dry-run create of a SparkApplication took %s after the CRDs were installed", warm.Round(time.Millisecond))
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, startTimeout, true, func(ctx context.Context) (bool, error) {
		if exited, err := p.Exited(); exited {
			return false, fmt.Errorf("spark-operator exited (%v); end of %s:\n%s", err, p.LogPath(), p.LogTail(30))
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+healthAddr+"/readyz", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, nil
		}
		// /readyz answers before the informers have synced; a
		// SparkApplication created before the workers start would
		// wait, and count against the operator's launch time.
		log, err := os.ReadFile(p.LogPath())
		return err == nil && workersStarted(string(log)), nil
	})
	if err != nil {
		_ = p.Stop()
		return nil, fmt.Errorf("wait for spark-operator (log %s): %w", p.LogPath(), err)
	}
	return p, nil
}

// workersStarted reports whether the operator's log (zap's JSON lines)
// says that the SparkApplication controller's caches have synced and its
// workers take requests, as controller-runtime logs it.
func workersStarted(log string) bool {
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"msg":"Starting workers"`) && strings.Contains(line, `"controller":"sparkapplication"`) {
			return true
		}
	}
	return false
}

// removeTemplateFiles removes from dir the submission dirs that earlier
// runs of the operator left, and nothing else.
func removeTemplateFiles(dir string) error {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the operator's pod template dir: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() && submissionDir.MatchString(e.Name()) {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("remove pod templates of an earlier run: %w", err)
			}
		}
	}
	return nil
}

// warmUp creates a SparkApplication in dry-run mode and returns how long
// that took. The API server's first create of a kind just established
// takes seconds on a small machine (about 2 s on 2 busy cores), which the
// first application of a measured run would otherwise pay; dry run goes
// through the same validation and admission and stores nothing. It also
// checks SparkApplication against the CRD's schema before anything runs.
func warmUp(ctx context.Context, c *cluster.Cluster, namespace string) (time.Duration, error) {
	start := time.Now()
	app := SparkApplication("warm-up", namespace, nil)
	_, err := c.Dynamic.Resource(SparkApplicationResource).Namespace(namespace).Create(ctx, app, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return 0, fmt.Errorf("create a SparkApplication in dry-run mode: %w", err)
	}
	return time.Since(start), nil
}

// freeLoopbackAddr returns a loopback address with a port free now.
func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port for the operator's probes: %w", err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

// Version reports the version of the operator binary in binDir.
func Version(ctx context.Context, binDir string) string {
	out, err := exec.CommandContext(ctx, filepath.Join(binDir, Binary), "version", "--short").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	// "Git Version: v2.5.2" (k8s.io/component-base's gitVersion, which
	// hack/operator.sh sets as upstream's Makefile does).
	return strings.TrimSpace(strings.TrimPrefix(string(out), "Git Version:"))
}
