package kube

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// RESTConfig loads kubeconfig, or the in-cluster ServiceAccount's config
// when kubeconfig is empty.
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster config (set --kubeconfig outside a cluster): %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
	}
	return cfg, nil
}

// retryReadiness is how long WatchReadiness waits between tries.
var retryReadiness = 2 * time.Second

// WatchReadiness asks the API server for its version until it answers or
// ctx ends, passing each try's outcome to set (nil once it answered): a
// process is ready once it can reach the API server.
func WatchReadiness(ctx context.Context, kube kubernetes.Interface, set func(error), log *slog.Logger) {
	for {
		_, err := kube.Discovery().ServerVersion()
		set(err)
		if err == nil {
			return
		}
		log.Warn("API server not reachable yet", "error", err.Error())
		select {
		case <-ctx.Done():
			return
		case <-time.After(retryReadiness):
		}
	}
}

// Argo's words for the agent pod (workflow/common in the Argo module).
const (
	// LabelWorkflow names the workflow of an agent pod.
	LabelWorkflow = spark.ArgoLabelWorkflow
)

// AgentWorkflow is the workflow whose agent pod namespace/pod is: its
// name from the pod's workflows.argoproj.io/workflow label (the label
// the downward API would give), its uid from the pod's controller owner
// reference, a Workflow (Argo's controller creates the agent pod so).
// A sidecar knows its workflow from it at start, before any request.
func AgentWorkflow(ctx context.Context, kube kubernetes.Interface, namespace, pod string) (name, uid string, err error) {
	p, err := kube.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		return "", "", fmt.Errorf("read the agent pod %s/%s: %w", namespace, pod, err)
	}
	name = p.Labels[LabelWorkflow]
	if name != "" {
		uid = identity.WorkflowOwnerUID(p.OwnerReferences, name, true)
	}
	if name == "" || uid == "" {
		return "", "", fmt.Errorf("pod %s/%s is not an Argo agent pod: it lacks the %s label or a Workflow of that name as its controller", namespace, pod, LabelWorkflow)
	}
	return name, uid, nil
}

// TokenServiceAccount is the name of the ServiceAccount whose token cfg
// authenticates with, "" when cfg has no ServiceAccount token (a
// kubeconfig with a client certificate). The token names it in its
// subject, system:serviceaccount:<namespace>:<name>, for bound and legacy
// tokens alike; it is this process's own credential, so its claims are
// read, not verified. This is the identity whose rights a Spark pod must
// never borrow (package policy), whatever the install named it: the agent
// pod's own serviceAccountName is the workflow's, not the plugin's.
func TokenServiceAccount(cfg *rest.Config) string {
	token := cfg.BearerToken
	if token == "" && cfg.BearerTokenFile != "" {
		raw, err := os.ReadFile(cfg.BearerTokenFile)
		if err != nil {
			return ""
		}
		token = strings.TrimSpace(string(raw))
	}
	return ServiceAccountOfToken(token)
}

// maxTokenBytes bounds the token read: a ServiceAccount token is a few
// kilobytes.
const maxTokenBytes = 64 << 10

// ServiceAccountOfToken is the ServiceAccount a JWT's subject names, ""
// when it names none.
func ServiceAccountOfToken(token string) string {
	parts := strings.Split(token, ".")
	if len(token) > maxTokenBytes || len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return ""
	}
	var claims struct {
		Sub string `json:"sub"`
	}
	if json.Unmarshal(payload, &claims) != nil {
		return ""
	}
	rest, ok := strings.CutPrefix(claims.Sub, "system:serviceaccount:")
	if !ok {
		return ""
	}
	_, name, ok := strings.Cut(rest, ":")
	if !ok || name == "" {
		return ""
	}
	return name
}

// DeletePod deletes pod p, that very pod (by uid): a driver sparkplug
// stops, sweeps or expires. One already gone, or replaced by a pod of its
// name, is no error; deleted says whether this call deleted it, so a
// caller reports only what it did.
func DeletePod(ctx context.Context, kube kubernetes.Interface, p *corev1.Pod) (deleted bool, err error) {
	uid := p.UID
	err = kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return false, nil
	}
	return err == nil, err
}

// DeletePodWhile deletes p while still holds of it: p as the caller saw
// it, and, when the pod changed since (its resourceVersion moved, the API
// server answered 409), the pod as it is now, read again by name, if it
// is still that pod (its uid) and still holds. A caller whose reason to
// delete rests on a pod's state (a driver still running when its
// workflow ended) never deletes one that left that state meanwhile (a
// driver that finished) on a stale view of it. The pod is read with
// list, which every caller's Role grants; a pod that changed on every
// one of a few tries is left, not deleted, for a later look.
func DeletePodWhile(ctx context.Context, kube kubernetes.Interface, p *corev1.Pod, still func(*corev1.Pod) bool) (deleted bool, err error) {
	pods := kube.CoreV1().Pods(p.Namespace)
	uid := p.UID
	for range deleteTries {
		rv := p.ResourceVersion
		err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsNotFound(err):
			return false, nil
		case !apierrors.IsConflict(err):
			return false, err
		}
		now, err := pods.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + p.Name})
		if err != nil {
			return false, err
		}
		if len(now.Items) != 1 || now.Items[0].UID != uid || !still(&now.Items[0]) {
			return false, nil
		}
		p = &now.Items[0]
	}
	return false, nil
}

// deleteTries bounds DeletePodWhile's reads of a pod that keeps changing.
const deleteTries = 3
