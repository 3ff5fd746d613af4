package submit

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// In a cluster: the service account's files, which Spark reads at every
// submission, and a kubeconfig with the same.
func TestNewClientInCluster(t *testing.T) {
	cfg := &rest.Config{
		Host:            "https://10.96.0.1:443",
		BearerToken:     "eyJ-token",
		BearerTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
		TLSClientConfig: rest.TLSClientConfig{CAFile: "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"},
	}
	dir := t.TempDir()
	c, err := NewClient(cfg, dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Master != "https://10.96.0.1:443" || c.Kubeconfig != filepath.Join(dir, KubeconfigFileName) {
		t.Errorf("client %+v", c)
	}
	want := map[string]string{
		ConfAuthOAuthTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
		ConfAuthCACertFile:     "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
	}
	if !reflect.DeepEqual(c.AuthConf, want) {
		t.Errorf("auth conf %v, want %v", c.AuthConf, want)
	}
	fi, err := os.Stat(c.Kubeconfig)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig %v mode %v: want 0600", err, fi.Mode())
	}
	kc, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cluster, user := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster], kc.AuthInfos[kc.Contexts[kc.CurrentContext].AuthInfo]
	if cluster.Server != cfg.Host || cluster.CertificateAuthority != cfg.CAFile || user.Token != cfg.BearerToken || user.TokenFile != cfg.BearerTokenFile {
		t.Errorf("kubeconfig reads back as %+v, %+v", cluster, user)
	}
}

// Out of a cluster (tests, a kubeconfig with inline data): the kubeconfig
// carries it, and no file conf is passed.
func TestNewClientInline(t *testing.T) {
	cfg := &rest.Config{
		Host:            "127.0.0.1:6443",
		BearerToken:     "t",
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
	}
	c, err := NewClient(cfg, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if c.Master != "https://127.0.0.1:6443" || len(c.AuthConf) != 0 {
		t.Errorf("client %+v", c)
	}
	back, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if back.Host != "https://127.0.0.1:6443" || back.BearerToken != "t" || !back.Insecure {
		t.Errorf("kubeconfig reads back as %+v", back)
	}
}
