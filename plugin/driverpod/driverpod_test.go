package driverpod

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

func TestExpired(t *testing.T) {
	end := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := func(ttl string, terminated bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{spark.LabelRole: spark.RoleDriver},
			Annotations: map[string]string{},
		}}
		if ttl != "" {
			p.Annotations[spark.AnnotationTTLSeconds] = ttl
		}
		cs := corev1.ContainerStatus{Name: spark.DriverContainerName}
		if terminated {
			cs.State.Terminated = &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(end)}
			p.Status.Phase = corev1.PodSucceeded
		} else {
			cs.State.Running = &corev1.ContainerStateRunning{}
			p.Status.Phase = corev1.PodRunning
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
		return p
	}
	deleting := pod("0", true)
	deleting.DeletionTimestamp = &metav1.Time{Time: end}
	executor := pod("0", true)
	executor.Labels[spark.LabelRole] = spark.RoleExecutor
	cases := []struct {
		name string
		pod  *corev1.Pod
		now  time.Time
		want bool
	}{
		{"finished past its ttl", pod("60", true), end.Add(time.Minute), true},
		{"finished within its ttl", pod("60", true), end.Add(59 * time.Second), false},
		{"ttl 0 expires at once", pod("0", true), end, true},
		{"running drivers never expire", pod("0", false), end.Add(time.Hour), false},
		{"no ttl: lives as long as the workflow", pod("", true), end.Add(1000 * time.Hour), false},
		{"garbage ttl is ignored", pod("soon", true), end.Add(time.Hour), false},
		{"a pod being deleted is already going", deleting, end.Add(time.Hour), false},
		{"executors are not drivers", executor, end.Add(time.Hour), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Expired(tc.pod, tc.now); got != tc.want {
				t.Fatalf("Expired = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFinishedAndEndedAt(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	finishedAt := now.Add(-time.Hour)
	deletedAt := now.Add(-time.Minute)
	terminated := corev1.ContainerStatus{Name: spark.DriverContainerName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(finishedAt)}}}
	running := corev1.ContainerStatus{Name: spark.DriverContainerName,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	cases := []struct {
		name     string
		pod      corev1.Pod
		finished bool
		ended    time.Time
	}{
		{"pending", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}, false, now},
		{"running", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running}}}, false, now},
		{"container terminated, pod still Running", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{terminated}}}, true, finishedAt},
		{"pod Failed without a container status (evicted)", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodFailed}}, true, now},
		{"being deleted", corev1.Pod{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{Time: deletedAt}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running}}}, true, deletedAt},
	}
	for _, tc := range cases {
		if got := Finished(&tc.pod); got != tc.finished {
			t.Errorf("%s: Finished = %v, want %v", tc.name, got, tc.finished)
		}
		if got := EndedAt(&tc.pod, now); !got.Equal(tc.ended) {
			t.Errorf("%s: EndedAt = %v, want %v", tc.name, got, tc.ended)
		}
	}
}

func TestAttempt(t *testing.T) {
	for label, want := range map[string]int{"": 1, "1": 1, "3": 3, "0": 1, "-2": 1, "x": 1} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{}}}
		if label != "" {
			p.Labels[spark.LabelAttempt] = label
		}
		if got := Attempt(p); got != want {
			t.Errorf("Attempt(%q) = %d, want %d", label, got, want)
		}
	}
}

// driver is the driver pod sparkplug makes for node n1's attempt of wf:
// the deterministic name, its labels and annotations, owned by wf.
func driver(wf spark.WorkflowRef, attempt int) *corev1.Pod {
	n := objects.NamesFor(objects.Run{Workflow: wf, NodeID: "n1", Attempt: attempt})
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: n.DriverPod, Namespace: wf.Namespace, UID: "pod-uid",
		Labels: map[string]string{spark.LabelWorkflowUID: wf.UID, spark.LabelRole: spark.RoleDriver,
			spark.LabelAttempt: map[bool]string{true: "1", false: "2"}[attempt == 1]},
		Annotations:     map[string]string{spark.AnnotationNodeID: "n1", spark.AnnotationWorkflowName: wf.Name},
		OwnerReferences: []metav1.OwnerReference{objects.WorkflowOwner(wf)},
	}}
}

