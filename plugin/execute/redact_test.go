package execute

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/state"
	"github.com/sparkplug-io/sparkplug/plugin/step"
	"github.com/sparkplug-io/sparkplug/plugin/submit/submittest"
)

// refusal is an API server's refusal quoting what it refused, as a
// node's message and an Event pass it on (issue #20, finding 6).
const refusal = `Pod "pi-driver" is invalid: spec.containers[0].args: Invalid value: "--db-password=leak01": ` +
	`spark.jars=https://u:leak02@repo/x.jar, jdbc:postgresql://h/db?user=u&password=leak03`

func shows(t *testing.T, what, text string) {
	t.Helper()
	for _, secret := range []string{"leak01", "leak02", "leak03"} {
		if strings.Contains(text, secret) {
			t.Errorf("%s shows %s: %s", what, secret, text)
		}
	}
	if !strings.Contains(text, "spec.containers[0].args: Invalid value") {
		t.Errorf("%s lost the API server's words: %s", what, text)
	}
}

// A node's message shows no secret the API server's words quote.
func TestResultMessageIsRedacted(t *testing.T) {
	c := &Core{}
	node := c.result(state.SubmissionFailed(refusal), nil, false, nil, nil)
	shows(t, "the node's message", node.Message)
}

// Neither a driver's state Event nor any other Event shows one.
func TestEventsAreRedacted(t *testing.T) {
	rec := record.NewFakeRecorder(10)
	c := &Core{recorder: rec}
	wf := spark.WorkflowRef{Name: "wf", Namespace: "ns", UID: "u"}
	c.stateEvent(wf, "n1", "n1-driver", state.SubmissionFailed(refusal))
	c.event(wf, corev1.EventTypeWarning, spark.ReasonObjectRefused, "Service pi-ui of driver pi-driver not created: "+refusal)
	close(rec.Events)
	n := 0
	for e := range rec.Events {
		n++
		shows(t, "an Event", e)
	}
	if n != 2 {
		t.Errorf("%d Events, want 2", n)
	}
}

// The controller's log (Options.SharedLog) holds every tenant's
// spark-submit command lines: it shows their conf keys and none of the
// values, a secret without a telling name included; a sidecar's log, in
// its workflow's namespace, shows the values the rules do not hide.
func TestSparkSubmitArgvInASharedLogHasNoValues(t *testing.T) {
	extra := `,"sparkConf":{"spark.executorEnv.DB_URL":"plain-leak01"},"arguments":["positional-leak02"]`
	for _, shared := range []bool{false, true} {
		e := newSubmitEnv(t, submittest.Config{}, extra, func(o *Options) { o.SharedLog = shared })
		fl := e.core.flowOf("uid-1")
		tmpl := fl.scope.TaskSet().Spec.Tasks["wf-1"]
		st, _, err := fl.step("wf-1", &tmpl, e.core.opts, func(*step.Step) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		br := st.Run(fl.scope.Workflow, "wf-1", 1)
		objs, err := e.core.builder.Build(st.Body, br)
		if err != nil {
			t.Fatal(err)
		}
		in := e.core.opts.Submit.Input(st.Body, objects.Properties(st.Body, br), objs.Driver)
		var buf bytes.Buffer
		e.core.runSubmit(context.Background(), slog.New(slog.NewTextHandler(&buf, nil)), in, objs.ConfigMap.Data[spark.ExecutorPodTemplateKey], objects.WorkflowOwner(br.Workflow))
		var line string
		for _, l := range strings.Split(buf.String(), "\n") {
			if strings.Contains(l, "running spark-submit") {
				line = l
			}
		}
		if !strings.Contains(line, "spark.executorEnv.DB_URL=") {
			t.Fatalf("shared %v: no conf key in the argv logged: %q", shared, line)
		}
		leaks := strings.Contains(line, "leak01") || strings.Contains(line, "leak02")
		if leaks == shared {
			t.Errorf("shared %v: the argv logged shows values: %v\n%s", shared, leaks, line)
		}
	}
}
