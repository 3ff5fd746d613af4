package execute

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/sparkplug-io/sparkplug/plugin/driverpod"
	"github.com/sparkplug-io/sparkplug/plugin/identity"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/state"
	"github.com/sparkplug-io/sparkplug/plugin/step"
	"github.com/sparkplug-io/sparkplug/templates"
)

// decideRow is one scenario: what it decides and what it must decide.
type decideRow struct {
	name   string
	decide func(t *testing.T) got
	want   got
	msg    string // a part of the message (or of got.text)
}

func runDecideTable(t *testing.T, rows []decideRow) {
	t.Helper()
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			check(t, row.decide(t), row.want, row.msg)
		})
	}
}

// policies of the table.
func never(t *testing.T) policy { return policyOf(t, "", 0) }

func onFailure(t *testing.T) policy {
	return policyOf(t, `"restartPolicy":{"type":"OnFailure","onFailureRetries":2,"onFailureRetryInterval":10,"onSubmissionFailureRetries":2,"onSubmissionFailureRetryInterval":5}`, 0)
}

func policyOf(t *testing.T, extra string, timeout time.Duration) policy {
	return policy{body: sparkBody(t, extra), timeout: timeout, notFoundGrace: 30 * time.Second, handoutGrace: time.Minute}
}

var (
	pending   = wfv1.NodePending
	runningPh = wfv1.NodeRunning
	succeeded = wfv1.NodeSucceeded
	failedPh  = wfv1.NodeFailed
)

func ph(p wfv1.NodePhase, s spark.State) state.Outcome { return state.Outcome{Phase: p, State: s} }

