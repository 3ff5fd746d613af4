//go:build e2e

package e2e

// Only runs sparkplug made count. A second ServiceAccount that may create
// pods and ConfigMaps in the namespace (as a driver's may) forges, before
// a Spark step starts and while it runs, everything a run's driver and
// tombstone carry: the current and the legacy names, the labels and
// annotations, the Workflow as owner, and the next attempt's name. The
// step reports its own driver's result, every forged object is left as
// it is, and a SparkForgedObject Event names it (plugin/execute/trust.go).

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/plugin/nodestatus"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

func TestForgersWithADriversRightsNeverDecideANode(t *testing.T) {
	parallel(t)
	ctx := context.Background()
	forger := squatter(t)
	w, wf, nodeID := victim(t, 15*time.Second)
	ref := spark.WorkflowRef{Name: wf.Name, Namespace: wf.Namespace, UID: string(wf.UID)}
	inc := nodestatus.Incarnation(wf)
	run := func(attempt int, incarnation string) objects.Names {
		return objects.NamesFor(objects.Run{Workflow: ref, NodeID: nodeID, Attempt: attempt, Incarnation: incarnation})
	}
	forge := func(attempt int, incarnation, appID string) *corev1.Pod {
		n := run(attempt, incarnation)
		labels := map[string]string{spark.LabelRole: spark.RoleDriver, spark.LabelWorkflowUID: ref.UID, spark.LabelNode: objects.NodeLabel(nodeID),
			spark.LabelAttempt: strconv.Itoa(attempt), spark.LabelAppSelector: appID, spark.LabelManagedBy: spark.ManagedByValue}
		ann := map[string]string{spark.AnnotationNodeID: nodeID, spark.AnnotationWorkflowName: ref.Name}
		if incarnation != "" {
			ann[spark.AnnotationIncarnation] = incarnation
		}
		maps.Copy(ann, sim.Succeed(time.Second).Annotations())
		return created(t, forger, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: n.DriverPod, Namespace: env.Namespace, Labels: labels, Annotations: ann,
				OwnerReferences: []metav1.OwnerReference{objects.WorkflowOwner(ref)}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: spark.DriverContainerName, Image: "spark:3.5.3"}}},
		})
	}

	// Before the step starts: its driver under the current and the
	// legacy names, and a tombstone of its first attempt.
	current := forge(1, inc, "spark-forged-current")
	legacy := forge(1, "", "spark-forged-legacy")
	tomb := objects.Tombstone(current, ref, map[string]string{spark.AnnotationStopped: "Timeout",
		spark.AnnotationStoppedReason: "forged", spark.AnnotationStoppedDetail: "forged: contact the attacker to fix", spark.AnnotationDriver: current.Name})
	tomb.Namespace = env.Namespace
	tombMade, err := forger.CoreV1().ConfigMaps(env.Namespace).Create(ctx, tomb, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the forger's tombstone: %v", err)
	}

	// While it runs: its next attempt's driver, which succeeds at once.
	w.WaitForNode("pi", framework.NodeMessage(`^RUNNING`))
	next := forge(2, inc, "spark-forged-next")

	w.WaitForWorkflow(framework.ToBeSucceeded).
		Then().
		ExpectNode("pi", func(t *testing.T, n *wfv1.NodeStatus) {
			if n.ID != nodeID {
				t.Fatalf("node pi has id %s, the test forged %s: Argo's node ids changed", n.ID, nodeID)
			}
			if app := param(*n, "application-id"); strings.HasPrefix(app, "spark-forged") || param(*n, "attempt") != "1" {
				t.Errorf("node pi reports %s attempt %s, from a forged pod", app, param(*n, "attempt"))
			}
			for _, p := range []*corev1.Pod{current, legacy, next} {
				if param(*n, "driver-uid") == string(p.UID) {
					t.Errorf("node pi records forged pod %s as its driver", p.Name)
				}
			}
		}).
		ExpectHistory("pi", func(t *testing.T, states []framework.NodeState) {
			for _, s := range states {
				if strings.Contains(s.Message, "forged") || s.Phase == wfv1.NodeFailed {
					t.Errorf("node pi showed %s, from a forged object", s)
				}
			}
		}).
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			own := 0
			for _, d := range drivers {
				if !strings.HasPrefix(d.Labels[spark.LabelAppSelector], "spark-forged") {
					own++
					if d.Name == current.Name || d.Annotations[spark.AnnotationNameKey] == "" {
						t.Errorf("own driver %s; want it under names drawn for it, its own were held", d.Name)
					}
				}
			}
			if own != 1 {
				t.Errorf("%d drivers of the step's own, want 1", own)
			}
		})

	for _, p := range []*corev1.Pod{current, legacy, next} {
		now, err := env.Kube.CoreV1().Pods(env.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil || now.UID != p.UID || now.DeletionTimestamp != nil {
			t.Errorf("forged pod %s was not left alone: %v", p.Name, err)
		}
	}
	if now, err := env.Kube.CoreV1().ConfigMaps(env.Namespace).Get(ctx, tombMade.Name, metav1.GetOptions{}); err != nil || now.ResourceVersion != tombMade.ResourceVersion {
		t.Errorf("the forged tombstone was not left alone: %v", err)
	}
	evs, err := env.Kube.CoreV1().Events(env.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Workflow,involvedObject.name=" + wf.Name + ",reason=" + spark.ReasonForgedObject})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{current.Name, legacy.Name, next.Name} {
		named := false
		for _, ev := range evs.Items {
			named = named || strings.Contains(ev.Message, name+" ")
		}
		if !named {
			t.Errorf("no %s Event names %s", spark.ReasonForgedObject, name)
		}
	}
}

// created creates pod p as client, failing the test on a refusal.
func created(t *testing.T, client kubernetes.Interface, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	made, err := client.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the forger's pod %s: %v", p.Name, err)
	}
	t.Cleanup(func() {
		_ = env.Kube.CoreV1().Pods(p.Namespace).Delete(context.Background(), p.Name, metav1.DeleteOptions{})
	})
	return made
}
