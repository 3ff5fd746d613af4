package framework

// Kueue (Options.Kueue): Kueue's controller manager as a host process
// against the control plane, so that Spark steps queue through a real
// Kueue.

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
	"github.com/sparkplug-io/sparkplug/e2e/cluster"
)

const (
	// EnvKueueBin names a directory with a Kueue build (the kueue binary,
	// crds/ and webhooks.yaml) to use instead of hack/kueue.sh's.
	EnvKueueBin = "SPARKPLUG_KUEUE_BIN"
	// KueueNamespace is the manager's own namespace (its configuration's
	// namespace), where an installation would run it.
	KueueNamespace = "kueue-system"
	// KueuePodsReadyTimeout is waitForPodsReady.timeout: how long an
	// admitted Workload may go without PodsReady=True before Kueue evicts
	// it. In KWOK a driver and its executors run within a second or two of
	// being created, so 20s leaves a loaded two-core machine ample room; it
	// is short enough that a Workload whose PodsReady sparkplug never sets
	// is evicted (PodsReadyTimeout, the step fails) within a test's waits,
	// and a driver that runs longer than it shows that sparkplug sets it.
	KueuePodsReadyTimeout = 20 * time.Second
	// kueueStartTimeout bounds the manager's start until /readyz answers.
	kueueStartTimeout = 90 * time.Second
	// kueueWebhookPrefix marks the paths of the webhooks of Kueue's own
	// kinds (Workload, ClusterQueue, ResourceFlavor, Cohort): the manager
	// serves them whatever integrations it runs. The job integrations'
	// webhooks (pods, batch Jobs, ...) are left out: sparkplug creates its
	// Workloads itself, and nothing of the suite's is a Kueue-managed job.
	kueueWebhookPrefix = "-kueue-x-k8s-io-"
)

// Kueue is Kueue's controller manager, run as a host process.
type Kueue struct {
	p *cluster.Process
	// Version is the pinned module version (hack/kueue/go.mod).
	Version string
	health  string // http://host:port of /readyz
}

// KueueBinDir returns the directory of the Kueue build: $SPARKPLUG_KUEUE_BIN,
// else hack/kueue.sh's bindir, which must have been built (make e2e-kueue
// builds it).
func KueueBinDir(ctx context.Context, repoRoot string) (string, error) {
	dir := os.Getenv(EnvKueueBin)
	if dir == "" {
		out, err := exec.CommandContext(ctx, "bash", filepath.Join(repoRoot, "hack", "kueue.sh"), "bindir").Output()
		if err != nil {
			return "", fmt.Errorf("hack/kueue.sh bindir: %w", err)
		}
		dir = strings.TrimSpace(string(out))
	}
	for _, f := range []string{"kueue", "webhooks.yaml", filepath.Join("crds", "kueue.x-k8s.io_workloads.yaml")} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return "", fmt.Errorf("no Kueue build in %s (run bash hack/kueue.sh build, or make e2e-kueue): %w", dir, err)
		}
	}
	return dir, nil
}

// installKueueCRDs applies every CRD of the Kueue build. Before the
// controllers start, so that the garbage collector knows Workloads (which
// sparkplug has the Workflow own) from its start.
func installKueueCRDs(ctx context.Context, c *cluster.Cluster, binDir string) error {
	files, err := filepath.Glob(filepath.Join(binDir, "crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no Kueue CRDs in %s/crds (%v)", binDir, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := c.Apply(ctx, b); err != nil {
			return fmt.Errorf("apply Kueue CRD %s: %w", filepath.Base(f), err)
		}
	}
	return nil
}

// startKueue starts the manager with its configuration and serving
// certificate in dir and registers its webhooks.
//
// The webhooks: the manager always serves those of Kueue's own kinds
// (defaulting and validation of Workloads, ClusterQueues, ...), and a real
// installation registers them; so does this one, so that sparkplug's
// Workloads pass the admission they would pass in a cluster. Kueue's
// internal certificate management is off: it makes a certificate for
// <service>.<namespace>.svc, which the API server cannot reach here (no
// Service routing to 127.0.0.1), and it waits for conversion webhooks on the
// CRDs, which the plain CRDs do not have. Instead the harness makes a
// self-signed certificate for 127.0.0.1 and registers the webhooks with
// url: https://127.0.0.1:<port>/<path> and that certificate as caBundle.
//
// Without internal certificate management the manager also reads its
// metrics server's certificate from the hard-coded /etc/kueue/metrics/certs
// (cmd/kueue/main.go). The harness does not write to the host's /etc: the
// manager runs in a private mount namespace (unshare, as root or in a user
// namespace) where an overlay on /etc adds that directory with the same
// certificate.
func startKueue(ctx context.Context, c *cluster.Cluster, binDir, repoRoot, dir string) (*Kueue, error) {
	if err := argo.EnsureNamespace(ctx, c, KueueNamespace); err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := loopbackCertificate()
	if err != nil {
		return nil, err
	}
	webhookCerts := filepath.Join(dir, "webhook-certs")
	etcUpper := filepath.Join(dir, "etc-upper")
	etcWork := filepath.Join(dir, "etc-work")
	metricsCerts := filepath.Join(etcUpper, "kueue", "metrics", "certs")
	for _, d := range []string{webhookCerts, metricsCerts, etcWork} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
		if d == etcWork {
			continue
		}
		if err := os.WriteFile(filepath.Join(d, "tls.crt"), certPEM, 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(d, "tls.key"), keyPEM, 0o600); err != nil {
			return nil, err
		}
	}
	ports, err := freeLoopbackPorts(3)
	if err != nil {
		return nil, err
	}
	webhookPort, health, metrics := ports[0], "127.0.0.1:"+strconv.Itoa(ports[1]), "127.0.0.1:"+strconv.Itoa(ports[2])
	configFile := filepath.Join(dir, "kueue-config.yaml")
	if err := os.WriteFile(configFile, kueueConfig(webhookPort, webhookCerts, health, metrics), 0o644); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kueue.kubeconfig")
	kc, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return nil, err
	}
	unshare := []string{"--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		unshare = append([]string{"--user", "--map-root-user"}, unshare...)
	}
	args := append(unshare, "--", "/bin/sh", "-c",
		`mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1,workdir=$2" /etc && shift 2 && exec "$@"`,
		"sh", etcUpper, etcWork,
		filepath.Join(binDir, "kueue"), "--config="+configFile, "--zap-log-level=2")
	// The manager is Kueue's installation, not what is tested: it runs
	// with the admin's credentials rather than Kueue's ClusterRoles.
	p, err := c.StartProcess("kueue", "unshare", args, []string{"KUBECONFIG=" + kubeconfig}, "")
	if err != nil {
		return nil, fmt.Errorf("start kueue: %w", err)
	}
	k := &Kueue{p: p, Version: kueueVersion(repoRoot), health: "http://" + health + "/readyz"}
	// /readyz answers once the webhook server listens.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, kueueStartTimeout, true, func(ctx context.Context) (bool, error) {
		if done, err := p.Exited(); done {
			return false, fmt.Errorf("kueue exited: %v; end of its log:\n%s", err, p.LogTail(30))
		}
		return httpOK(ctx, k.health), nil
	})
	if err != nil {
		_ = p.Stop()
		return nil, fmt.Errorf("wait for kueue to answer /readyz: %w", err)
	}
	hooks, err := kueueWebhooks(filepath.Join(binDir, "webhooks.yaml"), "https://127.0.0.1:"+strconv.Itoa(webhookPort), certPEM)
	if err != nil {
		_ = p.Stop()
		return nil, err
	}
	if err := c.Apply(ctx, hooks); err != nil {
		_ = p.Stop()
		return nil, fmt.Errorf("register Kueue's webhooks: %w", err)
	}
	return k, nil
}

