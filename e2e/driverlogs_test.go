//go:build e2e

package e2e

import (
	"context"
	"io"
	"os/exec"
	"slices"
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
	onceAcrossModes(t, "KWOK serving a driver's log")
	parallel(t)
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

// sparkplug logs, run as a person runs it (the binary, an admin
// kubeconfig), prints the driver logs of a workflow's Spark nodes, found by
// sparkplug's labels: every node's with a pod prefix, or one node's alone.
func TestSparkplugLogsPrintsAWorkflowsDriverLogs(t *testing.T) {
	onceAcrossModes(t, "sparkplug logs, a command a person runs")
	parallel(t)
	var drivers []corev1.Pod
	w := Given(t).
		Workflow("@examples/spark-dag.yaml").
		Simulate(sim.Succeed(2 * time.Second)).
		When().
		SubmitWorkflow().
		WaitForWorkflow(framework.ToBeSucceeded)
	w.Then().ExpectDrivers(func(t *testing.T, ds []corev1.Pod) {
		if len(ds) != 3 {
			t.Fatalf("%d drivers, want 3 (pi-a, pi-b, report)", len(ds))
		}
		drivers = ds
	})
	if t.Failed() {
		return
	}
	name := w.Workflow().Name
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, env.Sidecars.Binary(), append([]string{"logs", "--kubeconfig", env.Kubeconfig(), "-n", env.Namespace}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("sparkplug logs %v: %v\n%s", args, err, stderr.String())
		}
		return string(out)
	}

	all := run(name)
	for _, d := range drivers {
		for _, want := range []string{d.Name + ": ", "Submitted application", d.Labels[spark.LabelAppSelector], "Successfully stopped SparkContext"} {
			if !strings.Contains(all, want) {
				t.Errorf("sparkplug logs %s lacks %q:\n%s", name, want, all)
			}
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(all), "\n") {
		if !slices.ContainsFunc(drivers, func(d corev1.Pod) bool { return strings.HasPrefix(l, d.Name+": ") }) {
			t.Errorf("line %q has no driver prefix", l)
		}
	}

	i := slices.IndexFunc(drivers, func(d corev1.Pod) bool { return strings.HasSuffix(nodeName(w, d), ".pi-b") })
	if i < 0 {
		t.Fatal("no driver of pi-b")
	}
	b := drivers[i]
	one := run(name, "pi-b")
	if strings.Contains(one, b.Name+": ") {
		t.Errorf("the log of one node alone is prefixed:\n%s", one)
	}
	for _, d := range drivers {
		if has := strings.Contains(one, d.Labels[spark.LabelAppSelector]); has != (d.Name == b.Name) {
			t.Errorf("sparkplug logs %s pi-b: holds %s's application id: %v; want pi-b's driver log alone:\n%s", name, d.Name, has, one)
		}
	}
}

// nodeName is the Argo node name of a driver's node.
func nodeName(w *framework.When, d corev1.Pod) string {
	n, ok := w.Workflow().Status.Nodes[d.Annotations[spark.AnnotationNodeID]]
	if !ok {
		return ""
	}
	return n.Name
}
