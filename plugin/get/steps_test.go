package get

import (
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/golden"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// A workflow's steps are its Spark nodes, in the order they started (the
// one not started last), with their outputs; another plugin's node and
// the DAG are not steps.
func TestStepsAreTheSparkNodes(t *testing.T) {
	steps := Steps(etl())
	var got []string
	for _, s := range steps {
		got = append(got, s.NodeID+"/"+s.Node+"/"+s.Phase)
	}
	want := []string{"etl-x7k2p-1/pi-a/Succeeded", "etl-x7k2p-2/pi-b/Running", "etl-x7k2p-3/report/Pending"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("steps %q, want %q", got, want)
	}
	b := steps[1]
	if b.Attempt != 2 || b.ApplicationID != "spark-ea812b5bf8d5cf52b575bdf8245a60c4" || b.DriverPod != driverPod(etl(), "etl-x7k2p-2", 2).Name ||
		b.StartedAt != "2026-03-01T10:02:00Z" || b.FinishedAt != "" || b.NodeName != "etl-x7k2p.pi-b" || b.Workflow != "etl-x7k2p" || b.Namespace != "jobs" {
		t.Errorf("pi-b: %+v", b)
	}
	if r := steps[2]; r.DriverPod != "" || r.Attempt != 0 || r.StartedAt != "" || r.Created != "2026-03-01T10:00:00Z" {
		t.Errorf("report, not started: %+v", r)
	}
}

// A driver's status is one word: the reason its container waits or
// ended with, else its phase; a pod that is not the workflow's own
// driver, or none, is Deleted.
func TestDriverStatus(t *testing.T) {
	wf := etl()
	ref := spark.WorkflowRef{Name: wf.Name, Namespace: wf.Namespace, UID: string(wf.UID)}
	pod := func(change func(p *corev1.Pod)) *corev1.Pod {
		p := driverPod(wf, "etl-x7k2p-2", 2)
		change(p)
		return p
	}
	waiting := func(reason string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status = corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: spark.DriverContainerName,
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}}}
		}
	}
	for _, tt := range []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"running", pod(func(*corev1.Pod) {}), "Running"},
		{"image not pulled", pod(waiting("ImagePullBackOff")), "ImagePullBackOff"},
		{"ended", pod(func(p *corev1.Pod) {
			p.Status = corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: spark.DriverContainerName,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}}}
		}), "OOMKilled"},
		{"another container waits", pod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "sidecar",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}})
		}), "Running"},
		{"no status yet", pod(func(p *corev1.Pod) { p.Status = corev1.PodStatus{} }), "Pending"},
		{"being deleted", pod(func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: t0} }), DriverTerminating},
		{"another workflow's pod of the name", pod(func(p *corev1.Pod) { p.OwnerReferences[0].UID = "other" }), DriverDeleted},
		{"none", nil, DriverDeleted},
	} {
		if got := DriverStatus(tt.pod, ref); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// The tables, default, wide and of every namespace, as golden files.
func TestGoldenTables(t *testing.T) {
	steps := append(Steps(etl()), Steps(nightly())...)
	Sort(steps)
	for i := range steps {
		if steps[i].DriverPod != "" {
			steps[i].DriverStatus = "Running"
		}
	}
	for name, table := range map[string]*Table{
		"table":          {},
		"wide":           {Wide: true},
		"all-namespaces": {AllNamespaces: true},
	} {
		got := table.Print(steps, now)
		golden.Compare(t, filepath.Join("testdata", name+".golden.txt"), got)
	}
}

// The widths of the first rows hold for the rows printed after them, the
// header printed once; a message is cut in the default table only.
func TestTableKeepsItsWidths(t *testing.T) {
	steps := Steps(etl())
	table := &Table{}
	first := table.Print(steps[:1], now)
	later := table.Print(steps[1:2], now)
	if strings.Count(first, "WORKFLOW") != 1 || strings.Contains(later, "WORKFLOW") {
		t.Fatalf("the header is printed once, first:\n%s%s", first, later)
	}
	header := strings.Split(first, "\n")[0]
	if i, j := strings.Index(header, "PHASE"), strings.Index(later, "Running"); i != j {
		t.Errorf("PHASE at %d, the later row's phase at %d:\n%s%s", i, j, first, later)
	}
	if !strings.Contains(later, "RUNNING 3/4 executors, 1h20m: executor 4 Pendin...") {
		t.Errorf("the message is not cut at %d characters:\n%s", TableMessage, later)
	}
	if wide := (&Table{Wide: true}).Print(steps[1:2], now); !strings.Contains(wide, steps[1].Message) {
		t.Errorf("-o wide cuts the message:\n%s", wide)
	}
}
