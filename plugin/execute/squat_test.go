package execute

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	wffake "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned/fake"
	"github.com/argoproj/argo-workflows/v3/pkg/plugins/executor"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"

	"github.com/sparkplug-io/sparkplug/plugin/nodestatus"
	"github.com/sparkplug-io/sparkplug/plugin/objects"
	"github.com/sparkplug-io/sparkplug/plugin/scope"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// Squatting: someone who may create ConfigMaps, Services or PodGroups in
// the namespace makes one in advance under the name a run will give its
// own (names are a pure function of the workflow's uid, the node and the
// incarnation; the driver ConfigMap's alone has a part drawn at launch).
// The run must not take it: its attempt fails naming the object, and the
// object is left as it was.

// squatEnv is a Core on fake clients whose node wf-1 has not launched yet.
type squatEnv struct {
	core  *Core
	args  executor.ExecuteTemplateArgs
	kube  *fake.Clientset
	dyn   *dynamicfake.FakeDynamicClient
	names objects.Names
	// events are the Events the core recorded.
	events *record.FakeRecorder

	mu     sync.Mutex
	writes []string
}

func newSquatEnv(t *testing.T, extra string, opts ...Options) *squatEnv {
	t.Helper()
	e := &squatEnv{}
	tmpl := templateOf(`{"spark":` + strings.Replace(body, "%s", extra, 1) + `}`)
	ts := &wfv1.WorkflowTaskSet{
		ObjectMeta: metav1.ObjectMeta{Name: "wf", Namespace: "ns"},
		Spec:       wfv1.WorkflowTaskSetSpec{Tasks: map[string]wfv1.Template{"wf-1": *tmpl}},
	}
	note := func(a k8stesting.Action) (bool, runtime.Object, error) {
		if v := a.GetVerb(); v != "get" && v != "list" && v != "watch" && a.GetResource().Resource != "selfsubjectaccessreviews" {
			e.mu.Lock()
			e.writes = append(e.writes, v+" "+a.GetResource().Resource+" "+name(a))
			e.mu.Unlock()
		}
		if c, ok := a.(k8stesting.CreateAction); ok {
			// The API server gives every object a uid; the fake does not.
			o := c.GetObject().(metav1.Object)
			o.SetUID(types.UID("uid-of-" + o.GetName()))
		}
		return false, nil, nil
	}
	e.kube = fake.NewClientset()
	e.kube.PrependReactor("*", "*", note)
	e.dyn = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{volcanoPodGroups: "PodGroupList"})
	e.dyn.PrependReactor("*", "*", note)
	wfs := wffake.NewSimpleClientset(ts)
	e.core, e.args = startCoreWith(t, scope.Clients{Kube: e.kube, Workflows: wfs, Dynamic: e.dyn}, tmpl, append(opts, Options{})[0])
	e.events = record.NewFakeRecorder(100)
	e.core.recorder = e.events
	wf, err := wfs.ArgoprojV1alpha1().Workflows("ns").Get(context.Background(), "wf", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.names = objects.NamesFor(objects.Run{Workflow: spark.WorkflowRef{Name: "wf", Namespace: "ns", UID: "uid-1"},
		NodeID: "wf-1", Attempt: 1, Incarnation: nodestatus.Incarnation(wf)})
	return e
}

func name(a k8stesting.Action) string {
	switch a := a.(type) {
	case k8stesting.CreateAction:
		return a.GetObject().(metav1.Object).GetName()
	case k8stesting.PatchAction:
		return a.GetName()
	case k8stesting.DeleteAction:
		return a.GetName()
	case k8stesting.UpdateAction:
		return a.GetObject().(metav1.Object).GetName()
	}
	return ""
}

// squatterLabels are the labels of the run's objects, which anyone can
// copy.
func squatterLabels() map[string]string {
	return map[string]string{spark.LabelWorkflowUID: "uid-1", spark.LabelNode: objects.NodeLabel("wf-1"), spark.LabelAttempt: "1", spark.LabelManagedBy: spark.ManagedByValue}
}

