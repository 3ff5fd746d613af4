package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"sigs.k8s.io/yaml"
)

func TestRenderKubeconfig(t *testing.T) {
	b, err := renderKubeconfig("https://127.0.0.1:6443", "admin", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	var cfg clientcmdv1.Config
	if err := yaml.UnmarshalStrict(b, &cfg); err != nil {
		t.Fatalf("kubeconfig does not parse: %v\n%s", err, b)
	}
	if len(cfg.Contexts) != 1 || cfg.CurrentContext != cfg.Contexts[0].Name {
		t.Fatalf("want one current context, got %+v", cfg)
	}
	ctx := cfg.Contexts[0].Context
	if len(cfg.Clusters) != 1 || cfg.Clusters[0].Name != ctx.Cluster {
		t.Fatalf("context names cluster %q, clusters are %+v", ctx.Cluster, cfg.Clusters)
	}
	if len(cfg.AuthInfos) != 1 || cfg.AuthInfos[0].Name != ctx.AuthInfo {
		t.Fatalf("context names user %q, users are %+v", ctx.AuthInfo, cfg.AuthInfos)
	}
	cluster, user := cfg.Clusters[0].Cluster, cfg.AuthInfos[0].AuthInfo
	if cluster.Server != "https://127.0.0.1:6443" || !cluster.InsecureSkipTLSVerify {
		t.Errorf("cluster = %+v, want server https://127.0.0.1:6443 with insecure-skip-tls-verify", cluster)
	}
	if user.Token != "s3cret" {
		t.Errorf("token = %q, want s3cret", user.Token)
	}
}

// TestComponentsBindLoopbackOnly checks every address-like argument of every
// component: nothing may listen beyond 127.0.0.1.
func TestComponentsBindLoopbackOnly(t *testing.T) {
	l := layout{dir: "/state", etcdClientPort: 1, etcdPeerPort: 2, apiServerPort: 3,
		controllerManagerPort: 4, schedulerPort: 5, kwokPort: 6}
	components := map[string][]string{
		binEtcd:              etcdArgs(l),
		binAPIServer:         apiServerArgs(l),
		binControllerManager: controllerManagerArgs(l),
		binScheduler:         schedulerArgs(l),
		binKWOK:              kwokArgs(l, []string{"/stages.yaml"}),
	}
	addressFlags := []string{"bind-address", "advertise-address", "server-address",
		"listen-client-urls", "listen-peer-urls", "advertise-client-urls", "initial-advertise-peer-urls"}
	for name, args := range components {
		seen := map[string]bool{}
		for _, arg := range args {
			flag, value, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
			seen[flag] = true
			if strings.Contains(value, "0.0.0.0") || strings.Contains(value, "[::]") {
				t.Errorf("%s %s: binds all interfaces", name, arg)
			}
			for _, f := range addressFlags {
				if flag == f && !isLoopback(value) {
					t.Errorf("%s %s: not loopback", name, arg)
				}
			}
		}
		// A component that serves must be told where.
		if name != binEtcd && !seen["bind-address"] && !seen["server-address"] {
			t.Errorf("%s: no bind address in %v", name, args)
		}
	}
}

func isLoopback(v string) bool {
	host := v
	if u, err := url.Parse(v); err == nil && u.Host != "" {
		host = u.Host
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func TestDecodeObjects(t *testing.T) {
	docs := []byte(`---
apiVersion: v1
kind: Namespace
metadata:
  name: argo
---
# only a comment
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a, namespace: argo}
- apiVersion: v1
  kind: ServiceAccount
  metadata: {name: b}
`)
	objs, err := decodeObjects(docs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+" "+objectName(o))
	}
	want := []string{"Namespace argo", "ConfigMap argo/a", "ServiceAccount b"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("decoded %q, want %q", got, want)
	}

	for name, bad := range map[string]string{
		"no kind": "apiVersion: v1\nmetadata: {name: x}\n",
		"no name": "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: x-}\n",
		"invalid": "apiVersion: [\n",
	} {
		if _, err := decodeObjects([]byte(bad)); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}

func TestTailLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb\nc", 5, "a\nb\nc"},
		{"", 3, ""},
	} {
		if got := tailLines([]byte(tc.in), tc.n); got != tc.want {
			t.Errorf("tailLines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestOptionsWithoutBinDir(t *testing.T) {
	t.Setenv(EnvToolsBin, "")
	_, err := Options{}.withDefaults()
	if err == nil || !strings.Contains(err.Error(), "run: make tools") {
		t.Fatalf("err = %v, want one that says run: make tools", err)
	}
	t.Setenv(EnvToolsBin, t.TempDir())
	_, err = Options{}.withDefaults()
	if err == nil || !strings.Contains(err.Error(), "missing etcd") {
		t.Fatalf("err = %v, want one about the missing etcd binary", err)
	}
}

func TestRemoveStaleDirs(t *testing.T) {
	tmp := t.TempDir()
	now := time.Now()
	old := now.Add(-time.Hour)
	mk := func(name, pids string, mtime time.Time, kept bool) string {
		dir := filepath.Join(tmp, stateDirPrefix+name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if pids != "" {
			p := filepath.Join(dir, filePIDs)
			if err := os.WriteFile(p, []byte(pids), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
		if kept {
			if err := os.WriteFile(filepath.Join(dir, fileKept), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	dead := deadPID(t)
	alive := fmt.Sprintf("etcd %d\nkube-apiserver %d\n", dead, os.Getpid())
	deadOnly := fmt.Sprintf("etcd %d\n", dead)

	stale := mk("stale", deadOnly, old, false)
	keep := map[string]string{
		"alive":    mk("alive", alive, old, false),
		"recent":   mk("recent", deadOnly, now, false),
		"starting": mk("starting", "", old, false),
		"kept":     mk("kept", deadOnly, old, true),
		"garbled":  mk("garbled", "etcd x\n", old, false),
	}
	other := filepath.Join(tmp, "unrelated")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	keep["unrelated"] = other

	removeStaleDirs(tmp, now)

	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale dir not removed (stat: %v)", err)
	}
	for name, dir := range keep {
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("%s dir removed: %v", name, err)
		}
	}
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestKWOKLogsCRDIsThePinnedOne(t *testing.T) {
	// go mod download, not go list -m: on a machine whose module cache
	// lacks the module (a brand-new one: the unit tier runs before make
	// tools downloads it), go list names no directory.
	cmd := exec.Command("go", "mod", "download", "-json", "sigs.k8s.io/kwok")
	cmd.Dir = filepath.Join("..", "..", "hack", "tools", "kwok")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download sigs.k8s.io/kwok in hack/tools/kwok: %v", err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download -json sigs.k8s.io/kwok: no dir (%v) in %s", err, out)
	}
	want, err := os.ReadFile(filepath.Join(m.Dir, "kustomize", "crd", "bases", "kwok.x-k8s.io_logs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kwokLogsCRD, want) {
		t.Error("e2e/cluster/kwok-logs-crd.yaml differs from the pinned KWOK module's Logs CRD: copy it again")
	}
}

// A refused connection is tried again until the address listens (the API
// server back from a restart), and refused at once when the cluster is
// stopped.
func TestDialWaitsOutARestart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // refused from now on, until listened on again

	c := &Cluster{}
	back := make(chan net.Listener, 1)
	go func() {
		time.Sleep(600 * time.Millisecond)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
		}
		back <- l
	}()
	start := time.Now()
	conn, err := c.dial(t.Context(), "tcp", addr)
	l = <-back
	if l == nil {
		t.Fatal("the address could not be listened on again")
	}
	defer l.Close()
	if err != nil {
		t.Fatalf("dial while the address came back: %v", err)
	}
	conn.Close()
	if waited := time.Since(start); waited < 500*time.Millisecond {
		t.Errorf("connected after %v, before the address listened again", waited)
	}

	l.Close()
	c.stopped.Store(true)
	start = time.Now()
	if conn, err := c.dial(t.Context(), "tcp", addr); err == nil {
		conn.Close()
		t.Fatal("a stopped cluster's address was dialled")
	}
	if waited := time.Since(start); waited > 100*time.Millisecond {
		t.Errorf("a stopped cluster's refused connection took %v", waited)
	}
}
