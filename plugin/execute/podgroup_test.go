package execute

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/sparkplug-io/sparkplug/plugin/scope"
)

var volcanoPodGroups = schema.GroupVersionResource{Group: "scheduling.volcano.sh", Version: "v1beta1", Resource: "podgroups"}

// newPodGroupCore starts a Core on fake clients whose spark body asks for
// Volcano, pod creates failing with podErr and PodGroup creates with pgErr
// (when not nil). It returns the writes made so far, in order, as "verb
// resource" (but the review of sparkplug's own permissions, which runs in
// the background), the dynamic client, and a reconcile pass of the node,
// with the result it offered (nil: none yet).
func newPodGroupCore(t *testing.T, podErr, pgErr error) (func() []string, *dynamicfake.FakeDynamicClient, func() *wfv1.NodeResult) {
	t.Helper()
	tmpl := &wfv1.Template{Name: "pi", Plugin: &wfv1.Plugin{}}
	tmpl.Plugin.Value = json.RawMessage(`{"spark":` + strings.Replace(body, "%s", `,"batchScheduler":"volcano","batchSchedulerOptions":{"queue":"etl"}`, 1) + `}`)
	ts := &wfv1.WorkflowTaskSet{
		ObjectMeta: metav1.ObjectMeta{Name: "wf", Namespace: "ns"},
		Spec:       wfv1.WorkflowTaskSetSpec{Tasks: map[string]wfv1.Template{"wf-1": *tmpl}},
	}
	var mu sync.Mutex
	var writes []string
	record := func(a k8stesting.Action) {
		if a.GetVerb() == "get" || a.GetVerb() == "list" || a.GetVerb() == "watch" || a.GetResource().Resource == "selfsubjectaccessreviews" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		writes = append(writes, a.GetVerb()+" "+a.GetResource().Resource)
	}
	kube := fake.NewClientset()
	kube.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		record(a)
		if a.GetVerb() == "create" && a.GetResource().Resource == "pods" && podErr != nil {
			return true, nil, podErr
		}
		return false, nil, nil
	})
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{volcanoPodGroups: "PodGroupList"})
	dyn.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		record(a)
		if a.GetVerb() == "create" && pgErr != nil {
			return true, nil, pgErr
		}
		if c, ok := a.(k8stesting.CreateAction); ok {
			// The API server gives every object a uid; the fake does not.
			c.GetObject().(metav1.Object).SetUID("pg-uid")
		}
		return false, nil, nil
	})
	core, args := startCore(t, scope.Clients{Kube: kube, Workflows: wffake.NewSimpleClientset(ts), Dynamic: dyn}, tmpl)
	execute := func() *wfv1.NodeResult {
		t.Helper()
		return runPass(t, core, args).Node
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), writes...)
	}, dyn, execute
}

func podGroupOf(t *testing.T, dyn *dynamicfake.FakeDynamicClient) *unstructured.Unstructured {
	t.Helper()
	list, err := dyn.Resource(volcanoPodGroups).Namespace("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("%d PodGroups, want 1", len(list.Items))
	}
	return &list.Items[0]
}

// The PodGroup exists before the driver, which the scheduler needs, and
// then belongs to the driver.
func TestPodGroupIsCreatedBeforeTheDriverAndHandedToIt(t *testing.T) {
	writes, dyn, execute := newPodGroupCore(t, nil, nil)
	if n := execute(); n != nil {
		t.Fatalf("the launching pass offered %+v; want nothing until the next pass", n)
	}
	if n := execute(); n == nil || n.Phase != wfv1.NodePending {
		t.Fatalf("node %+v; want the driver Pending", n)
	}
	got := writes()
	// The PodGroup, the driver, the handover in this order; then the
	// companions, side by side.
	want := []string{"create podgroups", "create pods", "patch podgroups", "create configmaps", "create services"}
	if len(got) != len(want) || strings.Join(got[:3], ", ") != strings.Join(want[:3], ", ") ||
		!slices.Equal(slices.Sorted(slices.Values(got[3:])), want[3:]) {
		t.Errorf("writes %v, want %v (the last two in any order)", got, want)
	}
	pg := podGroupOf(t, dyn)
	if refs := pg.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "Pod" || !strings.HasSuffix(refs[0].Name, "-driver") {
		t.Errorf("PodGroup owners %+v, want the driver", refs)
	}
	if q, _, _ := unstructured.NestedString(pg.Object, "spec", "queue"); q != "etl" {
		t.Errorf("queue %q", q)
	}
}

// Without Volcano's CRD the node fails with what to do, and no driver is
// made that would wait for a PodGroup forever.
func TestMissingPodGroupCRDFailsTheNode(t *testing.T) {
	// What client-go makes of the API server's 404 for a resource it does
	// not serve: NotFound, and an "unexpected server response".
	notFound := apierrors.NewGenericServerResponse(http.StatusNotFound, "POST", volcanoPodGroups.GroupResource(), "", "", 0, true)
	writes, _, execute := newPodGroupCore(t, nil, notFound)
	n := execute()
	want := "SUBMISSION_FAILED: batchScheduler volcano needs Volcano's PodGroup CRD (scheduling.volcano.sh/v1beta1) in the cluster: install Volcano, or remove spark.batchScheduler"
	if n == nil || n.Phase != wfv1.NodeFailed || n.Message != want {
		t.Fatalf("node %+v, want Failed %q", n, want)
	}
	if got := writes(); strings.Join(got, ",") != "create podgroups" {
		t.Errorf("writes %v, want the PodGroup create only", got)
	}
}

// A driver the API server refuses leaves no PodGroup behind.
func TestRefusedDriverWithdrawsItsPodGroup(t *testing.T) {
	quota := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "wf-driver", errorString("exceeded quota"))
	writes, _, execute := newPodGroupCore(t, quota, nil)
	if n := execute(); n == nil || n.Phase != wfv1.NodeFailed || !strings.Contains(n.Message, "exceeded quota") {
		t.Fatalf("node %+v", n)
	}
	want := "create podgroups, create pods, delete podgroups"
	if got := strings.Join(writes(), ", "); got != want {
		t.Errorf("writes %s, want %s", got, want)
	}
}