// failed runs passes until the node reports a failure (the informers
// deliver what the test changed in their own time), and checks that it
// names want.
func (e *squatEnv) failed(t *testing.T, want string) {
	t.Helper()
	var n *wfv1.NodeResult
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n = runPass(t, e.core, e.args).Node; n != nil && n.Phase == wfv1.NodeFailed {
			break
		}
	}
	if n == nil || n.Phase != wfv1.NodeFailed || !strings.Contains(n.Message, want) {
		t.Fatalf("node %+v, want Failed naming %q", n, want)
	}
}

// launched runs passes until the node reports a driver, and returns
// that result.
func (e *squatEnv) launched(t *testing.T) *wfv1.NodeResult {
	t.Helper()
	var n *wfv1.NodeResult
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n = runPass(t, e.core, e.args).Node; n != nil && n.Outputs != nil {
			return n
		}
	}
	t.Fatalf("node %+v, want one reporting a driver", n)
	return nil
}

// touched are the writes that name obj.
func (e *squatEnv) touched(obj string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, w := range e.writes {
		if strings.HasSuffix(w, " "+obj) && !strings.HasPrefix(w, "create ") {
			out = append(out, w)
		}
	}
	return out
}

// A Service made in advance under the run's name, with or without its
// labels (with them it is in the workflow's cache), does not stop the
// node: once the driver exists and its Service's name is found held, that
// driver is deleted and the run launches under names drawn then, which
// nobody can hold; the squatter is left as it was. (For the ConfigMap see
// TestConfigMapSquatter.)
func TestSquattedCompanionMovesTheRunToDrawnNames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra string
		squat func(n objects.Names) metav1.Object
	}{
		{"driver service", "", func(n objects.Names) metav1.Object {
			return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: n.Service, Namespace: "ns"},
				Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "evil"}}}
		}},
		{"ui service", `,"sparkUIOptions":{"servicePort":4041}`, func(n objects.Names) metav1.Object {
			return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: n.UIService, Namespace: "ns"},
				Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "evil"}}}
		}},
	} {
		for _, labelled := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: "", true: " with the run's labels"}[labelled], func(t *testing.T) {
				e := newSquatEnv(t, tc.extra)
				squatter := tc.squat(e.names)
				if labelled {
					squatter.SetLabels(squatterLabels())
				}
				if err := e.kube.Tracker().Add(squatter.(runtime.Object)); err != nil {
					t.Fatal(err)
				}
				n := e.launched(t)
				if param := n.Outputs.Parameters[1]; param.Name != spark.OutputDriverPod || param.Value.String() == e.names.DriverPod || n.Phase != wfv1.NodePending {
					t.Fatalf("node %+v, want Pending from a driver under drawn names, not %s", n, e.names.DriverPod)
				}
				if got := e.touched(squatter.GetName()); len(got) > 0 {
					t.Errorf("the squatter was written: %v", got)
				}
				now, err := e.kube.Tracker().Get(schema.GroupVersionResource{Version: "v1", Resource: "services"}, "ns", squatter.GetName())
				if err != nil {
					t.Fatalf("the squatter is gone: %v", err)
				}
				if !reflect.DeepEqual(now, squatter) {
					t.Errorf("the squatter changed:\n%+v\nwas\n%+v", now, squatter)
				}
				if got := e.touched(e.names.DriverPod); len(got) != 1 || !strings.HasPrefix(got[0], "delete pods") {
					t.Errorf("driver writes %v, want its delete", got)
				}
			})
		}
	}
}

