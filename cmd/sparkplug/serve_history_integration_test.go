//go:build integration

package main

import (
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/sidecar"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/submit/submittest"
)

// withHistoryServer is serve --history-server-url.
func withHistoryServer(url string) func(*sidecar.Config) {
	return func(o *sidecar.Config) { o.Core.HistoryServerURL = url }
}

// With --history-server-url every Spark node reports history-ui, its
// application's page on the History Server, from the first reply that
// names the driver, through Running, to its end, succeeded or failed; a
// step's sparkplug.historyServerURL overrides the flag, and "" turns it
// off for the step.
func TestHistoryUIOnRunningAndFinishedNodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "history", withHistoryServer("https://spark-history.example.com/"))
	byFlag := template(t, "pi-flag", sparkPi)
	byStep := template(t, "pi-step", sparkPi+"sparkplug:\n  historyServerURL: http://shs.team-a.svc:18080\n")
	off := template(t, "pi-off", sparkPi+"sparkplug:\n  historyServerURL: \"\"\n")
	e.setTasks(map[string]*wfv1.Template{"node-flag": byFlag, "node-step": byStep, "node-off": off})
	steps := []struct {
		tmpl *wfv1.Template
		base string // "" for no history-ui
		end  corev1.PodStatus
	}{
		{byFlag, "https://spark-history.example.com", terminated(corev1.PodSucceeded, 0, "Completed", "")},
		{byStep, "http://shs.team-a.svc:18080", terminated(corev1.PodFailed, 1, "Error", "java.lang.IllegalStateException: bad input")},
		{off, "", terminated(corev1.PodSucceeded, 0, "Completed", "")},
	}
	drivers := map[string]corev1.Pod{}
	for _, s := range steps {
		r := e.execute(s.tmpl)
		if r.Node == nil || r.Node.Phase != wfv1.NodePending {
			t.Fatalf("%s: first reply %s; want Pending", s.tmpl.Name, describe(r))
		}
		for _, d := range e.drivers() {
			if d.Name == param(r, "driver-pod") {
				drivers[s.tmpl.Name] = d
			}
		}
		checkHistoryUI(t, "submitted", s.tmpl.Name, r, s.base, drivers[s.tmpl.Name])
	}
	if len(drivers) != len(steps) {
		t.Fatalf("drivers %v; want one per step", drivers)
	}

	for _, s := range steps {
		d := drivers[s.tmpl.Name]
		e.setDriverStatus(d.Name, running(true))
		r := e.eventually(s.tmpl, "Running", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeRunning })
		checkHistoryUI(t, "running", s.tmpl.Name, r, s.base, d)
	}
	for _, s := range steps {
		d := drivers[s.tmpl.Name]
		e.setDriverStatus(d.Name, s.end)
		r := e.eventually(s.tmpl, "finished", func(r executor.ExecuteTemplateReply) bool {
			return r.Node.Phase == wfv1.NodeSucceeded || r.Node.Phase == wfv1.NodeFailed
		})
		checkHistoryUI(t, string(r.Node.Phase), s.tmpl.Name, r, s.base, d)
	}
}

// The page is base/history/<the driver's application id>/, or there is
// none when base is "".
func checkHistoryUI(t *testing.T, when, step string, r executor.ExecuteTemplateReply, base string, d corev1.Pod) {
	t.Helper()
	got := param(r, "history-ui")
	want := ""
	if base != "" {
		want = base + "/history/" + d.Labels[spark.LabelAppSelector] + "/"
	}
	if got != want || (want != "" && param(r, "application-id") != d.Labels[spark.LabelAppSelector]) {
		t.Errorf("%s, %s: history-ui %q (application-id %q), want %q", step, when, got, param(r, "application-id"), want)
	}
}

// spark-submit chooses the application id itself, after sparkplug has
// named the driver; the History Server knows the application by that id
// (spark.app.id, the driver's spark-app-selector label), so history-ui
// names it, not the id the native launcher would have given.
func TestHistoryUINamesTheIDSparkSubmitChose(t *testing.T) {
	t.Parallel()
	submit, _ := withSparkSubmit(t, submittest.Config{Create: true})
	e := newEnv(t, "history-submit", submit, withHistoryServer("http://spark-history.spark.svc:18080"))
	tmpl := template(t, "spark-pi", sparkPiSubmit)
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	r := e.execute(tmpl)
	d := e.onlyDriver()
	native := e.names("node-1", 1)
	if id := d.Labels[spark.LabelAppSelector]; id == "" || id == native.AppID {
		t.Fatalf("driver's application id %q; want spark-submit's own", id)
	}
	checkHistoryUI(t, "submitted", tmpl.Name, r, "http://spark-history.spark.svc:18080", d)
	e.setDriverStatus(d.Name, terminated(corev1.PodSucceeded, 0, "Completed", ""))
	r = e.eventually(tmpl, "Succeeded", func(r executor.ExecuteTemplateReply) bool { return r.Node.Phase == wfv1.NodeSucceeded })
	checkHistoryUI(t, "succeeded", tmpl.Name, r, "http://spark-history.spark.svc:18080", d)
}

// A bad sparkplug.historyServerURL fails the step before anything is
// launched, naming the field and the fix (the token its query holds
// redacted).
func TestABadHistoryServerURLFailsTheStep(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "history-bad", withHistoryServer("https://spark-history.example.com"))
	tmpl := template(t, "spark-pi", sparkPi+"sparkplug:\n  historyServerURL: \"spark-history:18080/?token=x\"\n")
	e.setTasks(map[string]*wfv1.Template{"node-1": tmpl})
	r := e.execute(tmpl)
	if r.Node == nil || r.Node.Phase != wfv1.NodeFailed ||
		!strings.Contains(r.Node.Message, `spark.sparkplug.historyServerURL: Invalid value: "spark-history:18080/?token=<redacted>": must be an absolute URL starting with http:// or https://`) {
		t.Fatalf("reply %s; want Failed naming spark.sparkplug.historyServerURL", describe(r))
	}
	if n := len(e.drivers()); n != 0 {
		t.Fatalf("%d drivers launched for an invalid body", n)
	}
}
