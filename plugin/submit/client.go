package submit

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Client is how spark-submit reaches the API server: as the plugin itself
// does, with the plugin's credentials.
type Client struct {
	// Master is the API server's URL, spark-submit's --master without
	// k8s://.
	Master string
	// Kubeconfig is a file with the plugin's rest config, which
	// spark-submit's Kubernetes client reads (KUBECONFIG).
	Kubeconfig string
	// AuthConf are the spark.kubernetes.authenticate.submission.* keys for
	// the credentials the rest config keeps in files (in a cluster: the
	// service account's token and CA), which Spark reads afresh at every
	// submission, so a rotated token is used.
	AuthConf map[string]string
}

// KubeconfigFileName is the kubeconfig NewClient writes.
const KubeconfigFileName = "kubeconfig"

// NewClient writes cfg as a kubeconfig into dir (readable by the plugin's
// user only) and returns the Client for it.
func NewClient(cfg *rest.Config, dir string) (Client, error) {
	raw, err := Kubeconfig(cfg)
	if err != nil {
		return Client{}, err
	}
	path := filepath.Join(dir, KubeconfigFileName)
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return Client{}, fmt.Errorf("write spark-submit's kubeconfig: %w", err)
	}
	return ClientFor(cfg, path), nil
}

// ClientFor is the Client of cfg, whose kubeconfig is the file kubeconfig
// (NewClient writes it there; sparkplug render names it without writing).
func ClientFor(cfg *rest.Config, kubeconfig string) Client {
	c := Client{Master: MasterURL(cfg.Host), Kubeconfig: kubeconfig, AuthConf: map[string]string{}}
	for k, v := range map[string]string{
		ConfAuthOAuthTokenFile: cfg.BearerTokenFile,
		ConfAuthCACertFile:     cfg.CAFile,
		ConfAuthClientCertFile: cfg.CertFile,
		ConfAuthClientKeyFile:  cfg.KeyFile,
	} {
		if v != "" {
			c.AuthConf[k] = v
		}
	}
	return c
}

// Kubeconfig renders a rest config as a kubeconfig with one context.
func Kubeconfig(cfg *rest.Config) ([]byte, error) {
	const name = "sparkplug"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   MasterURL(cfg.Host),
		CertificateAuthority:     cfg.CAFile,
		CertificateAuthorityData: cfg.CAData,
		InsecureSkipTLSVerify:    cfg.Insecure,
		TLSServerName:            cfg.ServerName,
	}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{
		Token:                 cfg.BearerToken,
		TokenFile:             cfg.BearerTokenFile,
		ClientCertificate:     cfg.CertFile,
		ClientCertificateData: cfg.CertData,
		ClientKey:             cfg.KeyFile,
		ClientKeyData:         cfg.KeyData,
		Username:              cfg.Username,
		Password:              cfg.Password,
		Exec:                  cfg.ExecProvider,
		AuthProvider:          cfg.AuthProvider,
	}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	raw, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("encode spark-submit's kubeconfig: %w", err)
	}
	return raw, nil
}