// A driver that runs already when a restarted plugin finds a squatter in
// its ConfigMap's place does not run on with it (a companion the API
// server refuses, it would): it started with the squatter's conf.
func TestSquattedCompanionOfARunningDriverFailsTheAttempt(t *testing.T) {
	e := newSquatEnv(t, "")
	if n := runPass(t, e.core, e.args).Node; n != nil {
		t.Fatalf("the launching pass offered %+v", n)
	}
	ctx := context.Background()
	pods := e.kube.CoreV1().Pods("ns")
	d, err := pods.Get(ctx, e.names.DriverPod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Status.Phase = corev1.PodRunning
	if _, err := pods.UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The ConfigMap swapped for a squatter's while no plugin ran.
	conf := objects.ConfigMapOf(d)
	if err := e.kube.CoreV1().ConfigMaps("ns").Delete(ctx, conf, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	squatter := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: conf, Namespace: "ns", Labels: squatterLabels()}}
	if _, err := e.kube.CoreV1().ConfigMaps("ns").Create(ctx, squatter, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Once the cache shows the squatter and the running driver, a new
	// process checks the companions of the drivers it finds.
	fl := e.core.flowOf("uid-1")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		cm := fl.scope.Cached(squatter)
		if p := fl.scope.Pod(e.names.DriverPod); cm != nil && len(cm.GetOwnerReferences()) == 0 && p != nil && p.Status.Phase == corev1.PodRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cache does not show the squatter")
		}
	}
	e.core.companions.mu.Lock()
	e.core.companions.m = nil
	e.core.companions.mu.Unlock()
	e.failed(t, "ConfigMap "+conf+" exists and is not this run's")
	if _, err := pods.Get(ctx, e.names.DriverPod, metav1.GetOptions{}); err == nil {
		t.Error("the driver that runs with a squatter's ConfigMap was not deleted")
	}
}

// A PodGroup made in advance under the run's name fails the attempt
// before any driver is made, and is neither patched nor deleted.
func TestSquattedPodGroupFailsTheAttempt(t *testing.T) {
	e := newSquatEnv(t, `,"batchScheduler":"volcano"`)
	squatter := &unstructured.Unstructured{}
	squatter.SetAPIVersion("scheduling.volcano.sh/v1beta1")
	squatter.SetKind("PodGroup")
	squatter.SetName(e.names.PodGroup)
	squatter.SetNamespace("ns")
	squatter.SetLabels(squatterLabels())
	squatter.SetUID("squatter-uid")
	if err := unstructured.SetNestedField(squatter.Object, "evil-queue", "spec", "queue"); err != nil {
		t.Fatal(err)
	}
	if err := e.dyn.Tracker().Add(squatter); err != nil {
		t.Fatal(err)
	}
	e.failed(t, "PodGroup "+e.names.PodGroup+" exists and is not this run's: it is not owned by Workflow wf (uid uid-1)")
	if got := e.touched(e.names.PodGroup); len(got) > 0 {
		t.Errorf("the squatter was written: %v", got)
	}
	if got := e.touched(e.names.DriverPod); len(got) > 0 {
		t.Errorf("driver writes %v, want none", got)
	}
	if e.made("pods") {
		t.Error("a driver was made")
	}
}

// made reports whether an object of resource was created.
func (e *squatEnv) made(resource string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, w := range e.writes {
		if strings.HasPrefix(w, "create "+resource+" ") {
			return true
		}
	}
	return false
}

// The run's own PodGroup is handed to its driver by a patch that names
// the group's uid, so it changes that very object.
func TestPodGroupHandoverNamesItsUID(t *testing.T) {
	e := newSquatEnv(t, `,"batchScheduler":"volcano"`)
	var patches []string
	e.dyn.PrependReactor("patch", "podgroups", func(a k8stesting.Action) (bool, runtime.Object, error) {
		patches = append(patches, string(a.(k8stesting.PatchAction).GetPatch()))
		return false, nil, nil
	})
	runPass(t, e.core, e.args)
	if len(patches) != 1 {
		t.Fatalf("%d PodGroup patches, want 1", len(patches))
	}
	var p struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal([]byte(patches[0]), &p); err != nil || p.Metadata.UID != "uid-of-"+e.names.PodGroup {
		t.Errorf("patch %s (%v), want it to name the group's uid", patches[0], err)
	}
}

