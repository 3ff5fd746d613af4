package cluster

import (
	_ "embed"
	"fmt"
	"path/filepath"
	"strings"
)

// Names of the binaries, as hack/tools.sh installs them.
const (
	binEtcd              = "etcd"
	binAPIServer         = "kube-apiserver"
	binControllerManager = "kube-controller-manager"
	binScheduler         = "kube-scheduler"
	binKWOK              = "kwok"
)

const (
	loopback = "127.0.0.1"

	// serviceAccountIssuer is also the audience of the API server.
	serviceAccountIssuer = "https://kubernetes.default.svc.cluster.local"
	serviceClusterIPs    = "10.96.0.0/16"

	// FakeNodeName is the node KWOK manages when Options.KWOK is set.
	FakeNodeName = "kwok-node-0"
	// KWOKNodeAnnotation marks the nodes KWOK manages; its value is "fake".
	KWOKNodeAnnotation = "kwok.x-k8s.io/node"
)

// layout is where a cluster keeps its files and which ports it uses: the
// input of the pure functions below that build each component's arguments.
type layout struct {
	dir string // state dir

	etcdClientPort, etcdPeerPort int
	apiServerPort                int
	controllerManagerPort        int
	schedulerPort                int
	kwokPort                     int
}

func (l layout) path(name string) string { return filepath.Join(l.dir, name) }

func (l layout) etcdURL() string { return fmt.Sprintf("http://%s:%d", loopback, l.etcdClientPort) }

func (l layout) apiServerURL() string { return fmt.Sprintf("https://%s:%d", loopback, l.apiServerPort) }

// Files in the state dir.
const (
	fileAdminKubeconfig = "admin.kubeconfig"
	fileTokens          = "tokens.csv"
	fileSAKey           = "sa.key"
	fileSAPub           = "sa.pub"
	filePIDs            = "pids"
	fileKept            = "kept" // Stop kept the dir on purpose
	stateDirPrefix      = "sparkplug-cluster-"
	dirEtcd             = "etcd"
	dirCerts            = "certs"
	dirKWOKHome         = "kwok-home"
	// fileServingCert is the self-signed certificate kube-apiserver writes
	// into its --cert-dir (followed by the CA that signed it).
	fileServingCert = "apiserver.crt"
	fileServingKey  = "apiserver.key"
)

func etcdArgs(l layout) []string {
	peer := fmt.Sprintf("http://%s:%d", loopback, l.etcdPeerPort)
	return []string{
		"--name=sparkplug",
		"--data-dir=" + l.path(dirEtcd),
		"--listen-client-urls=" + l.etcdURL(),
		"--advertise-client-urls=" + l.etcdURL(),
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=sparkplug=" + peer,
		"--unsafe-no-fsync",
		"--log-level=warn",
	}
}

func apiServerArgs(l layout) []string {
	return []string{
		"--etcd-servers=" + l.etcdURL(),
		"--bind-address=" + loopback,
		"--advertise-address=" + loopback,
		fmt.Sprintf("--secure-port=%d", l.apiServerPort),
		"--cert-dir=" + l.path(dirCerts),
		"--token-auth-file=" + l.path(fileTokens),
		"--authorization-mode=Node,RBAC",
		"--service-account-key-file=" + l.path(fileSAPub),
		"--service-account-signing-key-file=" + l.path(fileSAKey),
		"--service-account-issuer=" + serviceAccountIssuer,
		"--api-audiences=" + serviceAccountIssuer,
		"--service-cluster-ip-range=" + serviceClusterIPs,
		"--allow-privileged=true",
		"--profiling=false",
		// Pod logs are proxied to KWOK's kubelet server at the fake node's
		// InternalIP (127.0.0.1), never to its name, which resolves nowhere.
		"--kubelet-preferred-address-types=InternalIP",
	}
}

func controllerManagerArgs(l layout) []string {
	kubeconfig := l.path(fileAdminKubeconfig)
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--bind-address=" + loopback,
		fmt.Sprintf("--secure-port=%d", l.controllerManagerPort),
		"--cert-dir=" + l.path(dirCerts),
		"--service-account-private-key-file=" + l.path(fileSAKey),
		"--root-ca-file=" + filepath.Join(l.path(dirCerts), fileServingCert),
		"--use-service-account-credentials=true",
		// No cloud, no node IPAM, no volume attaching here; claims do
		// bind to pre-made volumes (examples/volumes.yaml).
		"--controllers=" + strings.Join([]string{
			"*",
			"-node-ipam-controller",
			"-persistentvolume-attach-detach-controller",
			"-persistentvolume-expander-controller",
		}, ","),
		"--profiling=false",
	}
}

func schedulerArgs(l layout) []string {
	kubeconfig := l.path(fileAdminKubeconfig)
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--bind-address=" + loopback,
		fmt.Sprintf("--secure-port=%d", l.schedulerPort),
		"--cert-dir=" + l.path(dirCerts),
		"--profiling=false",
	}
}

// kwokArgs makes KWOK manage only the nodes annotated as fake, and serve its
// (debugging, health) endpoints on loopback. Stages, if any, replace KWOK's
// default pod stages.
func kwokArgs(l layout, stages []string) []string {
	args := []string{
		"--kubeconfig=" + l.path(fileAdminKubeconfig),
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + KWOKNodeAnnotation + "=fake",
		fmt.Sprintf("--server-address=%s:%d", loopback, l.kwokPort),
		fmt.Sprintf("--node-port=%d", l.kwokPort),
		// The kubelet API the API server calls for pods/log: HTTPS (the API
		// server speaks nothing else to a kubelet, and verifies no kubelet
		// certificate without --kubelet-certificate-authority), on the
		// address the fake node reports.
		"--node-ip=" + loopback,
		"--tls-cert-file=" + filepath.Join(l.path(dirCerts), fileServingCert),
		"--tls-private-key-file=" + filepath.Join(l.path(dirCerts), fileServingKey),
		// Logs objects (kwok-logs-crd.yaml) say which file serves a pod's
		// log: the e2e Spark simulator writes one per driver.
		"--enable-crds=Logs",
	}
	for _, s := range stages {
		args = append(args, "--config="+s)
	}
	return args
}

// kwokEnv keeps KWOK from reading the user's ~/.kwok/kwok.yaml.
func kwokEnv(l layout) []string {
	return []string{"HOME=" + l.path(dirKWOKHome)}
}

// kwokLogsCRD is KWOK v0.7.0's Logs CRD (kustomize/crd/bases/
// kwok.x-k8s.io_logs.yaml of sigs.k8s.io/kwok, Apache-2.0), installed before
// KWOK starts with --enable-crds=Logs. TestKWOKLogsCRDIsThePinnedOne keeps
// it equal to the pinned module's.
//
//go:embed kwok-logs-crd.yaml
var kwokLogsCRD []byte
