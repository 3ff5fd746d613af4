//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Argo's retryStrategy without {{retries}} sends the retry the very same
// template as the failed node; each retry is a new Argo node and gets its
// own driver, attempt 1, annotated with its own node id, never the failed
// node's driver again. Both retry policies that retry a Failed node retry
// a Spark failure: sparkplug reports it Failed, not Error.
func TestArgoRetryStrategyGetsANewDriverPerNode(t *testing.T) {
	parallel(t)
	body := `
      plugin:
        spark:` + sparkPi + `
          driver: {cores: 1, memory: 512m, serviceAccount: spark}`
	w := Given(t).
		Workflow(`
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: spark-argo-retry-
spec:
  entrypoint: main
  templates:
    - name: main
      dag:
        tasks:
          - {name: always, template: pi-always}
          - {name: on-failure, template: pi-on-failure}
    - name: pi-always
      retryStrategy: {limit: 1, retryPolicy: Always}` + body + `
          arguments: ["always"]
    - name: pi-on-failure
      retryStrategy: {limit: 1, retryPolicy: OnFailure}` + body + `
          arguments: ["on-failure"]
`).
		Simulate(sim.Fail(2*time.Second, 1, "java.lang.RuntimeException: flaky")).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeFailed)

	byNode := map[string][]corev1.Pod{}
	w.Then().
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			for _, d := range drivers {
				id := d.Annotations[spark.AnnotationNodeID]
				byNode[id] = append(byNode[id], d)
				if d.Labels[spark.LabelAttempt] != "1" {
					t.Errorf("driver %s is attempt %s, want 1: an Argo retry starts the application over", d.Name, d.Labels[spark.LabelAttempt])
				}
			}
			if len(drivers) != 4 {
				t.Errorf("%d drivers, want 4 (two tries of two steps): %v", len(drivers), podNames(drivers))
			}
		}).
		ExpectPluginNodes(func(t *testing.T, nodes []wfv1.NodeStatus) {
			tries := map[string][]wfv1.NodeStatus{}
			for _, n := range nodes {
				step, _, _ := strings.Cut(n.DisplayName, "(")
				tries[step] = append(tries[step], n)
			}
			for _, step := range []string{"always", "on-failure"} {
				ns := tries[step]
				if len(ns) != 2 {
					t.Errorf("step %s has %d tries, want 2: %v", step, len(ns), ns)
					continue
				}
				if ns[0].ID == ns[1].ID {
					t.Errorf("step %s: both tries are node %s", step, ns[0].ID)
				}
				for _, n := range ns {
					if n.Phase != wfv1.NodeFailed || !strings.Contains(n.Message, "driver exited 1") {
						t.Errorf("%s: %s %q, want Failed with the driver's exit", n.DisplayName, n.Phase, n.Message)
					}
					mine := byNode[n.ID]
					if len(mine) != 1 {
						t.Errorf("%s (%s) has drivers %v, want exactly one", n.DisplayName, n.ID, podNames(mine))
						continue
					}
					if got := param(n, "driver-pod"); got != mine[0].Name {
						t.Errorf("%s reports driver %q, want its own %s", n.DisplayName, got, mine[0].Name)
					}
					if result(n) != mine[0].Labels[spark.LabelAppSelector] {
						t.Errorf("%s reports application %q, want its own driver's %s", n.DisplayName, result(n), mine[0].Labels[spark.LabelAppSelector])
					}
				}
				first, second := ns[0], ns[1]
				if second.DisplayName < first.DisplayName {
					first, second = second, first
				}
				if d := byNode[second.ID]; len(d) == 1 && d[0].CreationTimestamp.Before(&first.FinishedAt) {
					t.Errorf("%s's driver was created at %v, before %s failed at %v", second.DisplayName, d[0].CreationTimestamp, first.DisplayName, first.FinishedAt)
				}
			}
		}).
		ExpectNode("always", func(t *testing.T, n *wfv1.NodeStatus) {
			if n.Type != wfv1.NodeTypeRetry || n.Phase != wfv1.NodeFailed {
				t.Errorf("always: %s %s, want a Failed Retry node", n.Type, n.Phase)
			}
		})
}
