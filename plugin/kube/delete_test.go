package kube

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// DeletePod deletes the pod of that uid only, and says whether it did.
func TestDeletePod(t *testing.T) {
	ctx := context.Background()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "spark-pi-driver", Namespace: "jobs", UID: "driver-uid"}}
	kube := fake.NewClientset(p.DeepCopy())
	// The fake tracker ignores preconditions; the API server answers a
	// uid that does not match with 409 Conflict.
	kube.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.DeleteActionImpl)
		obj, err := kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), d.Namespace, d.Name)
		if err != nil {
			return false, nil, nil
		}
		if pre := d.DeleteOptions.Preconditions; pre != nil && pre.UID != nil && *pre.UID != obj.(*corev1.Pod).UID {
			return true, nil, apierrors.NewConflict(corev1.Resource("pods"), d.Name, errors.New("precondition failed: uid"))
		}
		return false, nil, nil
	})

	replaced := p.DeepCopy()
	replaced.UID = types.UID("another-pod")
	deleted, err := DeletePod(ctx, kube, replaced)
	if err != nil || deleted {
		t.Fatalf("a pod of the name with another uid: deleted %v, %v; want false, nil", deleted, err)
	}
	if _, err := kube.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the pod of the other uid is gone: %v", err)
	}
	if deleted, err = DeletePod(ctx, kube, p); err != nil || !deleted {
		t.Fatalf("Delete = %v, %v; want true, nil", deleted, err)
	}
	if deleted, err = DeletePod(ctx, kube, p); err != nil || deleted {
		t.Fatalf("Delete of a pod already gone = %v, %v; want false, nil", deleted, err)
	}
}
