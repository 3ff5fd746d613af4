package cluster

import (
	"context"
	"fmt"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
	"sigs.k8s.io/yaml"
)

// serviceAccountTokenTTL is the lifetime of tokens made by
// ConfigForServiceAccount: longer than any test run.
const serviceAccountTokenTTL = 24 * time.Hour

// renderKubeconfig returns a kubeconfig that reaches server with a bearer
// token. The server's certificate is self-signed, so TLS is not verified:
// this is a throwaway cluster on loopback.
func renderKubeconfig(server, user, token string) ([]byte, error) {
	const name = "sparkplug"
	cfg := clientcmdv1.Config{
		APIVersion:     "v1",
		Kind:           "Config",
		CurrentContext: name,
		Clusters: []clientcmdv1.NamedCluster{{
			Name:    name,
			Cluster: clientcmdv1.Cluster{Server: server, InsecureSkipTLSVerify: true},
		}},
		AuthInfos: []clientcmdv1.NamedAuthInfo{{
			Name:     user,
			AuthInfo: clientcmdv1.AuthInfo{Token: token},
		}},
		Contexts: []clientcmdv1.NamedContext{{
			Name:    name,
			Context: clientcmdv1.Context{Cluster: name, AuthInfo: user},
		}},
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("render kubeconfig: %w", err)
	}
	return b, nil
}

// configForToken is the rest.Config matching renderKubeconfig, for a
// client in the test's process (which waits out an API server's restart:
// dial).
func (c *Cluster) configForToken(server, token string) *rest.Config {
	return &rest.Config{
		Host:            server,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		QPS:             100,
		Burst:           200,
		Dial:            c.dial,
	}
}

// ConfigForServiceAccount returns a config for the same server that
// authenticates as the ServiceAccount namespace/name, with a token from the
// TokenRequest API. The ServiceAccount must exist.
func (c *Cluster) ConfigForServiceAccount(ctx context.Context, namespace, name string) (*rest.Config, error) {
	token, err := c.serviceAccountToken(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return c.configForToken(c.Config.Host, token), nil
}

// WriteServiceAccountKubeconfig writes to path a kubeconfig that
// authenticates as the ServiceAccount namespace/name, for processes the tests
// start (the plugin, argoexec).
func (c *Cluster) WriteServiceAccountKubeconfig(ctx context.Context, namespace, name, path string) error {
	token, err := c.serviceAccountToken(ctx, namespace, name)
	if err != nil {
		return err
	}
	b, err := renderKubeconfig(c.Config.Host, "system:serviceaccount:"+namespace+":"+name, token)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write kubeconfig of %s/%s: %w", namespace, name, err)
	}
	return nil
}

func (c *Cluster) serviceAccountToken(ctx context.Context, namespace, name string) (string, error) {
	ttl := int64(serviceAccountTokenTTL / time.Second)
	req := &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &ttl},
	}
	resp, err := c.Client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("request token of service account %s/%s: %w", namespace, name, err)
	}
	return resp.Status.Token, nil
}
