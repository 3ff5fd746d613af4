//go:build e2e

package kueue

import (
	"context"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/cluster"
)

// Kueue's kinds, in the version sparkplug's Workloads use.
var (
	gvrWorkload       = kueueGVR("workloads")
	gvrClusterQueue   = kueueGVR("clusterqueues")
	gvrLocalQueue     = kueueGVR("localqueues")
	gvrResourceFlavor = kueueGVR("resourceflavors")
	gvrPriorityClass  = kueueGVR("workloadpriorityclasses")
)

func kueueGVR(resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: resource}
}

// The contract's words: what a step sets, what sparkplug stamps. Written
// out, not taken from package kueue: they are Kueue's names, and the
// tests check that sparkplug uses them.
const (
	labelQueueName     = "kueue.x-k8s.io/queue-name"
	labelPriorityClass = "kueue.x-k8s.io/priority-class"
	annotationWorkload = "kueue.x-k8s.io/workload"
	labelPodSet        = "kueue.x-k8s.io/podset"
)

// An application as sparkplug's examples size it (examples/spark-pi.yaml):
// a driver of 1 core and 512m, two executors of 1 core and 512m each. Spark
// adds at least 384 MiB of overhead to each, so one application asks for
// 3 CPUs and 3 x 896 MiB = 2688 MiB.
const (
	appCPU = "3"
	// appMemoryRoom holds one application's 2688 MiB and not two (5376 MiB).
	appMemoryRoom = "4Gi"
)

// shortID is a name part unique to the test: a readable start and a hash.
func shortID(t *testing.T) string {
	h := fnv.New32a()
	h.Write([]byte(t.Name()))
	name := strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(strings.TrimPrefix(t.Name(), "Test"), "-"))
	if len(name) > 20 {
		name = name[:20]
	}
	return fmt.Sprintf("%s-%08x", strings.Trim(name, "-"), h.Sum32())
}

// queueSpec is what a test's ClusterQueue offers.
type queueSpec struct {
	// CPU and Memory are the flavour's nominal quota.
	CPU, Memory string
	// Preempt lets a Workload of higher priority preempt lower ones in the
	// ClusterQueue.
	Preempt bool
	// NodeLabels and Tolerations are the ResourceFlavor's.
	NodeLabels  map[string]string
	Tolerations []corev1.Toleration
}

// queue is a test's ResourceFlavor, ClusterQueue and LocalQueue (in the
// environment's namespace), all deleted after the test.
type queue struct {
	Flavor, ClusterQueue, LocalQueue string
}

// newQueue creates the test's queue and waits until the ClusterQueue and
// the LocalQueue are active.
func newQueue(t *testing.T, s queueSpec) queue {
	t.Helper()
	id := shortID(t)
	q := queue{Flavor: "rf-" + id, ClusterQueue: "cq-" + id, LocalQueue: "lq-" + id}
	flavor := map[string]any{}
	if len(s.NodeLabels) > 0 {
		flavor["nodeLabels"] = s.NodeLabels
	}
	if len(s.Tolerations) > 0 {
		flavor["tolerations"] = s.Tolerations
	}
	cq := map[string]any{
		"namespaceSelector": map[string]any{},
		"resourceGroups": []any{map[string]any{
			"coveredResources": []any{"cpu", "memory"},
			"flavors": []any{map[string]any{
				"name": q.Flavor,
				"resources": []any{
					map[string]any{"name": "cpu", "nominalQuota": s.CPU},
					map[string]any{"name": "memory", "nominalQuota": s.Memory},
				},
			}},
		}},
	}
	if s.Preempt {
		cq["preemption"] = map[string]any{"withinClusterQueue": "LowerPriority"}
	}
	create(t, gvrResourceFlavor, "", "ResourceFlavor", q.Flavor, flavor)
	create(t, gvrClusterQueue, "", "ClusterQueue", q.ClusterQueue, cq)
	create(t, gvrLocalQueue, env.Namespace, "LocalQueue", q.LocalQueue, map[string]any{"clusterQueue": q.ClusterQueue})
	waitActive(t, gvrClusterQueue, "", q.ClusterQueue)
	waitActive(t, gvrLocalQueue, env.Namespace, q.LocalQueue)
	return q
}

// newPriorityClass creates a WorkloadPriorityClass, deleted after the test.
func newPriorityClass(t *testing.T, name string, value int64) string {
	t.Helper()
	create(t, gvrPriorityClass, "", "WorkloadPriorityClass", name, nil, func(o map[string]any) {
		o["value"] = value
		o["description"] = "e2e " + t.Name()
	})
	return name
}

// create creates a Kueue object of kind with spec (through Kueue's
// webhooks, which must answer: they fail closed) and deletes it after the
// test. edit changes the object before it is created.
func create(t *testing.T, gvr schema.GroupVersionResource, ns, kind, name string, spec map[string]any, edit ...func(map[string]any)) {
	t.Helper()
	obj := map[string]any{
		"apiVersion": gvr.GroupVersion().String(),
		"kind":       kind,
		"metadata":   map[string]any{"name": name},
	}
	if spec != nil {
		obj["spec"] = spec
	}
	for _, e := range edit {
		e(obj)
	}
	u := &unstructured.Unstructured{Object: obj}
	client := env.Cluster.Dynamic.Resource(gvr)
	ctx := context.Background()
	if ns != "" {
		if _, err := client.Namespace(ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s %s/%s: %v", kind, ns, name, err)
		}
		t.Cleanup(func() { _ = client.Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}) })
		return
	}
	if _, err := client.Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s %s: %v", kind, name, err)
	}
	t.Cleanup(func() { _ = client.Delete(context.Background(), name, metav1.DeleteOptions{}) })
}