// Only the pod sparkplug made is its driver: a pod with the driver's
// labels and annotations copied, but another name or no owner, is not.
func TestOwnDriver(t *testing.T) {
	wf := spark.WorkflowRef{Name: "spark-pi", Namespace: "jobs", UID: "wf-uid"}
	other := spark.WorkflowRef{Name: "spark-pi", Namespace: "jobs", UID: "other-uid"}
	cases := []struct {
		name string
		pod  func() *corev1.Pod
		wf   spark.WorkflowRef
		want bool
	}{
		{"the driver", func() *corev1.Pod { return driver(wf, 1) }, wf, true},
		{"a later attempt's driver", func() *corev1.Pod { return driver(wf, 2) }, wf, true},
		{"copied labels, another name", func() *corev1.Pod { p := driver(wf, 1); p.Name = "forged-driver"; return p }, wf, false},
		{"copied labels and name, no owner", func() *corev1.Pod { p := driver(wf, 1); p.OwnerReferences = nil; return p }, wf, false},
		{"owned by another kind with the uid", func() *corev1.Pod {
			p := driver(wf, 1)
			p.OwnerReferences[0].Kind = "ConfigMap"
			return p
		}, wf, false},
		{"attempt label changed: the name no longer matches", func() *corev1.Pod {
			p := driver(wf, 1)
			p.Labels[spark.LabelAttempt] = "2"
			return p
		}, wf, false},
		{"another workflow of the same name", func() *corev1.Pod { return driver(wf, 1) }, other, false},
		{"no workflow uid", func() *corev1.Pod { return driver(wf, 1) }, spark.WorkflowRef{Name: "spark-pi", Namespace: "jobs"}, false},
	}
	for _, tc := range cases {
		if got := OwnDriver(tc.pod(), tc.wf); got != tc.want {
			t.Errorf("%s: OwnDriver = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := WorkflowOf(driver(wf, 1)); got != wf {
		t.Errorf("WorkflowOf = %+v, want %+v", got, wf)
	}
}

func TestOwnTomb(t *testing.T) {
	wf := spark.WorkflowRef{Name: "spark-pi", Namespace: "jobs", UID: "wf-uid"}
	d := driver(wf, 1)
	cm := &corev1.ConfigMap{ObjectMeta: *d.ObjectMeta.DeepCopy()}
	cm.Name = objects.RunName(d.Name) + "-conf"
	if !OwnTomb(cm, wf) {
		t.Error("the driver's ConfigMap owned by the Workflow (as versions before the tombstone made it) is its tombstone")
	}
	cm.Name = objects.TombstoneName(d.Name)
	if !OwnTomb(cm, wf) {
		t.Error("the tombstone sparkplug creates for the driver is its tombstone")
	}
	cm.Name = d.Name
	if OwnTomb(cm, wf) {
		t.Error("a ConfigMap named as the driver pod is no tombstone")
	}
}

// NotOurs is the one rule for an object found under a run's name: the
// run's labels and one of the owners sparkplug sets, or the reason it
// is not the run's.
func TestNotOurs(t *testing.T) {
	wf := spark.WorkflowRef{Name: "spark-pi", Namespace: "jobs", UID: "wf-uid"}
	d := driver(wf, 1)
	d.UID = "driver-uid"
	byDriver := metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: d.Name, UID: d.UID}
	labels := map[string]string{spark.LabelWorkflowUID: "wf-uid", spark.LabelNode: "n1", spark.LabelAttempt: "1", spark.LabelTemplate: "t"}
	obj := func(change func(*corev1.ConfigMap)) *corev1.ConfigMap {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "run-conf",
			Labels:          map[string]string{spark.LabelWorkflowUID: "wf-uid", spark.LabelNode: "n1", spark.LabelAttempt: "1"},
			OwnerReferences: []metav1.OwnerReference{byDriver}}}
		if change != nil {
			change(cm)
		}
		return cm
	}
	cases := []struct {
		name string
		cm   *corev1.ConfigMap
		want string // "" : ours
	}{
		{"the run's", obj(nil), ""},
		{"owned by the Workflow, which may own it too", obj(func(c *corev1.ConfigMap) { c.OwnerReferences = []metav1.OwnerReference{objects.WorkflowOwner(wf)} }), ""},
		{"another template label says nothing of the run", obj(func(c *corev1.ConfigMap) { c.Labels[spark.LabelTemplate] = "u" }), ""},
		{"another name", obj(func(c *corev1.ConfigMap) { c.Name = "other" }), "its name is not run-conf"},
		{"no labels", obj(func(c *corev1.ConfigMap) { c.Labels = nil }), `its label sparkplug.io/workflow-uid is "", not this run's "wf-uid"`},
		{"another attempt's", obj(func(c *corev1.ConfigMap) { c.Labels[spark.LabelAttempt] = "2" }), `its label sparkplug.io/attempt is "2", not this run's "1"`},
		{"copied labels, no owner", obj(func(c *corev1.ConfigMap) { c.OwnerReferences = nil }), "it is not owned by Pod " + d.Name + " (uid driver-uid) or Workflow spark-pi (uid wf-uid)"},
		{"owned by another pod of the driver's name", obj(func(c *corev1.ConfigMap) { c.OwnerReferences[0].UID = "earlier-driver" }), "it is not owned by"},
		{"the driver's uid under another kind", obj(func(c *corev1.ConfigMap) { c.OwnerReferences[0].Kind = "Service" }), "it is not owned by"},
	}
	for _, tc := range cases {
		err := NotOurs(tc.cm, "run-conf", labels, byDriver, objects.WorkflowOwner(wf))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want ours", tc.name, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// An owner without a uid (an object the API server never returned)
	// owns nothing.
	noUID := obj(func(c *corev1.ConfigMap) { c.OwnerReferences[0].UID = "" })
	if err := NotOurs(noUID, "run-conf", labels, metav1.OwnerReference{Kind: "Pod", Name: d.Name}); err == nil {
		t.Error("an empty uid matched an empty uid")
	}
}
