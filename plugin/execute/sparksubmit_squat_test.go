package execute

import (
	"context"
	"errors"
	"strings"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/submit/submittest"
)

// spark-submit refuses a driver that exists (a repeated call, a restarted
// plugin, and the cache has not shown it): sparkplug finds it by a GET and
// continues with it if it is this run's driver (this Workflow owns it, it
// carries this run's labels), as the native launcher does; the next pass
// reports it. Any other pod of the name (a squatter's, another Workflow's,
// one this run's spark-submit did not create and no Workflow owns) fails
// the attempt, named, and is left as it is: no owner is added to it
// (issue 20, finding 2). The pod lives only behind the reactors, so the
// informers never list it: only what sparkplug wrote into the cache shows
// it.
func TestSparkSubmitAlreadyExists(t *testing.T) {
	wfOwner := objects.WorkflowOwner(spark.WorkflowRef{Name: "wf", Namespace: "ns", UID: "uid-1"})
	tests := []struct {
		name   string
		mutate func(p *corev1.Pod)
		refuse string // "" takes the driver
	}{
		{"this run's driver", func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{wfOwner} }, ""},
		{"no Workflow owns it", func(*corev1.Pod) {}, "it is not owned by Workflow wf (uid uid-1)"},
		{"another Workflow owns it", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{objects.WorkflowOwner(spark.WorkflowRef{Name: "other", Namespace: "ns", UID: "uid-other"})}
		}, "it is not owned by Workflow wf (uid uid-1)"},
		{"another run's labels", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{wfOwner}
			p.Labels[spark.LabelWorkflowUID] = "uid-other"
		}, `its label sparkplug.io/workflow-uid is "uid-other", not this run's "uid-1"`},
		{"another attempt's labels", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{wfOwner}
			p.Labels[spark.LabelAttempt] = "2"
		}, "its label sparkplug.io/attempt is \"2\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newSubmitEnv(t, submittest.Config{ExitCode: 1, Stderr: "Exception in thread \"main\" io.fabric8.kubernetes.client.KubernetesClientException: Failure executing: POST. Message: pods \"x\" already exists.\n"}, "", nil)
			pod := e.submitted(t)
			tt.mutate(pod)
			var patches []string
			e.kube.PrependReactor("get", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if a.(k8stesting.GetAction).GetName() != pod.Name {
					return false, nil, nil
				}
				return true, pod.DeepCopy(), nil
			})
			e.kube.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				patches = append(patches, string(a.(k8stesting.PatchAction).GetPatch()))
				return true, nil, errors.New("no patch expected")
			})
			r := e.pass(t)
			if n := len(submittest.Calls(t, e.record)); n != 1 {
				t.Fatalf("%d spark-submit runs, want 1", n)
			}
			if len(patches) != 0 {
				t.Fatalf("patches %q; want none", patches)
			}
			if tt.refuse != "" {
				want := "SUBMISSION_FAILED: pod " + pod.Name + ": "
				if r.Node == nil || r.Node.Phase != wfv1.NodeFailed || !strings.HasPrefix(r.Node.Message, want) || !strings.Contains(r.Node.Message, tt.refuse) ||
					!strings.Contains(r.Node.Message, "so it is not this run's driver: delete it") {
					t.Fatalf("result %+v; want Failed %q...%q", r.Node, want, tt.refuse)
				}
				if _, err := e.kube.CoreV1().Services("ns").Get(context.Background(), objects.ServiceName(pod.Name), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Fatalf("a Service for the squatted driver: %v", err)
				}
				return
			}
			if r.Node != nil {
				t.Fatalf("the launching pass offered %+v; want nothing until the next pass", r.Node)
			}
			r = e.pass(t)
			if r.Node == nil || r.Node.Phase != wfv1.NodePending || !strings.HasPrefix(r.Node.Message, "SUBMITTED") {
				t.Fatalf("result %+v; want the existing driver, submitted", r.Node)
			}
			if got := param(r, spark.OutputDriverPod); got != pod.Name {
				t.Fatalf("driver-pod output %q, want %q", got, pod.Name)
			}
			if got := param(r, spark.OutputApplicationID); got != "spark-fromsubmit" {
				t.Fatalf("application id %q, want the driver's own", got)
			}
			// sparkplug's Service selects the driver by the id spark-submit chose.
			svc, err := e.kube.CoreV1().Services("ns").Get(context.Background(), objects.ServiceName(pod.Name), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if svc.Spec.Selector[spark.LabelAppSelector] != "spark-fromsubmit" {
				t.Fatalf("service selector %v, want spark-app-selector spark-fromsubmit", svc.Spec.Selector)
			}
		})
	}
}

// A driver this run's spark-submit created without the Workflow as owner
// (the pod exists after it exited 0: spark-submit refuses one that exists)
// is given the Workflow as owner by a strategic merge that names the pod's
// uid, so it applies to that very pod only, then followed.
func TestSparkSubmitOwnsTheDriverItsRunCreated(t *testing.T) {
	e := newSubmitEnv(t, submittest.Config{}, "", nil)
	pod := e.submitted(t)
	var patches []string
	e.kube.PrependReactor("get", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.(k8stesting.GetAction).GetName() != pod.Name {
			return false, nil, nil
		}
		return true, pod.DeepCopy(), nil
	})
	e.kube.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		patches = append(patches, string(p.GetPatchType())+" "+string(p.GetPatch()))
		owned := pod.DeepCopy()
		owned.OwnerReferences = []metav1.OwnerReference{objects.WorkflowOwner(spark.WorkflowRef{Name: "wf", Namespace: "ns", UID: "uid-1"})}
		return true, owned, nil
	})
	e.pass(t)
	r := e.pass(t)
	if r.Node == nil || r.Node.Phase != wfv1.NodePending || param(r, spark.OutputDriverPod) != pod.Name {
		t.Fatalf("result %+v; want the driver, submitted", r.Node)
	}
	if len(patches) != 1 || !strings.HasPrefix(patches[0], string(types.StrategicMergePatchType)) ||
		!strings.Contains(patches[0], `"uid":"pod-uid"`) || !strings.Contains(patches[0], `"kind":"Workflow"`) || !strings.Contains(patches[0], `"uid":"uid-1"`) {
		t.Fatalf("patches %q; want one strategic merge adding the Workflow owner to this pod", patches)
	}
}

// A pod with the driver's name and this run's labels, which no spark-submit
// of this run created and no Workflow owns, fails the attempt before any
// spark-submit runs; nothing is added to it (issue 20, finding 2).
func TestSparkSubmitRefusesASquatterInTheCache(t *testing.T) {
	e := newSubmitEnv(t, submittest.Config{}, "", nil)
	e.createDriver(t)
	e.waitCached(t)
	r := e.pass(t)
	if r.Node == nil || r.Node.Phase != wfv1.NodeFailed || !strings.Contains(r.Node.Message, "it is not owned by Workflow wf (uid uid-1), so it is not this run's driver") {
		t.Fatalf("result %+v; want Failed naming the squatter", r.Node)
	}
	if n := len(submittest.Calls(t, e.record)); n != 0 {
		t.Fatalf("%d spark-submit runs, want none", n)
	}
	p, err := e.kube.CoreV1().Pods("ns").Get(context.Background(), e.driverName(t), metav1.GetOptions{})
	if err != nil || len(p.OwnerReferences) != 0 {
		t.Fatalf("squatter %v (%v); want it as it was", p.OwnerReferences, err)
	}
}
