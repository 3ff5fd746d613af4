package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
)

// Stop deletes the node's pods and waits for their containers to be gone,
// stops the kubelet, CoreDNS and containerd, and undoes every change to
// the host in the order real-node.md gives: unmounts, iptables chains,
// sysctls, the bridge. It goes on past errors and returns them all.
//
// The pods' deletion has stopTimeout; the rest has a time of its own, so
// that pods that would not go never keep the host from being restored.
func (n *Node) Stop() error {
	start := time.Now()
	var errs []error
	if n.kubelet != nil && n.kubelet.exited() == nil {
		n.step("stopping: cordoning %s and deleting its pods", Name)
		podsCtx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		errs = append(errs, n.cordon(podsCtx), n.deletePods(podsCtx))
		cancel()
	}
	ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	n.step("stopping the kubelet, CoreDNS, containerd")
	for _, p := range []*proc{n.kubelet, n.coredns} {
		if p != nil {
			errs = append(errs, p.stop(10*time.Second))
		}
	}
	if n.client != nil {
		err := n.client.CoreV1().Nodes().Delete(ctx, Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete node %s: %w", Name, err))
		}
	}
	// The kubelet bind-mounts its root dir onto itself: unmount it
	// before containerd stops, as real-node.md says.
	errs = append(errs, unmountWhere(under(n.layout.kubeletRoot())))
	if n.containerd != nil {
		errs = append(errs, n.containerd.stop(10*time.Second))
	}
	n.step("restoring the host: mounts, iptables chains, sysctls, %s", Bridge)
	errs = append(errs, restoreHost(ctx, n.layout.dir, n.host, n.opts.KeepDir))
	n.step("stopped in %.1fs", time.Since(start).Seconds())
	return errors.Join(errs...)
}

// cordon marks the node unschedulable, as kubectl drain does first: a
// pod deleted next that a controller replaces (a Deployment's) is not
// bound to this node again, where it would keep a container running.
func (n *Node) cordon(ctx context.Context) error {
	patch := []byte(`{"spec":{"unschedulable":true}}`)
	if _, err := n.client.CoreV1().Nodes().Patch(ctx, Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("cordon %s: %w", Name, err)
	}
	return nil
}

// deletePods deletes every pod bound to the node and waits until the
// kubelet has confirmed each deletion (its containers are stopped) and
// containerd runs no task; a pod still there after half the time is
// deleted with force.
func (n *Node) deletePods(ctx context.Context) error {
	onNode := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", Name).String()}
	pods, err := n.client.CoreV1().Pods("").List(ctx, onNode)
	if err != nil {
		return fmt.Errorf("list the pods of %s: %w", Name, err)
	}
	grace := int64(1)
	for _, p := range pods.Items {
		err := n.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	gentle, cancel := context.WithTimeout(ctx, stopTimeout/2)
	defer cancel()
	gone := func(ctx context.Context) error {
		pods, err := n.client.CoreV1().Pods("").List(ctx, onNode)
		if err != nil {
			return err
		}
		if len(pods.Items) > 0 {
			var left []string
			for _, p := range pods.Items {
				left = append(left, fmt.Sprintf("%s/%s (%s, finalizers %v)", p.Namespace, p.Name, p.Status.Phase, p.Finalizers))
			}
			return fmt.Errorf("%d pods left: %s", len(pods.Items), strings.Join(left, ", "))
		}
		return nil
	}
	if err := poll(gentle, nil, "the pods of "+Name+" to be deleted", gone); err != nil {
		n.step("deleting with force: %v", err)
		force := int64(0)
		pods, _ := n.client.CoreV1().Pods("").List(ctx, onNode)
		for _, p := range pods.Items {
			_ = n.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &force})
		}
	}
	return poll(ctx, nil, "containerd to run no task", func(ctx context.Context) error {
		out, err := n.ctr(ctx, "tasks", "list")
		if err != nil {
			return err
		}
		if running := strings.Count(out, "RUNNING"); running > 0 {
			return fmt.Errorf("%d tasks run", running)
		}
		return nil
	})
}