// TestDecideWhatHappensWhen has a row for every row of the README's "What
// happens when ..." table, named after it.
func TestDecideWhatHappensWhen(t *testing.T) {
	one := []identity.Task{open("n1")}
	runDecideTable(t, []decideRow{
		{name: "the driver exits 0: Succeeded COMPLETED, handed to its own node",
			decide: func(t *testing.T) got {
				return planned(snap(t0.Add(2*time.Minute), one, runOf(driver("n1", 1, exited(0, "Completed")))), never(t))
			},
			want: got{answer: "n1", final: true, record: identity.ModeOwn, outcome: ph(succeeded, spark.StateCompleted)}, msg: "COMPLETED"},
		{name: "the driver exits non-zero: Failed with its exit code, never rerun by Never",
			decide: func(t *testing.T) got {
				return planned(snap(t0.Add(2*time.Minute), one, runOf(driver("n1", 1, exited(1, "Error")))), never(t))
			},
			want: got{final: true, record: identity.ModeOwn, outcome: ph(failedPh, spark.StateFailed)}, msg: "FAILED: driver exited 1 (Error)"},
		{name: "the driver exits non-zero: OnFailure waits out the interval",
			decide: func(t *testing.T) got {
				return planned(snap(t0.Add(time.Minute+5*time.Second), one, runOf(driver("n1", 1, exited(1, "Error")))), onFailure(t))
			},
			want: got{outcome: ph(runningPh, spark.StatePendingRerun)}, msg: "PENDING_RERUN: attempt 2/3 in 5s: FAILED: driver exited 1"},
		{name: "the driver exits non-zero: OnFailure reruns in the same node after the interval",
			decide: func(t *testing.T) got {
				return planned(snap(t0.Add(time.Minute+10*time.Second), one, runOf(driver("n1", 1, exited(1, "Error")))), onFailure(t))
			},
			want: got{relaunch: true, outcome: ph(runningPh, spark.StatePendingRerun)}, msg: "starting attempt 2/3 after"},
		{name: "exit 143: Failed, the message says SIGTERM",
			decide: func(t *testing.T) got {
				return planned(snap(t0.Add(2*time.Minute), one, runOf(driver("n1", 1, exited(spark.ExitCodeSIGTERM, "Error")))), never(t))
			},
			want: got{final: true, record: identity.ModeOwn, outcome: ph(failedPh, spark.StateFailed)}, msg: "SIGTERM"},
		{name: "the driver is evicted: an infrastructure failure, rerun by OnInfrastructureFailure",
			decide: func(t *testing.T) got {
				p := policyOf(t, `"restartPolicy":{"type":"OnInfrastructureFailure","onFailureRetries":1,"onFailureRetryInterval":10}`, 0)
				return planned(snap(t0.Add(time.Hour), one, runOf(driver("n1", 1, evicted()))), p)
			},
			want: got{outcome: ph(runningPh, spark.StatePendingRerun)}, msg: "attempt 2/2 in 10s: FAILED: driver evicted (Evicted)"},
		{name: "the driver is deleted by someone else: not found after the grace, never silently relaunched",
			decide: func(t *testing.T) got {
				return planned(snap(t0.Add(31*time.Second), []identity.Task{done("n1", pending, "n1-a1-driver", 1)}, ghostOf("n1", 1, t0)), never(t))
			},
			want: got{final: true, record: identity.ModeOwn, outcome: ph(failedPh, spark.StateFailed)}, msg: "not found"},
		{name: "the driver is deleted by someone else: within the grace, the node waits",
			decide: func(t *testing.T) got {
				return planned(snap(t0.Add(10*time.Second), []identity.Task{done("n1", pending, "n1-a1-driver", 1)}, ghostOf("n1", 1, t0)), never(t))
			},
			want: got{answer: "n1"}},
		{name: "the driver cannot start (ImagePullBackOff): Failed at once, the driver stopped",
			decide: func(t *testing.T) got {
				return planned(snap(t0.Add(10*time.Second), one, runOf(driver("n1", 1, waitingOn("ImagePullBackOff")))), never(t))
			},
			want: got{stop: limitCannotStart, final: true, record: identity.ModeOwn, outcome: ph(failedPh, spark.StateFailed)}, msg: "ImagePullBackOff"},
		{name: "the driver stays Pending longer than sparkplug.pendingTimeout: Failed, the driver stopped",
			decide: func(t *testing.T) got {
				p := policyOf(t, `"sparkplug":{"pendingTimeout":"5m"}`, 0)
				return planned(snap(t0.Add(6*time.Minute), one, runOf(driver("n1", 1, waitingOn("ContainerCreating")))), p)
			},
			want: got{stop: limitPending, final: true, record: identity.ModeOwn, outcome: ph(failedPh, spark.StateFailed)}, msg: "did not start within 5m0s"},
		{name: "the template's timeout runs out: Failed, never rerun, the driver stopped",
			decide: func(t *testing.T) got {
				p := onFailure(t)
				p.timeout = 10 * time.Minute
				return planned(snap(t0.Add(11*time.Minute), one, runOf(driver("n1", 1, running()))), p)
			},
			want: got{stop: limitTimeout, final: true, record: identity.ModeOwn, outcome: ph(failedPh, spark.StateFailed)}, msg: "timed out after 10m0s"},
		{name: "the API server rejects the driver: retried per onSubmissionFailureRetries",
			decide: func(t *testing.T) got {
				return outcomeOf(afterRefusal(submissionFailure{count: 1, message: "pods is forbidden: exceeded quota"}, onFailure(t)))
			},
			want: got{outcome: ph(pending, spark.StateSubmissionFailed)}, msg: "SUBMISSION_FAILED: retry 1/2 soon: pods is forbidden"},
		{name: "the API server rejects the driver: a retry waits out its interval",
			decide: func(t *testing.T) got {
				s := snap(t0.Add(2*time.Second), one)
				s.failures[failKey("n1", 1)] = submissionFailure{count: 1, at: t0, message: "pods is forbidden"}
				return planned(s, onFailure(t))
			},
			want: got{launch: []string{"n1"}, blocked: true, outcome: ph(pending, spark.StateSubmissionFailed)}, msg: "retry 1/2 in 3s: pods is forbidden"},
		{name: "the API server rejects the driver: Failed once the retries are used",
			decide: func(t *testing.T) got {
				return outcomeOf(afterRefusal(submissionFailure{count: 3, message: "pods is forbidden"}, onFailure(t)))
			},
			want: got{final: true, outcome: ph(failedPh, spark.StateSubmissionFailed)}, msg: "SUBMISSION_FAILED: pods is forbidden"},
		{name: "batchScheduler's PodGroup CRD is not installed: a refused submission that names the fix",
			decide: func(t *testing.T) got {
				s := sparkBody(t, `"batchScheduler":"volcano"`)
				objs, err := newBuilder(t).Build(s, objects.Run{Workflow: spark.WorkflowRef{Name: "wf", Namespace: "jobs", UID: "u"}, NodeID: "n1", TemplateKey: "k", Attempt: 1})
				if err != nil {
					t.Fatal(err)
				}
				return outcomeOf(afterRefusal(submissionFailure{count: 1, message: objects.MissingPodGroupCRD(objs.PodGroup)}, never(t)))
			},
			want: got{final: true, outcome: ph(failedPh, spark.StateSubmissionFailed)}, msg: "install Volcano, or remove spark.batchScheduler"},
		{name: "spark-submit fails: a refused submission",
			decide: func(t *testing.T) got {
				return outcomeOf(afterRefusal(submissionFailure{count: 1, message: "spark-submit exited 1: java.lang.ClassNotFoundException: Pi"}, never(t)))
			},
			want: got{final: true, outcome: ph(failedPh, spark.StateSubmissionFailed)}, msg: "SUBMISSION_FAILED: spark-submit exited 1"},
		{name: "the API server refuses the driver's ConfigMap or Service: a driver not started is a refused submission",
			decide: func(t *testing.T) got {
				objs := &objects.Set{Service: &corev1.Service{}, ConfigMap: &corev1.ConfigMap{}}
				return got{required: companionRequired(objs, objs.Service) && companionRequired(objs, objs.ConfigMap),
					runsOn: keepsRunning(driver("n1", 1))}
			},
			want: got{required: true}},
		{name: "the API server refuses the driver's ConfigMap or Service: a running driver runs on",
			decide: func(t *testing.T) got { return got{runsOn: keepsRunning(driver("n1", 1, running()))} },
			want:   got{runsOn: true}},
		{name: "the API server refuses the UI Service or an Ingress: the application runs without it",
			decide: func(t *testing.T) got {
				ui := &corev1.Service{}
				return got{required: companionRequired(&objects.Set{Extra: []objects.Object{ui}}, ui)}
			},
			want: got{required: false}},
		{name: "a transient API error: Pending, asked again",
			decide: func(t *testing.T) got {
				return outcomeOf(answerAPIError(t, apierrors.NewServerTimeout(schema.GroupResource{Resource: "pods"}, "create", 1)))
			},
			want: got{outcome: ph(pending, spark.StateSubmitted)}, msg: "retrying after a transient API error"},
		{name: "a lasting API error is no transient one: a refused submission",
			decide: func(t *testing.T) got {
				return outcomeOf(answerAPIError(t, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "x", errors.New("no"))))
			},
			want: got{final: true, outcome: ph(failedPh, spark.StateSubmissionFailed)}, msg: "forbidden"},
		{name: "the workflow is stopped or terminated: its running drivers are deleted, finished ones kept",
			decide: func(t *testing.T) got {
				w := &wfv1.Workflow{}
				w.UID, w.Spec.Shutdown = "u", wfv1.ShutdownStrategyStop
				why, sweep := sweepReason(w, "u")
				return got{sweep: sweep && !driverpod.Finished(driver("n1", 1, running())) && driverpod.Finished(driver("n2", 1, exited(0, "Completed"))), text: why}
			},
			want: got{sweep: true}, msg: "shut down (Stop)"},
		{name: "the workflow is deleted: its drivers go with it through their ownerReference",
			decide: func(t *testing.T) got {
				why, sweep := sweepReason(nil, "u")
				o := objects.WorkflowOwner(spark.WorkflowRef{Name: "wf", Namespace: "jobs", UID: "u"})
				return got{sweep: sweep, text: why + "; owner " + o.Kind + " " + string(o.UID)}
			},
			want: got{sweep: true}, msg: "deleted; owner Workflow u"},
		{name: "the agent pod goes: a running workflow's drivers are left alone",
			decide: func(t *testing.T) got {
				w := &wfv1.Workflow{}
				w.UID, w.Status.Phase = "u", wfv1.WorkflowRunning
				_, sweep := sweepReason(w, "u")
				return got{sweep: sweep}
			},
			want: got{sweep: false}},
		{name: "the plugin restarts mid-run: the same driver answers, none is launched",
			decide: func(t *testing.T) got {
				return planned(snap(t0.Add(time.Minute), one, runOf(driver("n1", 1, running()))), never(t))
			},
			want: got{answer: "n1", outcome: ph(runningPh, spark.StateRunning)}, msg: "RUNNING 0/1 executor"},
		{name: "two identical tasks: each node gets its own driver",
			decide: func(t *testing.T) got {
				return planned(snap(t0, []identity.Task{open("n2"), open("n1")}), never(t))
			},
			want: got{launch: []string{"n1", "n2"}, answer: "n1"}},
		{name: "two identical tasks: a final result is handed to exactly one node, as shared",
			decide: func(t *testing.T) got {
				return planned(snap(t0.Add(2*time.Minute), []identity.Task{open("n1"), open("n2")},
					runOf(driver("n1", 1, running())), runOf(driver("n2", 1, exited(0, "Completed")))), never(t))
			},
			want: got{answer: "n2", final: true, record: identity.ModeShared, outcome: ph(succeeded, spark.StateCompleted)}},
		{name: "a Spark step in withItems: the result is a JSON string",
			decide: func(t *testing.T) got {
				s := snap(t0.Add(time.Minute), one, runOf(driver("n1", 1, running())))
				s.nodes = loopNodes("n1")
				return planned(s, never(t))
			},
			want: got{answer: "n1", json: true, outcome: ph(runningPh, spark.StateRunning)}},
		{name: "the request is not a spark template: left to other plugins",
			decide: func(t *testing.T) got {
				_, ok, err := step.Parse(&wfv1.Template{Name: "x", Plugin: &wfv1.Plugin{Object: wfv1.Object{Value: json.RawMessage(`{"slack":{}}`)}}}, spec.PluginDefaults{})
				if err != nil {
					t.Fatal(err)
				}
				return got{sweep: ok}
			},
			want: got{sweep: false}},
		{name: "the spark body is invalid: Failed, naming the field and the fix",
			decide: func(t *testing.T) got {
				_, ok, err := step.Parse(&wfv1.Template{Name: "x", Plugin: &wfv1.Plugin{Object: wfv1.Object{Value: json.RawMessage(`{"spark":{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","restartPolicy":{"type":"Sometimes"}}}`)}}}, spec.PluginDefaults{})
				if !ok || err == nil {
					t.Fatalf("Parse: ok=%v err=%v; want an invalid spark step", ok, err)
				}
				return outcomeOf(invalid(err))
			},
			want: got{final: true, outcome: state.Outcome{Phase: failedPh}}, msg: "spark.restartPolicy.type"},
	})
}

// answerAPIError is the answer act gives when a create fails with err:
// asked again when it is transient, else a refused submission.
func answerAPIError(t *testing.T, err error) state.Outcome {
	if isTransient(err) {
		return transient(err.Error())
	}
	return afterRefusal(submissionFailure{count: 1, message: apiMessage(err)}, never(t))
}

func newBuilder(t *testing.T) *objects.Builder {
	t.Helper()
	b, err := objects.New(templates.FS)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every answer's message is bounded, whatever grew it.
func TestReplyBoundsTheMessage(t *testing.T) {
	o := state.SubmissionFailed("spark-submit exited 1: " + strings.Repeat("java.lang.Exception at ...\n", 2000))
	r := reply(o, nil, false, sparkBody(t, ""), DefaultOptions())
	if len(r.Node.Message) > spec.MaxMessageBytes || !strings.HasPrefix(r.Node.Message, "SUBMISSION_FAILED: spark-submit exited 1: java.lang.Exception") {
		t.Fatalf("message of %d bytes starting %q", len(r.Node.Message), r.Node.Message[:60])
	}
}