// kueueConfig is the manager's Configuration: everything on loopback, no
// leader election, no job integration beyond the one Kueue cannot run
// without (batch/job: an empty list means it), and none of it for pods
// without a queue name.
func kueueConfig(webhookPort int, certDir, health, metrics string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: %s
health:
  healthProbeBindAddress: %s
metrics:
  bindAddress: %s
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
manageJobsWithoutQueueName: false
waitForPodsReady:
  timeout: %s
integrations:
  frameworks: ["batch/job"]
featureGates:
  # The visibility API is an aggregated API server of its own, listening on
  # all interfaces; sparkplug does not use it.
  VisibilityOnDemand: false
`, KueueNamespace, health, metrics, webhookPort, certDir, KueuePodsReadyTimeout))
}

// kueueWebhooks turns the module's webhook configurations (kustomize's
// input: a Service reference) into ones that call the manager at base,
// keeping only the webhooks of Kueue's own kinds.
func kueueWebhooks(path, base string, caPEM []byte) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, doc := range strings.Split(string(b), "\n---") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if obj == nil {
			continue
		}
		u := unstructured.Unstructured{Object: obj}
		// As Kueue's kustomization names them (namePrefix kueue-).
		u.SetName("kueue-" + u.GetName())
		hooks, _, _ := unstructured.NestedSlice(obj, "webhooks")
		var kept []any
		for _, h := range hooks {
			hook := h.(map[string]any)
			p, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "path")
			if !strings.Contains(p, kueueWebhookPrefix) {
				continue
			}
			hook["clientConfig"] = map[string]any{"url": base + p, "caBundle": caPEM}
			kept = append(kept, hook)
		}
		if len(kept) == 0 {
			return nil, fmt.Errorf("%s: no webhook of Kueue's own kinds in %s", path, u.GetName())
		}
		obj["webhooks"] = kept
		j, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		out = append(out, string(j))
	}
	if len(out) != 2 {
		return nil, fmt.Errorf("%s: %d webhook configurations, want a mutating and a validating one", path, len(out))
	}
	return []byte(strings.Join(out, "\n---\n")), nil
}

// loopbackCertificate is a self-signed certificate for 127.0.0.1 and its
// key, PEM-encoded: the webhook server's, and its own CA bundle.
func loopbackCertificate() (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("kueue certificate key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kueue e2e webhook"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("kueue certificate: %w", err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}

// kueueVersion is the Kueue version hack/kueue/go.mod pins.
func kueueVersion(repoRoot string) string {
	f, err := os.Open(filepath.Join(repoRoot, "hack", "kueue", "go.mod"))
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 && fields[0] == "require" && fields[1] == "sigs.k8s.io/kueue" {
			return fields[2]
		}
	}
	return "unknown"
}

// checkAlive names the manager's exit, which the harness never asks for
// before Stop.
func (k *Kueue) checkAlive() error {
	if done, err := k.p.Exited(); done {
		return fmt.Errorf("kueue exited (%v); end of its log:\n%s", err, k.p.LogTail(30))
	}
	return nil
}

// LogPath is the manager's log file.
func (k *Kueue) LogPath() string { return k.p.LogPath() }

// LogTail returns the last n lines of the manager's log.
func (k *Kueue) LogTail(n int) string { return k.p.LogTail(n) }

// stop stops the manager (SIGTERM, then SIGKILL).
func (k *Kueue) stop() error { return k.p.Stop() }
