//go:build integration

package main

import (
	"context"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

func TestTemplateTimeoutStopsTheDriver(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "timeout")
	tmpl := template(t, "spark-pi", sparkPi)
	tmpl.Timeout = "3s"
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, running(true))
	r := e.eventually(tmpl, "timed out", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeFailed })
	if !strings.Contains(r.Node.Message, "timed out after 3s") {
		t.Fatalf("message %q, want the timeout", r.Node.Message)
	}
	if r.Node.Outputs == nil || r.Node.Outputs.ExitCode != nil {
		t.Fatalf("outputs %s: a driver sparkplug stopped has no exit code to report", describe(r))
	}
	if !e.deleted(d.Name) {
		t.Fatalf("driver %s still runs after the timeout", d.Name)
	}
}

func TestImagePullBackOffFailsFast(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "imagepull")
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, waiting("ImagePullBackOff", `Back-off pulling image "spark:3.5.3"`))
	r := e.eventually(tmpl, "failed fast", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeFailed })
	if !strings.Contains(r.Node.Message, "ImagePullBackOff") || !strings.Contains(r.Node.Message, "cannot start") {
		t.Fatalf("message %q, want the waiting reason", r.Node.Message)
	}
	if !e.deleted(d.Name) {
		t.Fatalf("stuck driver %s was not removed", d.Name)
	}
	// The stopped driver leaves a tombstone: later passes (a restarted
	// agent asks again, the resync) keep the result and never launch the
	// node again.
	for i := 0; i < 5; i++ {
		again := e.execute(tmpl)
		if again.Node.Phase != wfv1.NodeFailed || again.Node.Message != r.Node.Message {
			t.Fatalf("call %d after the stop: %s, want the same failure", i, describe(again))
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, p := range e.drivers() {
		if p.DeletionTimestamp == nil {
			t.Fatalf("a driver was launched again after the stop: %s", p.Name)
		}
	}
	// A ConfigMap created for it, not the driver's changed: the plugin
	// needs no right to patch ConfigMaps.
	cm, err := testCluster.Client.CoreV1().ConfigMaps(e.ns).Get(context.Background(), objects.TombstoneName(d.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("tombstone: %v", err)
	}
	if refs := cm.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Workflow" || cm.Annotations[spark.AnnotationStopped] != "CannotStart" {
		t.Fatalf("tombstone owners %+v annotations %v", refs, cm.Annotations)
	}
}

func TestPendingTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "pending")
	tmpl := template(t, "spark-pi", sparkPi+"sparkplug:\n  pendingTimeout: 3s\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, waiting("ContainerCreating", ""))
	if r := e.execute(tmpl); r.Node.Phase != wfv1.NodePending {
		t.Fatalf("within the pending timeout: %s, want Pending", describe(r))
	}
	r := e.eventually(tmpl, "pending timeout", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeFailed })
	if !strings.Contains(r.Node.Message, "did not start within 3s") {
		t.Fatalf("message %q, want the pending timeout", r.Node.Message)
	}
}

func TestOnFailureRetriesThenFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "retries")
	tmpl := template(t, "spark-pi", sparkPi+"restartPolicy:\n  type: OnFailure\n  onFailureRetries: 1\n  onFailureRetryInterval: 1\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	first := e.onlyDriver()
	e.setDriverStatus(first.Name, terminated(corev1.PodFailed, 1, "Error", "boom"))
	e.eventually(tmpl, "second attempt", func(r executor.ExecuteTemplateReply) bool { return param(r, "attempt") == "2" })
	drivers := e.drivers()
	if len(drivers) != 2 {
		t.Fatalf("%d drivers after a retry, want 2 (the failed attempt is kept for its logs)", len(drivers))
	}
	var second corev1.Pod
	for _, d := range drivers {
		if d.Labels[spark.LabelAttempt] == "2" {
			second = d
		}
	}
	if second.Name == "" || second.Name == first.Name {
		t.Fatalf("no attempt-2 driver: %v", drivers)
	}
	e.setDriverStatus(second.Name, terminated(corev1.PodFailed, 2, "Error", "boom again"))
	r := e.eventually(tmpl, "final failure", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeFailed })
	if !strings.Contains(r.Node.Message, "attempt 2/2") || !strings.Contains(r.Node.Message, "exited 2") {
		t.Fatalf("message %q, want the last attempt's failure", r.Node.Message)
	}
	if n := len(e.drivers()); n != 2 {
		t.Fatalf("%d drivers after retries were used up, want 2", n)
	}
}

func TestOnFailureNeverRerunsASuccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "noreruns")
	tmpl := template(t, "spark-pi", sparkPi+"restartPolicy:\n  type: OnFailure\n  onFailureRetries: 3\n  onFailureRetryInterval: 1\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	e.execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	e.eventually(tmpl, "succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	time.Sleep(1500 * time.Millisecond) // past the retry interval
	if r := e.execute(tmpl); r.Node.Phase != wfv1.NodeSucceeded {
		t.Fatalf("after the interval: %s", describe(r))
	}
	if n := len(e.drivers()); n != 1 {
		t.Fatalf("a success was rerun: %d drivers", n)
	}
}
