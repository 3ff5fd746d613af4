package kueue

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

func workload(conds []metav1.Condition, adm *Admission) *Workload {
	return &Workload{ObjectMeta: metav1.ObjectMeta{Name: "wf-1234abcd-kueue", UID: "u1"},
		Spec:   WorkloadSpec{QueueName: "lq", PodSets: []PodSet{{Name: PodSetDriver, Count: 1}}},
		Status: WorkloadStatus{Conditions: conds, Admission: adm}}
}

func cond(t, status, reason, msg string, at time.Time) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(at)}
}

func TestReadSaysWhatKueueDecided(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	adm := &Admission{ClusterQueue: "cq", PodSetAssignments: []PodSetAssignment{
		{Name: PodSetDriver, Flavors: map[corev1.ResourceName]string{"cpu": "on-demand", "memory": "on-demand"}, Count: ptr.To[int32](1)},
		{Name: PodSetExecutor, Flavors: map[corev1.ResourceName]string{"cpu": "spot"}, Count: ptr.To[int32](3)}}}
	for _, tc := range []struct {
		name string
		w    *Workload
		want View
	}{
		{"new", workload(nil, nil), View{}},
		{"waiting for quota", workload([]metav1.Condition{cond(ConditionQuotaReserved, "False", "Pending", "couldn't assign flavors to pod set driver: insufficient quota", at)}, nil),
			View{Waiting: "couldn't assign flavors to pod set driver: insufficient quota"}},
		{"quota reserved, checks pending", workload([]metav1.Condition{cond(ConditionQuotaReserved, "True", "QuotaReserved", "", at),
			cond(ConditionAdmitted, "False", "NoChecks", "The workload has not all checks ready", at)}, adm),
			View{Waiting: "The workload has not all checks ready", Admission: adm}},
		{"admitted", workload([]metav1.Condition{cond(ConditionQuotaReserved, "True", "QuotaReserved", "", at), cond(ConditionAdmitted, "True", "Admitted", "", at)}, adm),
			View{Admitted: true, AdmittedAt: at, Admission: adm}},
		{"evicted while admitted", workload([]metav1.Condition{cond(ConditionAdmitted, "True", "Admitted", "", at),
			cond(ConditionEvicted, "True", ReasonPreempted, "Preempted to accommodate a workload", at)}, adm),
			View{Evicted: true, EvictedReason: ReasonPreempted, EvictedMessage: "Preempted to accommodate a workload", Admission: adm}},
		{"pods ready", workload([]metav1.Condition{cond(ConditionAdmitted, "True", "Admitted", "", at), cond(ConditionPodsReady, "True", "PodsReady", "", at)}, adm),
			View{Admitted: true, AdmittedAt: at, PodsReady: true, Admission: adm}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := ToUnstructured(tc.w)
			if err != nil {
				t.Fatal(err)
			}
			// ToUnstructured drops the status a creator never sets; put it
			// back as the API server returns it.
			u.Object["status"] = statusOf(t, tc.w)
			got, err := Read(u)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Name, tc.want.UID, tc.want.LocalQueue = "wf-1234abcd-kueue", "u1", "lq"
			if got.Admitted != tc.want.Admitted || !got.AdmittedAt.Equal(tc.want.AdmittedAt) || got.Waiting != tc.want.Waiting ||
				got.Evicted != tc.want.Evicted || got.EvictedReason != tc.want.EvictedReason || got.EvictedMessage != tc.want.EvictedMessage ||
				got.PodsReady != tc.want.PodsReady || (got.Admission == nil) != (tc.want.Admission == nil) ||
				got.Name != tc.want.Name || got.UID != tc.want.UID || got.LocalQueue != tc.want.LocalQueue {
				t.Errorf("Read = %+v, want %+v", got, tc.want)
			}
		})
	}
	v := View{Admission: adm}
	if n, ok := v.Assigned(PodSetExecutor); !ok || n != 3 {
		t.Errorf("Assigned(executor) = %d, %v; want 3, true", n, ok)
	}
	if got := strings.Join(adm.Flavors(), ","); got != "on-demand,spot" && got != "spot,on-demand" {
		t.Errorf("Flavors = %q, want on-demand and spot once each", got)
	}
}

// statusOf is w's status as the API server returns it.
func statusOf(t *testing.T, w *Workload) map[string]any {
	t.Helper()
	m := map[string]any{}
	conds := []any{}
	for _, c := range w.Status.Conditions {
		conds = append(conds, map[string]any{"type": c.Type, "status": string(c.Status), "reason": c.Reason, "message": c.Message,
			"lastTransitionTime": c.LastTransitionTime.UTC().Format(time.RFC3339)})
	}
	m["conditions"] = conds
	if a := w.Status.Admission; a != nil {
		var psa []any
		for _, p := range a.PodSetAssignments {
			fl := map[string]any{}
			for k, v := range p.Flavors {
				fl[string(k)] = v
			}
			e := map[string]any{"name": p.Name, "flavors": fl}
			if p.Count != nil {
				e["count"] = int64(*p.Count)
			}
			psa = append(psa, e)
		}
		m["admission"] = map[string]any{"clusterQueue": a.ClusterQueue, "podSetAssignments": psa}
	}
	return m
}

