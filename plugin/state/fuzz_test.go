package state

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// argoPhases are the phases an Argo node can have.
var argoPhases = map[wfv1.NodePhase]bool{
	wfv1.NodePending: true, wfv1.NodeRunning: true, wfv1.NodeSucceeded: true, wfv1.NodeSkipped: true,
	wfv1.NodeFailed: true, wfv1.NodeError: true, wfv1.NodeOmitted: true,
}

// FuzzAssess assesses a driver pod and executor pods decoded from fuzzed
// JSON, as the cache would hand them over whatever kubelet, a controller
// or a person wrote into them. Whatever they hold: no panic; the same
// observation gives the same assessment; the phase is one of Argo's node
// phases, Done only with Succeeded or Failed; and the message is one line
// (no line break) within spec.MaxMessageBytes. Plain `go test` runs the
// seeds: pods in every phase and container state the table tests have.
func FuzzAssess(f *testing.F) {
	execs := mustJSON(f, pods(executorPod(corev1.PodRunning, ctr(running())), executorPod(corev1.PodPending),
		executorPod(corev1.PodFailed, ctr(exited(1, "Error", "boom"))), executorPod(corev1.PodUnknown), executorPod("Weird")))
	for _, p := range []*corev1.Pod{
		nil,
		driverPod(""),
		driverPod(corev1.PodPending),
		driverPod(corev1.PodPending, condition(corev1.PodScheduled, corev1.ConditionFalse, "Unschedulable", "0/3 nodes are available: 3 Insufficient memory.")),
		driverPod(corev1.PodPending, condition(corev1.PodScheduled, corev1.ConditionTrue, "", "")),
		driverPod(corev1.PodPending, ctr(waiting("ImagePullBackOff", "Back-off pulling image \"x\"\nagain"))),
		driverPod(corev1.PodPending, initContainer("fetch-deps", waiting("ErrImagePull", `pull access denied`)), ctr(waiting("PodInitializing", ""))),
		driverPod(corev1.PodPending, deleting(), ctr(waiting("ContainerCreating", ""))),
		driverPod(corev1.PodPending, renamed("main"), ctr(waiting("InvalidImageName", `invalid image "a b"`))),
		driverPod(corev1.PodRunning, ctr(running())),
		driverPod(corev1.PodRunning, ctr(running()), deleting()),
		driverPod(corev1.PodRunning, ctr(waiting("ImagePullBackOff", "")), sidecar()),
		driverPod(corev1.PodRunning, ctr(exited(0, "Completed", "")), sidecar()),
		driverPod(corev1.PodRunning, ctr(exited(1, "Error", javaTrace)), sidecar()),
		driverPod(corev1.PodRunning, ctr(exited(143, "Error", "")), sidecar(), deleting()),
		driverPod(corev1.PodSucceeded, ctr(exited(0, "Completed", ""))),
		driverPod(corev1.PodFailed, ctr(exited(1, "Error", pythonTrace))),
		driverPod(corev1.PodFailed, ctr(exited(137, "OOMKilled", ""))),
		driverPod(corev1.PodFailed, ctr(exited(137, "Error", "")), condition(corev1.DisruptionTarget, corev1.ConditionTrue, "PreemptionByScheduler", "")),
		driverPod(corev1.PodFailed, podReason("Evicted", "The node was low on resource: memory.")),
		driverPod(corev1.PodFailed, podReason("DeadlineExceeded", "Pod was active on the node longer than the specified deadline"), ctr(exited(143, "Error", ""))),
		driverPod(corev1.PodFailed, podReason("SomethingElse", "")),
		driverPod(corev1.PodFailed, initContainer("fetch-deps", exited(2, "Error", "curl: (6) Could not resolve host\n"))),
		driverPod(corev1.PodFailed),
		driverPod(corev1.PodFailed, ctr(exited(3, "Error", "Caused by: x")), specless()),
		driverPod(corev1.PodUnknown),
		driverPod("Weird\nPhase"),
	} {
		f.Add(mustJSON(f, p), execs, int32(3), false, int64(60))
	}
	f.Add([]byte(`null`), []byte(`null`), int32(0), true, int64(5))
	// Tabs in the words kubelet and controllers write: a byte away from
	// a line break.
	for _, p := range []string{
		`{"spec":{"containers":[{"name":"spark-kubernetes-driver"}]},"status":{"phase":"Failed","containerStatuses":[{"name":"spark-kubernetes-driver","state":{"terminated":{"exitCode":1,"reason":"Err\tor","message":"Exception in thread \"main\" x:\ty"}}}]}}`,
		`{"status":{"phase":"Pending","containerStatuses":[{"name":"spark-kubernetes-driver","state":{"waiting":{"reason":"Image\tPullBackOff","message":"a\tb"}}}]}}`,
		`{"status":{"phase":"Pending","initContainerStatuses":[{"name":"in\tit","state":{"waiting":{"reason":"Err\tImagePull"}}}],"conditions":[{"type":"PodScheduled","status":"False","reason":"Un\tschedulable"}]}}`,
		`{"status":{"phase":"Failed","reason":"Evic\tted","message":"low\ton memory","initContainerStatuses":[{"name":"in\tit","state":{"terminated":{"exitCode":2,"reason":"Err\tor"}}}]}}`,
		`{"status":{"phase":"Running","containerStatuses":[{"name":"spark-kubernetes-driver","state":{"terminated":{"exitCode":137,"reason":"OOM\tKilled"}}}],"conditions":[{"type":"DisruptionTarget","status":"True","reason":"Pre\temption"}]}}`,
	} {
		f.Add([]byte(p), []byte(`[{"status":{"phase":"Run\tning"}}]`), int32(2), false, int64(0))
	}
	// Reasons went into the message as they were, line breaks and all,
	// and so did the \r of Spark's console progress bar in a termination
	// message, and a phase of any length.
	for _, p := range []string{
		`{"status":{"phase":"Failed","containerStatuses":[{"name":"spark-kubernetes-driver","state":{"terminated":{"exitCode":1,"reason":"Err\nor"}}}]}}`,
		`{"status":{"phase":"Pending","containerStatuses":[{"name":"spark-kubernetes-driver","state":{"waiting":{"reason":"Image\nPullBackOff"}}}]}}`,
		`{"status":{"phase":"Pending","initContainerStatuses":[{"name":"init","state":{"waiting":{"reason":"Err\rImagePull"}}}]}}`,
		`{"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Un\nschedulable"}]}}`,
		`{"status":{"phase":"Failed","reason":"Evic\r\nted"}}`,
		`{"status":{"phase":"Failed","initContainerStatuses":[{"name":"init","state":{"terminated":{"exitCode":2,"reason":"Err\nor"}}}]}}`,
		`{"metadata":{"deletionTimestamp":"2025-03-01T12:00:00Z"},"status":{"phase":"Failed","containerStatuses":[{"name":"spark-kubernetes-driver","state":{"terminated":{"exitCode":143}}}],"conditions":[{"type":"DisruptionTarget","status":"True","reason":"Pre\nemption"}]}}`,
		`{"status":{"phase":"Failed","containerStatuses":[{"name":"spark-kubernetes-driver","state":{"terminated":{"exitCode":1,"reason":"Error","message":"[Stage 0:>   (0 + 1) / 1]\rjava.lang.IllegalStateException: bad"}}}]}}`,
		`{"status":{"phase":"` + strings.Repeat("P", 5000) + `"}}`,
	} {
		f.Add([]byte(p), []byte(`[]`), int32(1), false, int64(0))
	}
	f.Add([]byte(`{"status":{"phase":"Failed","containerStatuses":[{"name":"x","state":{"terminated":{"exitCode":1,"reason":"Error"}}}]}}`), []byte(`[null,{}]`), int32(-1), false, int64(-1))
	f.Fuzz(func(t *testing.T, driver, executors []byte, expected int32, dynamic bool, ago int64) {
		var d *corev1.Pod
		var ex []*corev1.Pod
		if json.Unmarshal(driver, &d) != nil || json.Unmarshal(executors, &ex) != nil {
			return // the cache holds decoded pods only
		}
		now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
		o := Observed{Driver: d, Executors: ex, Expected: expected, Dynamic: dynamic,
			SubmittedAt: now.Add(-time.Duration(ago) * time.Second), Now: now, NotFoundGrace: 30 * time.Second}
		a := Assess(o)
		if again := Assess(o); !reflect.DeepEqual(a, again) {
			t.Fatalf("the same observation gave %+v, then %+v", a, again)
		}
		out := a.Outcome()
		if !argoPhases[wfv1.NodePhase(out.Phase)] || out.Phase != a.Phase() {
			t.Fatalf("phase %q (assessment %q) is not an Argo node phase", out.Phase, a.Phase())
		}
		if a.Done && out.Phase != PhaseSucceeded && out.Phase != PhaseFailed {
			t.Fatalf("a finished attempt in phase %s", out.Phase)
		}
		msg := out.Message()
		if strings.ContainsAny(msg, "\n\r") || len(msg) > spec.MaxMessageBytes {
			t.Fatalf("message of %d bytes is not one line within %d: %.300q", len(msg), spec.MaxMessageBytes, msg)
		}
	})
}

func mustJSON(f *testing.F, v any) []byte {
	f.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		f.Fatal(err)
	}
	return b
}
