package scope

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The caches keep objects without their managedFields, and with all else.
func TestDropManagedFields(t *testing.T) {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "d", Labels: map[string]string{"spark-role": "driver"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-scheduler"}, {Manager: "kubelet"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	got, err := dropManagedFields(p)
	if err != nil {
		t.Fatal(err)
	}
	gp := got.(*corev1.Pod)
	if len(gp.ManagedFields) != 0 {
		t.Errorf("managedFields kept: %v", gp.ManagedFields)
	}
	if gp.Name != "d" || gp.Labels["spark-role"] != "driver" || gp.Status.Phase != corev1.PodRunning {
		t.Errorf("more than managedFields dropped: %+v", gp)
	}
	// Not an object (a tombstone of a deleted one): passed on as it is.
	if got, err := dropManagedFields("x"); err != nil || got != "x" {
		t.Errorf("dropManagedFields(\"x\") = %v, %v", got, err)
	}
}