// waitActive waits until a ClusterQueue or LocalQueue says Active=True.
func waitActive(t *testing.T, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	var last *unstructured.Unstructured
	waitFor(t, fmt.Sprintf("%s %s to be active", gvr.Resource, name), func() bool {
		var err error
		if ns != "" {
			last, err = env.Cluster.Dynamic.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
		} else {
			last, err = env.Cluster.Dynamic.Resource(gvr).Get(context.Background(), name, metav1.GetOptions{})
		}
		if err != nil {
			return false
		}
		c, ok := condition(last, "Active")
		return ok && c.Status == "True"
	}, func() string { return fmt.Sprint(last) })
}

// waitFor polls done until it holds, failing the test after
// framework.DefaultTimeout or when a process of the environment died;
// state, on failure, says what was seen last.
func waitFor(t *testing.T, what string, done func() bool, state func() string) {
	t.Helper()
	start := time.Now()
	for !done() {
		if time.Since(start) > 2*time.Minute {
			t.Fatalf("timed out waiting for %s; last seen: %s", what, state())
		}
		if err := env.CheckAlive(); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("%s after %v", what, time.Since(start).Round(100*time.Millisecond))
}

// cond is a status condition of a Kueue object.
type cond struct {
	Type, Status, Reason, Message string
	LastTransitionTime            time.Time
}

// condition returns obj's status condition of type typ.
func condition(obj *unstructured.Unstructured, typ string) (cond, bool) {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != typ {
			continue
		}
		out := cond{Type: typ}
		out.Status, _ = m["status"].(string)
		out.Reason, _ = m["reason"].(string)
		out.Message, _ = m["message"].(string)
		if s, _ := m["lastTransitionTime"].(string); s != "" {
			out.LastTransitionTime, _ = time.Parse(time.RFC3339, s)
		}
		return out, true
	}
	return cond{}, false
}

// isTrue reports whether obj's condition typ is True.
func isTrue(obj *unstructured.Unstructured, typ string) bool {
	c, ok := condition(obj, typ)
	return ok && c.Status == "True"
}

// queueName is a Workload's spec.queueName.
func queueName(wl *unstructured.Unstructured) string {
	s, _, _ := unstructured.NestedString(wl.Object, "spec", "queueName")
	return s
}

// admittedCount is the count Kueue admitted for a Workload's pod set.
func admittedCount(wl *unstructured.Unstructured, podSet string) (int64, bool) {
	psas, _, _ := unstructured.NestedSlice(wl.Object, "status", "admission", "podSetAssignments")
	for _, p := range psas {
		m, _ := p.(map[string]any)
		if m["name"] != podSet {
			continue
		}
		n, ok, _ := unstructured.NestedInt64(m, "count")
		return n, ok
	}
	return 0, false
}

// podSet returns a Workload's pod set by name.
func podSet(wl *unstructured.Unstructured, name string) (map[string]any, bool) {
	sets, _, _ := unstructured.NestedSlice(wl.Object, "spec", "podSets")
	for _, s := range sets {
		m, _ := s.(map[string]any)
		if m["name"] == name {
			return m, true
		}
	}
	return nil, false
}

// newPoolNode registers a KWOK node of its own, labelled and tainted as
// given, deleted after the test.
func newPoolNode(t *testing.T, name string, nodeLabels map[string]string, taint corev1.Taint) {
	t.Helper()
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("100"),
		corev1.ResourceMemory: resource.MustParse("1Ti"),
		corev1.ResourcePods:   resource.MustParse("100"),
	}
	l := map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok"}
	for k, v := range nodeLabels {
		l[k] = v
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      l,
			Annotations: map[string]string{cluster.KWOKNodeAnnotation: "fake", "node.alpha.kubernetes.io/ttl": "0"},
		},
		Spec:   corev1.NodeSpec{Taints: []corev1.Taint{taint}},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
	ctx := context.Background()
	if _, err := env.Kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create node %s: %v", name, err)
	}
	t.Cleanup(func() { _ = env.Kube.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	var last *corev1.Node
	waitFor(t, "node "+name+" to be Ready and schedulable", func() bool {
		n, err := env.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		last = n
		for _, tn := range n.Spec.Taints {
			if tn.Key != taint.Key {
				return false // not-ready and unreachable taints go once it is Ready
			}
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue
			}
		}
		return false
	}, func() string { return fmt.Sprintf("%+v %+v", last.Spec.Taints, last.Status.Conditions) })
}

// configMap reads a ConfigMap of the namespace.
func configMap(t *testing.T, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := env.Kube.CoreV1().ConfigMaps(env.Namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get ConfigMap %s: %v", name, err)
	}
	return cm
}

// podSpecOf decodes the spec of a pod template (a Pod or a
// PodTemplateSpec, as Spark reads either).
func podSpecOf(t *testing.T, text string) corev1.PodSpec {
	t.Helper()
	var tmpl struct {
		Spec corev1.PodSpec `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(text), &tmpl); err != nil {
		t.Fatalf("decode pod template: %v\n%s", err, text)
	}
	return tmpl.Spec
}
