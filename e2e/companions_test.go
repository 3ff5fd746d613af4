//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
)

// A driver whose Service is missing (the plugin was killed between
// creating the pod and its Service) gets it back once the plugin runs
// again, also when it is the run of one of several identical nodes.
// In controller mode the plugin is the leading controller.
func TestEveryIdenticalRunGetsItsCompanionsBack(t *testing.T) {
	parallel(t)
	// The restart is of this workflow's own sidecar; in controller mode of
	// a controller of the test's own.
	ns, _ := pluginFlags(t, "")
	w := Given(t).Namespace(ns).
		Workflow(identicalTasks).
		Simulate(sim.Driver{Forever: true}).
		When().
		SubmitWorkflow().
		WaitForNode("twin-a", framework.NodeMessage(`^RUNNING`)).
		WaitForNode("twin-b", framework.NodeMessage(`^RUNNING`)).
		WaitForSparkObjects("two Services", func(o framework.SparkObjects) bool { return len(o.Services) == 2 })
	objs, err := env.SparkObjects(context.Background(), w.Workflow())
	if err != nil {
		t.Fatal(err)
	}
	// What a kill -9 between the pod's and the Service's creation leaves.
	for _, s := range objs.Services {
		if err := env.Kube.CoreV1().Services(s.Namespace).Delete(context.Background(), s.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w.WaitForSparkObjects("no Service", func(o framework.SparkObjects) bool { return len(o.Services) == 0 }).
		RestartSparkplug().
		WaitForSparkObjects("both drivers' Services back", func(o framework.SparkObjects) bool {
			return len(o.Services) == 2
		}, 20*time.Second).
		Then().
		ExpectSparkObjects(func(t *testing.T, o framework.SparkObjects) {
			for _, d := range o.Drivers {
				n := 0
				for _, s := range o.Services {
					if framework.OwnedBy(s.OwnerReferences, string(d.UID)) {
						n++
					}
				}
				if n != 1 {
					t.Errorf("driver %s owns %d Services, want 1", d.Name, n)
				}
			}
		})
}
