//go:build e2e

package e2e

// Squatting: a run's names are a hash of its workflow's uid, node id and
// start time, which anyone who may read the Workflow knows. Someone who
// may only create ConfigMaps, Services or pods in the namespace (a second
// ServiceAccount) makes one in advance under a run's name: the run's
// attempt fails naming it, and it is left as it was.

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/plugin/nodestatus"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

var (
	squatterOnce   sync.Once
	squatterKube   kubernetes.Interface
	squatterErr    error
	squatterRights = []string{"configmaps", "services", "pods"}
)

// squatter is a client of ServiceAccount "squatter" of the e2e namespace,
// which may create ConfigMaps, Services and pods there, and nothing else.
func squatter(t *testing.T) kubernetes.Interface {
	t.Helper()
	squatterOnce.Do(func() {
		ctx := context.Background()
		ns := env.Namespace
		if squatterErr = env.Cluster.EnsureServiceAccount(ctx, ns, "squatter"); squatterErr != nil {
			return
		}
		rbac := env.Kube.RbacV1()
		_, err := rbac.Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "squatter"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: squatterRights, Verbs: []string{"create"}}}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			squatterErr = err
			return
		}
		_, err = rbac.RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "squatter"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "squatter"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "squatter", Namespace: ns}}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			squatterErr = err
			return
		}
		cfg, err := env.Cluster.ConfigForServiceAccount(ctx, ns, "squatter")
		if err != nil {
			squatterErr = err
			return
		}
		squatterKube, squatterErr = kubernetes.NewForConfig(cfg)
	})
	if squatterErr != nil {
		t.Fatal(squatterErr)
	}
	return squatterKube
}

