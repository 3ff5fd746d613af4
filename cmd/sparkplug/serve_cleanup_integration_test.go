//go:build integration

package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/sidecar"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

func TestTerminatedWorkflowDeletesItsRunningDrivers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "terminate")
	a := template(t, "a", sparkPi)
	b := template(t, "b", strings.Replace(sparkPi, `["1000"]`, `["2000"]`, 1))
	e.setTasks(map[string]*wfv1.Template{"node-a": a, "node-b": b})
	e.execute(a)
	e.execute(b)
	drivers := e.drivers()
	if len(drivers) != 2 {
		t.Fatalf("%d drivers, want 2", len(drivers))
	}
	// node-a finished, node-b still runs when the workflow is terminated.
	var done, live corev1.Pod
	for _, d := range drivers {
		if d.Annotations[spark.AnnotationNodeID] == "node-a" {
			done = d
		} else {
			live = d
		}
	}
	e.setDriverStatus(done.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	e.setDriverStatus(live.Name, running(true))
	e.eventually(a, "a succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })

	e.shutdownWorkflow(wfv1.ShutdownStrategyTerminate)
	e.waitDeleted(live.Name, "after terminate")
	if e.deleted(done.Name) {
		t.Fatalf("the finished driver %s was deleted too; it is kept for its logs", done.Name)
	}
}

func TestShutdownLeavesRunningWorkflowsAlone(t *testing.T) {
	t.Parallel()
	ns := "sigterm"
	e := newEnv(t, ns)
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	// A second server serves the request and is then stopped (SIGTERM).
	url, stop := startStoppableServer(t, e)
	e.at(url).execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, running(true))
	stop() // the workflow still runs: its driver must survive the sidecar
	if e.deleted(d.Name) {
		t.Fatalf("a sidecar shutdown deleted the driver of a running workflow")
	}
}

// The sidecar stops (SIGTERM: Argo deletes the agent pod when the
// workflow ends) before its Workflow watch has shown that the workflow was
// stopped: the shutdown sweep reads the Workflow afresh and deletes the
// driver that still runs. The watch is frozen so that only the shutdown
// path can delete it.
func TestShutdownSweepsTheDriversOfAStoppedWorkflow(t *testing.T) {
	t.Parallel()
	ns := "sigterm-sweep"
	e := newEnv(t, ns)
	tmpl := template(t, "spark-pi", sparkPi)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	freezer := &watchFreezer{frozen: make(chan struct{})}
	url, stop := startStoppableServer(t, e, func(o *sidecar.Config) { o.WrapTransport = freezer.wrap })
	e.at(url).execute(tmpl)
	d := e.onlyDriver()
	e.setDriverStatus(d.Name, running(true))

	freezer.freeze()
	e.shutdownWorkflow(wfv1.ShutdownStrategyStop)
	// The frozen watch hides the stop: the driver runs on until shutdown.
	time.Sleep(2 * time.Second)
	if e.deleted(d.Name) {
		t.Fatal("the driver was deleted before the sidecar stopped: the Workflow watch was not frozen, and this test proves nothing")
	}
	stop()
	if !e.deleted(d.Name) {
		t.Fatalf("the sidecar stopped after its workflow was stopped, and the driver %s still runs", d.Name)
	}
	// The deletion's Event is written before the process ends: recorded
	// after SIGTERM, it is not lost with the process (the e2e suite once
	// missed a replaced cron run's SparkDriverDeleted Event so).
	evs, err := testCluster.Client.CoreV1().Events(e.ns).List(context.Background(), metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Workflow,involvedObject.name=" + e.wf.Name + ",reason=SparkDriverDeleted"})
	if err != nil {
		t.Fatal(err)
	}
	named := false
	for _, ev := range evs.Items {
		named = named || strings.Contains(ev.Message, d.Name)
	}
	if !named {
		t.Errorf("no SparkDriverDeleted Event names driver %s once the sidecar stopped: %d such Events", d.Name, len(evs.Items))
	}
}

// watchFreezer stalls the events of the plugin's Workflow watches once
// frozen, as if they were slow to arrive; everything else passes.
type watchFreezer struct {
	frozen chan struct{}
	once   sync.Once
}

func (f *watchFreezer) freeze() { f.once.Do(func() { close(f.frozen) }) }

func (f *watchFreezer) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err != nil || r.URL.Query().Get("watch") != "true" || !strings.HasSuffix(r.URL.Path, "/workflows") {
			return resp, err
		}
		resp.Body = &frozenBody{ReadCloser: resp.Body, frozen: f.frozen, closed: make(chan struct{}), ctx: r.Context()}
		return resp, nil
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// frozenBody reads through until frozen, then blocks until closed or the
// request ends.
type frozenBody struct {
	io.ReadCloser
	frozen <-chan struct{}
	closed chan struct{}
	once   sync.Once
	ctx    context.Context
}

func (b *frozenBody) Read(p []byte) (int, error) {
	if !b.isFrozen() {
		n, err := b.ReadCloser.Read(p)
		if !b.isFrozen() {
			return n, err
		}
		// Frozen while this read waited: its event is dropped too.
	}
	select {
	case <-b.closed:
	case <-b.ctx.Done():
	}
	return 0, io.EOF
}

func (b *frozenBody) isFrozen() bool {
	select {
	case <-b.frozen:
		return true
	default:
		return false
	}
}

func (b *frozenBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return b.ReadCloser.Close()
}
