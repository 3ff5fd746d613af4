//go:build e2e

package e2e

// The namespace is the trust boundary, and inside it a node's result comes
// only from its own driver: pods that carry a driver's labels, made by
// hand or by another workflow's template, never answer it.

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// While a Spark step runs, a pod made by hand and a pod of another
// workflow's container step copy its driver's labels and annotations
// (another application id, a later attempt, a driver that fails at once):
// the node still succeeds from its own driver, with its own id, and
// sparkplug never deletes the forged pods.
func TestForgedDriversNeverChangeANodesResult(t *testing.T) {
	parallel(t)
	ctx := context.Background()
	victim := Given(t).
		Workflow(sparkWorkflow("spark-victim-", "", driverBody)).
		Simulate(sim.Succeed(15*time.Second)).
		When().
		SubmitWorkflow().
		WaitForNode(framework.RootNode, framework.NodeMessage(`^RUNNING`)).
		WaitForDrivers(1)
	drivers, err := env.Drivers(ctx, victim.Workflow())
	if err != nil {
		t.Fatal(err)
	}
	own := drivers[0]
	forge := func(appID string) (map[string]string, map[string]string) {
		labels := maps.Clone(own.Labels)
		labels[spark.LabelAppSelector] = appID
		labels[spark.LabelAttempt] = "99"
		ann := map[string]string{}
		for k, v := range own.Annotations {
			if strings.HasPrefix(k, spark.Domain+"/") {
				ann[k] = v
			}
		}
		maps.Copy(ann, sim.Fail(0, 1, "forged").Annotations())
		return labels, ann
	}

	labels, ann := forge("spark-forged-by-hand")
	byHand := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "forged-" + victim.Workflow().Name, Namespace: framework.DefaultNamespace, Labels: labels, Annotations: ann},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: spark.DriverContainerName, Image: "spark:3.5.3"}},
		},
	}
	if _, err := env.Kube.CoreV1().Pods(byHand.Namespace).Create(ctx, byHand, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Kube.CoreV1().Pods(byHand.Namespace).Delete(context.Background(), byHand.Name, metav1.DeleteOptions{})
	})

	labels, ann = forge("spark-forged-by-workflow")
	meta, err := yaml.Marshal(map[string]any{"labels": labels, "annotations": ann})
	if err != nil {
		t.Fatal(err)
	}
	attacker := Given(t).
		Workflow(`
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: forger-
spec:
  entrypoint: forge
  templates:
    - name: forge
      metadata: ` + flowYAML(meta) + `
      container: {image: busybox, command: ["true"]}
`).
		When().
		SubmitWorkflow()
	attacker.WaitFor("the other workflow's forged pod", func() bool {
		pods, err := env.Kube.CoreV1().Pods(framework.DefaultNamespace).List(ctx, metav1.ListOptions{
			LabelSelector: spark.LabelAppSelector + "=spark-forged-by-workflow"})
		return err == nil && len(pods.Items) == 1
	})

	victim.WaitForWorkflow(framework.ToBeSucceeded).
		Then().
		ExpectNode(framework.RootNode, func(t *testing.T, n *wfv1.NodeStatus) {
			if got := param(*n, "application-id"); got != own.Labels[spark.LabelAppSelector] {
				t.Errorf("node reports application %q, want its own driver's %q", got, own.Labels[spark.LabelAppSelector])
			}
			if got := param(*n, "driver-pod"); got != own.Name {
				t.Errorf("node reports driver %q, want %q", got, own.Name)
			}
			if got := param(*n, "attempt"); got != "1" {
				t.Errorf("node reports attempt %q, want 1", got)
			}
		}).
		ExpectHistory(framework.RootNode, func(t *testing.T, states []framework.NodeState) {
			for _, s := range states {
				if strings.Contains(s.Message, "forged") || s.Phase == wfv1.NodeFailed {
					t.Errorf("the node showed %s, from a forged pod", s)
				}
			}
		})
	if _, err := env.Kube.CoreV1().Pods(byHand.Namespace).Get(ctx, byHand.Name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		t.Error("sparkplug deleted the pod made by hand, which is not its own")
	}
	attacker.Terminate()
}

// flowYAML puts a YAML block on one line, as a flow mapping.
func flowYAML(block []byte) string {
	var v any
	if err := yaml.Unmarshal(block, &v); err != nil {
		panic(fmt.Sprintf("flowYAML: %v", err))
	}
	b, err := yaml.Marshal(v)
	if err != nil {
		panic(err)
	}
	// JSON is YAML's flow style.
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		panic(err)
	}
	return string(j)
}