// victim submits waitThenSpark, its Spark step simulated to succeed after
// d, and returns it once its wait step runs (the step's names are known
// from then on), with its Workflow and Argo's id of the Spark step's node
// (pi, in the second step group).
func victim(t *testing.T, d time.Duration) (*framework.When, *wfv1.Workflow, string) {
	t.Helper()
	w := Given(t).
		Workflow(waitThenSpark).
		Simulate(sim.Succeed(d)).
		When().
		SubmitWorkflow().
		WaitForNode("wait", framework.NodeRunning)
	wf, err := env.Workflows.ArgoprojV1alpha1().Workflows(env.Namespace).Get(context.Background(), w.Workflow().Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return w, wf, wf.NodeID(wf.Name + "[1].pi")
}

// waitThenSpark is a workflow that waits (a suspend step of some seconds:
// its uid and start time, and so its Spark step's names, are known while
// it waits), then runs a Spark step named pi.
var waitThenSpark = `
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: spark-squat-
spec:
  entrypoint: main
  templates:
    - name: main
      steps:
        - - name: wait
            template: wait
        - - name: pi
            template: pi
    - name: wait
      suspend: {duration: "15s"}
    - name: pi
      plugin:
        spark:` + sparkPi + `
          driver: {cores: 1, memory: 512m, serviceAccount: spark}
`

// A Service or a pod made in advance by another ServiceAccount under the
// names the victim's Spark step will use, with its labels copied, does not
// stop the step: it runs under names drawn when the squatter was found,
// which nobody can hold, and succeeds. A ConfigMap so made is not the
// driver's (the name of the driver's has a part drawn at launch: the
// squatter can only take the name without it): the step succeeds with a
// ConfigMap of its own. Every squatter keeps its resourceVersion and
// owners.
func TestSquattersNeverStopTheVictimsStep(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"ConfigMap", "Service", "Pod"} {
		t.Run(kind, func(t *testing.T) {
			parallel(t)
			ctx := context.Background()
			sq := squatter(t)
			w, wf, nodeID := victim(t, 5*time.Second)
			var err error
			n := objects.NamesFor(objects.Run{Workflow: spark.WorkflowRef{Name: wf.Name, Namespace: wf.Namespace, UID: string(wf.UID)},
				NodeID: nodeID, Attempt: 1, Incarnation: nodestatus.Incarnation(wf)})
			labels := map[string]string{spark.LabelWorkflowUID: string(wf.UID), spark.LabelNode: objects.NodeLabel(nodeID),
				spark.LabelAttempt: "1", spark.LabelManagedBy: spark.ManagedByValue}
			meta := func(name string) metav1.ObjectMeta {
				return metav1.ObjectMeta{Name: name, Namespace: env.Namespace, Labels: labels}
			}
			var made metav1.Object
			var want string
			switch kind {
			case "ConfigMap":
				made, err = sq.CoreV1().ConfigMaps(env.Namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta(n.ConfigMap),
					Data: map[string]string{spark.PropertiesFile: "spark.driver.extraJavaOptions=-javaagent:/tmp/evil.jar\n"}}, metav1.CreateOptions{})
				want = "" // the step succeeds
			case "Service":
				made, err = sq.CoreV1().Services(env.Namespace).Create(ctx, &corev1.Service{ObjectMeta: meta(n.Service),
					Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "evil"},
						Ports: []corev1.ServicePort{{Name: "driver-rpc-port", Port: 7078}}}}, metav1.CreateOptions{})
				want = "moved"
			case "Pod":
				made, err = sq.CoreV1().Pods(env.Namespace).Create(ctx, &corev1.Pod{ObjectMeta: meta(n.DriverPod),
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "evil", Image: "busybox"}}}}, metav1.CreateOptions{})
				want = "moved"
			}
			if err != nil {
				t.Fatalf("the squatter's create: %v", err)
			}
			t.Cleanup(func() {
				ctx := context.Background()
				switch kind {
				case "ConfigMap":
					_ = env.Kube.CoreV1().ConfigMaps(env.Namespace).Delete(ctx, made.GetName(), metav1.DeleteOptions{})
				case "Service":
					_ = env.Kube.CoreV1().Services(env.Namespace).Delete(ctx, made.GetName(), metav1.DeleteOptions{})
				case "Pod":
					_ = env.Kube.CoreV1().Pods(env.Namespace).Delete(ctx, made.GetName(), metav1.DeleteOptions{})
				}
			})

			w.WaitForWorkflow(framework.ToBeSucceeded).
				Then().
				ExpectNode("pi", func(t *testing.T, node *wfv1.NodeStatus) {
					if node.ID != nodeID {
						t.Fatalf("node pi has id %s, the test named its objects after %s: Argo's node ids changed", node.ID, nodeID)
					}
				}).
				ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
					var own []corev1.Pod
					for _, d := range drivers {
						if d.UID != made.GetUID() {
							own = append(own, d)
						}
					}
					switch {
					case len(own) != 1:
						t.Errorf("drivers %v; want one of the victim's", podNames(own))
					case want == "" && !strings.HasPrefix(objects.ConfigMapOf(&own[0]), made.GetName()+"-"):
						// The squatter's name is the driver's own without its
						// drawn part.
						t.Errorf("driver %s mounts %s; want %s-<drawn>, a ConfigMap of its own", own[0].Name, objects.ConfigMapOf(&own[0]), made.GetName())
					case want == "moved" && (own[0].Name == n.DriverPod || own[0].Annotations[spark.AnnotationNameKey] == ""):
						t.Errorf("driver %s; want one under names drawn for it, not %s", own[0].Name, n.DriverPod)
					}
				})
			var now metav1.Object
			switch kind {
			case "ConfigMap":
				now, err = env.Kube.CoreV1().ConfigMaps(env.Namespace).Get(ctx, made.GetName(), metav1.GetOptions{})
			case "Service":
				now, err = env.Kube.CoreV1().Services(env.Namespace).Get(ctx, made.GetName(), metav1.GetOptions{})
			case "Pod":
				now, err = env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, made.GetName(), metav1.GetOptions{})
			}
			if err != nil {
				t.Fatalf("the squatter is gone: %v", err)
			}
			if now.GetUID() != made.GetUID() || len(now.GetOwnerReferences()) > 0 || kind != "Pod" && now.GetResourceVersion() != made.GetResourceVersion() {
				t.Errorf("the squatter changed: uid %s (was %s), resourceVersion %s (was %s), owners %+v",
					now.GetUID(), made.GetUID(), now.GetResourceVersion(), made.GetResourceVersion(), now.GetOwnerReferences())
			}
		})
	}
}
