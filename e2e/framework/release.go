package framework

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
)

// InstallRelease installs sparkplug from a release into namespace as its
// README tells a user to: the release's install bundle (its plugin
// ConfigMap runs the released image, pinned by digest), the drivers'
// ServiceAccount spark with the Role the release chart gives drivers to
// manage their executors (templates/driver-rbac.yaml). And what Argo's
// quick-start install gives the workflows' default ServiceAccount: the
// agent Role, the executor Role (a container step's wait container writes
// WorkflowTaskResults), and the token Secret default.service-account-token,
// which Argo mounts into the agent pod by that name (a kubelet does not
// start the pod without it). install and chart are the release's
// sparkplug-VERSION-install.yaml and chart archive.
func (e *Env) InstallRelease(ctx context.Context, namespace, install, chart string) error {
	if err := argo.EnsureNamespace(ctx, e.Cluster, namespace); err != nil {
		return err
	}
	b, err := os.ReadFile(install)
	if err != nil {
		return err
	}
	inst, err := placeInstall(b, namespace)
	if err != nil {
		return err
	}
	if err := e.Cluster.Apply(ctx, inst.YAML); err != nil {
		return fmt.Errorf("apply %s: %w", install, err)
	}
	driverRBAC, err := e.Helm(ctx, "template", "sparkplug", chart, "--namespace", namespace,
		"--set", "driver.serviceAccount.create=true", "--show-only", "templates/driver-rbac.yaml")
	if err != nil {
		return err
	}
	if err := e.Cluster.Apply(ctx, []byte(driverRBAC)); err != nil {
		return fmt.Errorf("apply the chart's driver RBAC: %w", err)
	}
	if err := argo.InstallAgentRBAC(ctx, e.Cluster, e.moduleDir, namespace, "default"); err != nil {
		return err
	}
	quickStart := filepath.Join(e.moduleDir, "manifests", "quick-start", "base")
	for _, f := range []string{"executor/emissary/executor-role.yaml", "executor-default-rolebinding.yaml"} {
		b, err := os.ReadFile(filepath.Join(quickStart, f))
		if err != nil {
			return fmt.Errorf("Argo's quick-start: %w", err)
		}
		b = bytes.Replace(b, []byte("metadata:\n"), []byte("metadata:\n  namespace: "+namespace+"\n"), 1)
		if err := e.Cluster.Apply(ctx, b); err != nil {
			return fmt.Errorf("apply Argo's quick-start %s: %w", f, err)
		}
	}
	token := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "default.service-account-token", Namespace: namespace,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: "default"}},
		Type: corev1.SecretTypeServiceAccountToken,
	}
	if _, err := e.Kube.CoreV1().Secrets(namespace).Create(ctx, token, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %s/%s: %w", namespace, token.Name, err)
	}
	return nil
}
