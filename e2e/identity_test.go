//go:build e2e

package e2e

// An old result must never answer a new node: the agent may ask about a
// new step before the plugin's cache lists it, and the plugin then reads
// the TaskSet afresh instead of repeating the previous step's result.

import (
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Identical spark steps one after the other: each gets its own driver and
// its own application id.
func TestIdenticalStepsInSequenceGetTheirOwnDrivers(t *testing.T) {
	for range 3 {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			w := Given(t).
				Workflow(`
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: spark-sequence-
spec:
  entrypoint: main
  templates:
    - name: main
      steps:
        - - {name: s1, template: pi}
        - - {name: s2, template: pi}
        - - {name: s3, template: pi}
        - - {name: s4, template: pi}
    - name: pi
      plugin:
        spark:` + sparkPi + `
          driver: {cores: 1, memory: 512m, serviceAccount: spark}
          arguments: ["1000"]
`).
				Simulate(sim.Succeed(time.Second)).
				When().
				SubmitWorkflow().
				WaitForWorkflow(framework.ToBeSucceeded)
			byNode := map[string][]string{}
			w.Then().ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
				for _, d := range drivers {
					id := d.Annotations[spark.AnnotationNodeID]
					byNode[id] = append(byNode[id], d.Name)
				}
			}).ExpectPluginNodes(func(t *testing.T, nodes []wfv1.NodeStatus) {
				apps := map[string]string{}
				for _, n := range nodes {
					if len(byNode[n.ID]) != 1 {
						t.Errorf("node %s (%s) has drivers %v, want one", n.DisplayName, n.ID, byNode[n.ID])
					}
					if o, dup := apps[result(n)]; dup {
						t.Errorf("nodes %s and %s both report %s", o, n.DisplayName, result(n))
					}
					apps[result(n)] = n.DisplayName
				}
			})
		})
	}
}
