//go:build e2e

package e2e

// An old result must never answer a new node: the agent may ask about a
// new step before the plugin's cache lists it, and the plugin then reads
// the TaskSet afresh instead of repeating the previous step's result.

import (
	"encoding/json"
	"slices"
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
	t.Parallel()
	for range 3 {
		t.Run("", func(t *testing.T) {
			parallel(t)
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

// A Spark step directly in a withItems loop (steps) and a withParam loop
// (DAG), with a repeated item: every child gets its own driver, and a later
// step gets the loop's aggregated result, the list of application ids.
// Argo decodes each loop child's outputs.result as JSON to aggregate it
// (argo-workflows#10775): a plain id would fail the workflow.
func TestSparkStepsInLoops(t *testing.T) {
	parallel(t)
	w := Given(t).
		Workflow(`
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: spark-loops-
spec:
  entrypoint: main
  templates:
    - name: main
      steps:
        - - name: items
            template: pi
            arguments: {parameters: [{name: count, value: "{{item}}"}]}
            withItems: ["10", "10", "20"]
        - - name: dag
            template: dag
        - - name: report-items
            template: report
            arguments:
              parameters:
                - {name: results, value: "{{steps.items.outputs.result}}"}
                - {name: ids, value: "{{steps.items.outputs.parameters.application-id}}"}
    - name: dag
      dag:
        tasks:
          - name: params
            template: pi
            arguments: {parameters: [{name: count, value: "{{item}}"}]}
            withParam: '["30", "30"]'
          - name: report-params
            template: report
            depends: params
            arguments:
              parameters:
                - {name: results, value: "{{tasks.params.outputs.result}}"}
                - {name: ids, value: "{{tasks.params.outputs.parameters.application-id}}"}
    - name: pi
      inputs: {parameters: [{name: count}]}
      outputs: {parameters: [{name: application-id, valueFrom: {supplied: {}}}]}
      plugin:
        spark:` + sparkPi + `
          driver: {cores: 1, memory: 512m, serviceAccount: spark}
          arguments: ["{{inputs.parameters.count}}"]
    - name: report
      inputs: {parameters: [{name: results}, {name: ids}]}
      suspend: {duration: "0"}
`).
		Simulate(sim.Succeed(time.Second)).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeSucceeded)

	apps := map[string]string{} // application id -> driver
	w.Then().ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
		byNode := map[string]int{}
		for _, d := range drivers {
			byNode[d.Annotations[spark.AnnotationNodeID]]++
			apps[d.Labels[spark.LabelAppSelector]] = d.Name
		}
		if len(drivers) != 5 {
			t.Errorf("%d drivers, want 5 (3 items, 2 params)", len(drivers))
		}
		for node, n := range byNode {
			if n != 1 {
				t.Errorf("node %s has %d drivers, want 1", node, n)
			}
		}
	})
	for _, c := range []struct {
		report string
		want   int
	}{{"report-items", 3}, {"report-params", 2}} {
		w.Then().ExpectNode(c.report, func(t *testing.T, n *wfv1.NodeStatus) {
			var results, ids []string
			for _, p := range n.Inputs.Parameters {
				var into *[]string
				switch p.Name {
				case "results":
					into = &results
				case "ids":
					into = &ids
				default:
					continue
				}
				if err := json.Unmarshal([]byte(p.Value.String()), into); err != nil {
					t.Fatalf("%s: input %s = %q is not a JSON list of strings: %v", c.report, p.Name, p.Value.String(), err)
				}
			}
			if len(results) != c.want || !slices.Equal(results, ids) {
				t.Errorf("%s: results %q and ids %q, want the same %d application ids", c.report, results, ids, c.want)
			}
			seen := map[string]bool{}
			for _, id := range results {
				if apps[id] == "" {
					t.Errorf("%s: %q is no driver's application id", c.report, id)
				}
				if seen[id] {
					t.Errorf("%s: %q reported twice", c.report, id)
				}
				seen[id] = true
			}
		})
	}
}