// startedBadly makes the node's driver one that cannot start (its image
// cannot be pulled): the next pass stops it.
func (e *squatEnv) startedBadly(t *testing.T) {
	t.Helper()
	if n := runPass(t, e.core, e.args).Node; n != nil {
		t.Fatalf("the launching pass offered %+v", n)
	}
	ctx := context.Background()
	pods := e.kube.CoreV1().Pods("ns")
	d, err := pods.Get(ctx, e.names.DriverPod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Status.Phase = corev1.PodPending
	d.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: spark.DriverContainerName,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image"}}}}
	if _, err := pods.UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A stopped driver's tombstone is a ConfigMap created for it, owned by the
// Workflow: the plugin changes no ConfigMap (and needs no right to).
func TestStopCreatesItsTombstone(t *testing.T) {
	e := newSquatEnv(t, "")
	e.startedBadly(t)
	e.failed(t, "ImagePullBackOff")
	cm, err := e.kube.CoreV1().ConfigMaps("ns").Get(context.Background(), e.names.Tombstone, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("tombstone: %v", err)
	}
	if refs := cm.OwnerReferences; len(refs) != 1 || refs[0].Kind != "Workflow" || refs[0].UID != "uid-1" || cm.Annotations[spark.AnnotationStopped] != "CannotStart" ||
		cm.Labels[spark.LabelWorkflowUID] != "uid-1" || cm.Annotations[spark.AnnotationDriver] != e.names.DriverPod {
		t.Errorf("tombstone owners %+v labels %v annotations %v", refs, cm.Labels, cm.Annotations)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, w := range e.writes {
		if strings.HasPrefix(w, "patch configmaps") || strings.HasPrefix(w, "update configmaps") {
			t.Errorf("a ConfigMap was changed: %s", w)
		}
	}
}

// A squatter in the tombstone's place is left as it is and said in an
// Event; the driver is stopped all the same.
func TestSquattedTombstoneStillStopsTheDriver(t *testing.T) {
	e := newSquatEnv(t, "")
	squatter := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: e.names.Tombstone, Namespace: "ns", Labels: squatterLabels(),
		Annotations: map[string]string{spark.AnnotationStopped: "Timeout"}}}
	if err := e.kube.Tracker().Add(squatter); err != nil {
		t.Fatal(err)
	}
	e.startedBadly(t)
	e.failed(t, "ImagePullBackOff")
	if _, err := e.kube.CoreV1().Pods("ns").Get(context.Background(), e.names.DriverPod, metav1.GetOptions{}); err == nil {
		t.Error("the driver was not stopped")
	}
	if got := e.touched(e.names.Tombstone); len(got) > 0 {
		t.Errorf("the squatter was written: %v", got)
	}
	now, err := e.kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("configmaps"), "ns", e.names.Tombstone)
	if err != nil || !reflect.DeepEqual(now, squatter) {
		t.Errorf("the squatter changed or went: %+v, %v", now, err)
	}
	found := false
	for len(e.events.Events) > 0 {
		ev := <-e.events.Events
		found = found || strings.HasPrefix(ev, "Warning "+spark.ReasonObjectRefused) && strings.Contains(ev, "ConfigMap "+e.names.Tombstone+" exists and is not this run's")
	}
	if !found {
		t.Errorf("no %s Event names the squatter", spark.ReasonObjectRefused)
	}
}

