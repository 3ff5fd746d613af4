package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkplug-io/sparkplug/e2e/argo"
)

// Confined is an identity that may do anything in its namespaces and
// nothing in any other, nor to anything cluster-wide: a team's
// administrator, as a platform team grants it. What it installs provably
// touches no other namespace: the API server refuses it.
type Confined struct {
	// Name is the ServiceAccount's, in the first namespace.
	Name string
	// Namespaces are where it may act.
	Namespaces []string
	// Kubeconfig reaches the API server with its token (for kubectl and
	// helm).
	Kubeconfig string
	// Kube is a client with its token.
	Kube kubernetes.Interface
}

// Confine makes the namespaces (if missing) and an identity confined to
// them: ServiceAccount name in the first, bound in each to the built-in
// ClusterRole cluster-admin by a RoleBinding, which grants it in that
// namespace only.
func (e *Env) Confine(ctx context.Context, name string, namespaces ...string) (*Confined, error) {
	if len(namespaces) == 0 {
		return nil, fmt.Errorf("confine %s: no namespace", name)
	}
	for _, ns := range namespaces {
		if err := argo.EnsureNamespace(ctx, e.Cluster, ns); err != nil {
			return nil, err
		}
	}
	home := namespaces[0]
	if err := e.Cluster.EnsureServiceAccount(ctx, home, name); err != nil {
		return nil, err
	}
	for _, ns := range namespaces {
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: home}}}
		if _, err := e.Kube.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("bind %s in %s: %w", name, ns, err)
		}
	}
	cfg, err := e.Cluster.ConfigForServiceAccount(ctx, home, name)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(e.dir, "confined")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, home+"-"+name+".kubeconfig")
	if err := e.Cluster.WriteTokenKubeconfig(kubeconfig, name, cfg.BearerToken); err != nil {
		return nil, err
	}
	return &Confined{Name: name, Namespaces: namespaces, Kubeconfig: kubeconfig, Kube: kube}, nil
}

// PrepareJobNamespace is the part of a job namespace's setup that is
// Argo's and Spark's, not sparkplug's (the README's install step 3), done
// as the environment's own namespace has it: the drivers' ServiceAccount
// spark and the agent's rights for the workflows' default ServiceAccount.
func (e *Env) PrepareJobNamespace(ctx context.Context, namespace string) error {
	if err := e.Cluster.EnsureServiceAccount(ctx, namespace, SparkServiceAccount); err != nil {
		return err
	}
	return argo.InstallAgentRBAC(ctx, e.Cluster, e.moduleDir, namespace, "default")
}