func body() *spec.SparkApplicationSpec {
	return &spec.SparkApplicationSpec{
		NodeSelector: map[string]string{"team": "data"},
		Driver:       spec.DriverSpec{SparkPodSpec: spec.SparkPodSpec{Labels: map[string]string{"app": "pi"}}},
		Executor:     spec.ExecutorSpec{Instances: ptr.To[int32](4)},
	}
}

func admitted(execCount int32, flavors ...string) View {
	driver := map[corev1.ResourceName]string{"cpu": flavors[0]}
	exec := map[corev1.ResourceName]string{"cpu": flavors[len(flavors)-1], "memory": flavors[len(flavors)-1]}
	return View{Admitted: true, Admission: &Admission{ClusterQueue: "cq", PodSetAssignments: []PodSetAssignment{
		{Name: PodSetDriver, Flavors: driver, Count: ptr.To[int32](1)},
		{Name: PodSetExecutor, Flavors: exec, Count: ptr.To(execCount)}}}}
}

func TestAdmitAppliesTheFlavorsToDriverAndExecutors(t *testing.T) {
	spot := corev1.Toleration{Key: "spot", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	flavors := map[string]ResourceFlavorSpec{
		"on-demand": {NodeLabels: map[string]string{"pool": "on-demand"}},
		"spot":      {NodeLabels: map[string]string{"pool": "spot", "team": "data"}, Tolerations: []corev1.Toleration{spot}},
	}
	in := body()
	got, err := Admit(in, "wl", admitted(4, "on-demand", "spot"), flavors)
	if err != nil {
		t.Fatal(err)
	}
	if got.Driver.NodeSelector["pool"] != "on-demand" || len(got.Driver.Tolerations) != 0 {
		t.Errorf("driver nodeSelector %v tolerations %v, want pool=on-demand and none", got.Driver.NodeSelector, got.Driver.Tolerations)
	}
	if got.Executor.NodeSelector["pool"] != "spot" || got.Executor.NodeSelector["team"] != "data" || len(got.Executor.Tolerations) != 1 || got.Executor.Tolerations[0] != spot {
		t.Errorf("executor nodeSelector %v tolerations %v, want pool=spot team=data and the spot toleration", got.Executor.NodeSelector, got.Executor.Tolerations)
	}
	if got.Driver.Labels[LabelPodSet] != PodSetDriver || got.Driver.Annotations[AnnotationWorkload] != "wl" || got.Driver.Labels["app"] != "pi" ||
		got.Executor.Labels[LabelPodSet] != PodSetExecutor || got.Executor.Annotations[AnnotationWorkload] != "wl" {
		t.Errorf("driver %v %v, executor %v %v: want the pod set labels and the Workload annotation, the body's own labels kept",
			got.Driver.Labels, got.Driver.Annotations, got.Executor.Labels, got.Executor.Annotations)
	}
	if len(in.Driver.NodeSelector) != 0 || in.Driver.Labels[LabelPodSet] != "" || len(in.Executor.Tolerations) != 0 {
		t.Errorf("Admit changed the step's own body: %+v", in)
	}
}

func TestAdmitCapsTheExecutorsAtTheAdmittedCount(t *testing.T) {
	flavors := map[string]ResourceFlavorSpec{"f": {}}
	got, err := Admit(body(), "wl", admitted(3, "f"), flavors)
	if err != nil {
		t.Fatal(err)
	}
	if *got.Executor.Instances != 3 {
		t.Errorf("instances = %d, want the admitted 3", *got.Executor.Instances)
	}
	dyn := body()
	dyn.DynamicAllocation = &spec.DynamicAllocation{Enabled: true, MinExecutors: ptr.To[int32](2), InitialExecutors: ptr.To[int32](6), MaxExecutors: ptr.To[int32](10)}
	got, err = Admit(dyn, "wl", admitted(5, "f"), flavors)
	if err != nil {
		t.Fatal(err)
	}
	d := got.DynamicAllocation
	if *d.MaxExecutors != 5 || *d.InitialExecutors != 5 || *d.MinExecutors != 2 {
		t.Errorf("dynamic allocation min %d initial %d max %d, want 2, 5, 5 (capped at the admitted 5)", *d.MinExecutors, *d.InitialExecutors, *d.MaxExecutors)
	}
}

func TestAdmitRefusesAFlavorTheBodyContradicts(t *testing.T) {
	flavors := map[string]ResourceFlavorSpec{"gpu": {NodeLabels: map[string]string{"team": "ml"}}}
	_, err := Admit(body(), "wl", admitted(4, "gpu"), flavors)
	var conflict *ConflictError
	if err == nil || !asConflict(err, &conflict) || !strings.Contains(err.Error(), `spark.nodeSelector[team] is "data"`) || !strings.Contains(err.Error(), "ResourceFlavor gpu") {
		t.Errorf("err = %v, want a ConflictError naming spark.nodeSelector[team] and the flavor", err)
	}
	if _, err := Admit(body(), "wl", admitted(4, "unknown"), flavors); err == nil || !strings.Contains(err.Error(), "ResourceFlavor unknown") {
		t.Errorf("an unread flavor: err = %v, want it named", err)
	}
}

func asConflict(err error, target **ConflictError) bool {
	c, ok := err.(*ConflictError)
	*target = c
	return ok
}

func TestCheckDynamicNeedsMaxExecutors(t *testing.T) {
	s := body()
	if err := CheckDynamic(s); err != nil {
		t.Errorf("static executors: %v", err)
	}
	s.DynamicAllocation = &spec.DynamicAllocation{Enabled: true}
	if err := CheckDynamic(s); err == nil || !strings.Contains(err.Error(), "spark.dynamicAllocation.maxExecutors is required") {
		t.Errorf("unbounded dynamic allocation: err = %v, want the field named", err)
	}
	s.DynamicAllocation.MaxExecutors = ptr.To[int32](8)
	if err := CheckDynamic(s); err != nil {
		t.Errorf("bounded dynamic allocation: %v", err)
	}
}

func TestQueueOfPrefersTheTemplateLabel(t *testing.T) {
	if got := QueueOf(map[string]string{LabelQueueName: "team-a"}, "default"); got != "team-a" {
		t.Errorf("labelled: %q", got)
	}
	if got := QueueOf(nil, "default"); got != "default" {
		t.Errorf("unlabelled with a default: %q", got)
	}
	if got := QueueOf(map[string]string{"other": "x"}, ""); got != "" {
		t.Errorf("unlabelled without a default: %q", got)
	}
}

// A pendingworkloads answer, as Kueue's visibility API gives it.
func TestPositionsReadsThePendingWorkloads(t *testing.T) {
	body := `{"kind":"PendingWorkloadsSummary","apiVersion":"visibility.kueue.x-k8s.io/v1beta2","metadata":{},"items":[
	 {"metadata":{"name":"a-kueue","namespace":"data"},"priority":0,"localQueueName":"lq","positionInClusterQueue":3,"positionInLocalQueue":0},
	 {"metadata":{"name":"b-kueue","namespace":"data"},"priority":0,"localQueueName":"lq","positionInClusterQueue":5,"positionInLocalQueue":1}]}`
	got, err := Positions([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["a-kueue"] != 0 || got["b-kueue"] != 1 {
		t.Errorf("Positions = %v, want a-kueue 0 and b-kueue 1", got)
	}
	if _, err := Positions([]byte("not json")); err == nil {
		t.Error("a body that is not JSON is read without an error")
	}
	if p := PendingPath("data", "lq"); p != "/apis/visibility.kueue.x-k8s.io/v1beta2/namespaces/data/localqueues/lq/pendingworkloads" {
		t.Errorf("PendingPath = %s", p)
	}
}

// Pending and Preempted are what decide and gather ask of a View: a
// Workload that still waits for Kueue, and one Kueue evicted for another.
func TestPendingAndPreempted(t *testing.T) {
	for _, tc := range []struct {
		name               string
		v                  View
		pending, preempted bool
	}{
		{"waiting", View{LocalQueue: "lq"}, true, false},
		{"no queue", View{}, false, false},
		{"admitted", View{LocalQueue: "lq", Admitted: true}, false, false},
		{"being deleted", View{LocalQueue: "lq", Deleting: true}, false, false},
		{"preempted", View{LocalQueue: "lq", Evicted: true, EvictedReason: ReasonPreempted}, false, true},
		{"evicted otherwise", View{LocalQueue: "lq", Evicted: true, EvictedReason: "PodsReadyTimeout"}, false, false},
		{"reason without eviction", View{LocalQueue: "lq", EvictedReason: ReasonPreempted}, true, false},
	} {
		if got := tc.v.Pending(); got != tc.pending {
			t.Errorf("%s: Pending = %v, want %v", tc.name, got, tc.pending)
		}
		if got := tc.v.Preempted(); got != tc.preempted {
			t.Errorf("%s: Preempted = %v, want %v", tc.name, got, tc.preempted)
		}
	}
}