// The driver's ConfigMap is named at launch with a part nobody can guess
// (objects.Run.ConfKey), so that none can be made before the driver, which
// mounts it at once and would run its spark.properties (JVM options,
// jars). One made in advance under the name a run had before that part
// (<prefix>-conf), labelled and owned as the run's would be, is neither
// mounted nor touched: the launch goes on. One made in the moment between
// the driver's create and its ConfigMap's (its maker watched the driver
// appear) fails the attempt, naming it, and the driver is deleted.
func TestConfigMapSquatter(t *testing.T) {
	t.Run("made in advance", func(t *testing.T) {
		e := newSquatEnv(t, "")
		squatter := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: e.names.LegacyConfigMap(), Namespace: "ns", Labels: squatterLabels(),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: e.names.DriverPod, UID: "guessed"}}},
			Data: map[string]string{spark.PropertiesFile: "spark.driver.extraJavaOptions=-javaagent:/evil.jar\n"}}
		if err := e.kube.Tracker().Add(squatter); err != nil {
			t.Fatal(err)
		}
		if n := runPass(t, e.core, e.args).Node; n != nil {
			t.Fatalf("the launching pass offered %+v", n)
		}
		ctx := context.Background()
		d, err := e.kube.CoreV1().Pods("ns").Get(ctx, e.names.DriverPod, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("no driver: %v", err)
		}
		conf := objects.ConfigMapOf(d)
		if key, ok := strings.CutPrefix(conf, e.names.LegacyConfigMap()+"-"); !ok || len(key) != 8 {
			t.Fatalf("the driver mounts ConfigMap %q, want %s-<8 random hex>", conf, e.names.LegacyConfigMap())
		}
		cm, err := e.kube.CoreV1().ConfigMaps("ns").Get(ctx, conf, metav1.GetOptions{})
		if err != nil || len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].UID != d.UID || cm.Data[spark.PropertiesFile] == squatter.Data[spark.PropertiesFile] {
			t.Fatalf("the driver's ConfigMap %s (%v) is not the run's: %+v", conf, err, cm)
		}
		if got := e.touched(squatter.Name); len(got) > 0 {
			t.Errorf("the squatter was written: %v", got)
		}
		if now, err := e.kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("configmaps"), "ns", squatter.Name); err != nil || !reflect.DeepEqual(now, squatter) {
			t.Errorf("the squatter changed or went: %+v, %v", now, err)
		}
	})
	t.Run("made as the driver appears", func(t *testing.T) {
		e := newSquatEnv(t, "")
		var squatter *corev1.ConfigMap
		e.kube.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
			d := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
			squatter = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: objects.ConfigMapOf(d), Namespace: "ns", Labels: squatterLabels()}}
			return false, nil, e.kube.Tracker().Add(squatter)
		})
		e.failed(t, "ConfigMap ")
		if squatter == nil {
			t.Fatal("no driver was made")
		}
		// Squatted again under the names drawn after the first: the
		// attempt fails, naming the second driver's ConfigMap.
		e.failed(t, "ConfigMap "+squatter.Name+" exists and is not this run's: it is not owned by Pod ")
		if got := e.touched(squatter.Name); len(got) > 0 {
			t.Errorf("the squatter was written: %v", got)
		}
		if got := e.touched(e.names.DriverPod); len(got) != 1 || !strings.HasPrefix(got[0], "delete pods") {
			t.Errorf("driver writes %v, want its delete", got)
		}
	})
}

// A launch reads nothing before it writes: the driver, then its ConfigMap
// and Service, three requests (the node's result is written with others,
// in the TaskSet).
func TestLaunchIsThreeWrites(t *testing.T) {
	e := newSquatEnv(t, "")
	var reads []string
	e.kube.PrependReactor("get", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		reads = append(reads, a.GetResource().Resource+" "+a.(k8stesting.GetAction).GetName())
		return false, nil, nil
	})
	if n := runPass(t, e.core, e.args).Node; n != nil {
		t.Fatalf("the launching pass offered %+v", n)
	}
	e.mu.Lock()
	writes := slices.Clone(e.writes)
	e.mu.Unlock()
	slices.Sort(writes[min(1, len(writes)):]) // the companions are made side by side
	want := []string{"create pods " + e.names.DriverPod, "create configmaps", "create services " + e.names.Service}
	if len(writes) != 3 || writes[0] != want[0] || !strings.HasPrefix(writes[1], want[1]+" ") || writes[2] != want[2] {
		t.Errorf("writes %q, want %q", writes, want)
	}
	if len(reads) > 0 {
		t.Errorf("the launch read %q", reads)
	}
}

// On a kubelet, a stopped driver lingers while it terminates, and the
// kubelet ends its container that never started as ContainerStatusUnknown
// (exit 137). Until the stop's result is written (the writer holds it for
// its gap), the tombstone, not that status, says why the attempt ended.
func TestStoppedDriverTerminatingKeepsTheStopReason(t *testing.T) {
	e := newSquatEnv(t, "", Options{WriteGap: time.Hour})
	e.startedBadly(t)
	ctx := context.Background()
	d, err := e.kube.CoreV1().Pods("ns").Get(ctx, e.names.DriverPod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.failed(t, "ImagePullBackOff")
	now := metav1.Now()
	d.ResourceVersion, d.DeletionTimestamp = "", &now
	d.Status.Phase = corev1.PodFailed
	d.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: spark.DriverContainerName,
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "ContainerStatusUnknown",
			Message: "The container could not be located when the pod was terminated"}}}}
	if err := e.kube.Tracker().Add(d); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n := runPass(t, e.core, e.args).Node; n == nil || !strings.Contains(n.Message, "ImagePullBackOff") {
			t.Fatalf("node %+v once the stopped driver terminates, want the stop's ImagePullBackOff", n)
		}
	}
}
