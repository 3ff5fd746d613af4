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
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// examples/ui-ingress.yaml through the real controller and agent (Argo
// leaves the URL formats' placeholders to the plugin): each step's UI
// Service gets an Ingress, as the Spark operator makes one, owned by its
// driver; the client-mode step's path is its spark.ui.proxyBase; each
// node's spark-ui output is its Ingress's URL. No ingress controller
// runs: the objects are what is checked. Deleting the workflow collects
// the Ingresses with the rest.
func TestUIIngressExample(t *testing.T) {
	parallel(t)
	drivers := map[string]corev1.Pod{}
	w := Given(t).
		Workflow("@examples/ui-ingress.yaml").
		Simulate(sim.Succeed(2 * time.Second)).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeSucceeded)
	ns := w.Workflow().Namespace
	w.Then().
		ExpectSparkObjects(func(t *testing.T, o framework.SparkObjects) {
			if len(o.Drivers) != 2 || len(o.Ingresses) != 2 {
				t.Fatalf("objects %s; want 2 drivers and an Ingress each", o)
			}
			clientConfs := 0
			for _, d := range o.Drivers {
				drivers[d.Name] = d
				run := objects.RunName(d.Name)
				found := false
				for _, i := range o.Ingresses {
					if i.Name != run+"-ui-ingress" {
						continue
					}
					found = true
					if !framework.OwnedBy(i.OwnerReferences, string(d.UID)) {
						t.Errorf("Ingress %s owners %+v, want driver %s", i.Name, i.OwnerReferences, d.Name)
					}
					if c := i.Spec.IngressClassName; c == nil || *c != "nginx" {
						t.Errorf("Ingress %s class %v, want nginx", i.Name, c)
					}
					if b := i.Spec.Rules[0].HTTP.Paths[0].Backend.Service; b == nil || b.Name != objects.UIServiceName(d.Name) {
						t.Errorf("Ingress %s leads to %+v, want the UI Service %s", i.Name, b, objects.UIServiceName(d.Name))
					}
				}
				if !found {
					t.Errorf("driver %s has no Ingress %s-ui-ingress", d.Name, run)
				}
				for _, cm := range o.ConfigMaps {
					conf, client := cm.Data[spark.ClientDefaultsFile]
					if cm.Name != objects.ConfigMapOf(&d) || !client {
						continue
					}
					clientConfs++
					if want := "spark.ui.proxyBase=/" + ns + "/" + run + "\n"; !strings.Contains(conf, want) {
						t.Errorf("the client-mode driver's spark-defaults.conf lacks %q:\n%s", want, conf)
					}
				}
			}
			if clientConfs != 1 {
				t.Errorf("%d client-mode drivers' ConfigMaps found, want 1", clientConfs)
			}
		}).
		ExpectPluginNodes(func(t *testing.T, nodes []wfv1.NodeStatus) {
			if len(nodes) != 2 {
				t.Fatalf("%d plugin nodes, want 2", len(nodes))
			}
			for _, n := range nodes {
				d, ok := drivers[param(n, "driver-pod")]
				if !ok {
					t.Fatalf("node %s names driver %q, which is not one of the workflow's", n.DisplayName, param(n, "driver-pod"))
				}
				run := objects.RunName(d.Name)
				want := map[string]string{
					"ui-host": "https://" + run + ".spark.example.com",
					"ui-path": "http://spark.example.com/" + ns + "/" + run,
				}[n.DisplayName]
				if got := param(n, "spark-ui"); got != want {
					t.Errorf("node %s: spark-ui %q, want its Ingress's URL %q", n.DisplayName, got, want)
				}
			}
		}).
		When().
		DeleteWorkflow().
		WaitForSparkObjects("nothing left", func(o framework.SparkObjects) bool { return o.Empty() }, time.Minute)
}
