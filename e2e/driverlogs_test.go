//go:build e2e

package e2e

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/e2e/framework"
	"github.com/sparkplug-io/sparkplug/e2e/sim"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// A driver's log, as the e2e Spark simulator writes it, is served through
// the API server's pods/log by KWOK, as a kubelet serves a real one: what
// `sparkplug logs` and log archiving read.
func TestDriverLogIsServedThroughTheAPIServer(t *testing.T) {
	t.Parallel()
	Given(t).
		Workflow("@examples/spark-pi.yaml").
		Simulate(sim.Fail(time.Second, 3, "java.lang.IllegalStateException: no input")).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeFailed).
		Then().
		ExpectDrivers(func(t *testing.T, drivers []corev1.Pod) {
			if len(drivers) == 0 {
				t.Fatal("no driver pod")
			}
			d := drivers[len(drivers)-1]
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rc, err := env.Kube.CoreV1().Pods(d.Namespace).GetLogs(d.Name, &corev1.PodLogOptions{Container: spark.DriverContainerName}).Stream(ctx)
			if err != nil {
				t.Fatalf("pods/log of %s: %v", d.Name, err)
			}
			defer rc.Close()
			b, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"Submitted application", d.Labels[spark.LabelAppSelector], "java.lang.IllegalStateException: no input", "exiting with code 3"} {
				if !strings.Contains(string(b), want) {
					t.Errorf("the driver's log lacks %q:\n%s", want, b)
				}
			}
		})
}
